import { Elysia } from "elysia";
import type { AccountsService } from "../accounts/service.ts";

/**
 * Resolves the bearer key to its account before validation runs, so an unauthenticated
 * request is a 401 whatever its body. Scoped so that only routes that `.use()` it require a key.
 */
export function authPlugin(accounts: AccountsService) {
  return new Elysia({ name: "stablegate-auth" }).derive({ as: "scoped" }, ({ request }) => ({
    account: accounts.authenticate(request.headers.get("authorization")),
  }));
}

export type AuthPlugin = ReturnType<typeof authPlugin>;
