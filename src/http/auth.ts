import { Elysia } from "elysia";
import type { Account, AccountsService } from "../accounts/service.ts";

export type Authenticate = (request: Request) => Promise<Account>;

/**
 * Resolves a request's bearer key to its account, once per request: the body parser calls it
 * first for merchant routes (so a request without a valid key is 401 whatever its body,
 * malformed JSON included), and the route's `account` reuses the answer. A payment create
 * confirms its key in its own insert (src/payments/create-once.ts), so it may take the key from
 * the cache on PostgreSQL too (src/accounts/key-cache.ts).
 */
export function createAuthenticate(accounts: AccountsService): Authenticate {
  const resolved = new WeakMap<Request, Account>();
  return async (request) => {
    let account = resolved.get(request);
    if (!account) {
      const confirmedByStatement = request.method === "POST" && new URL(request.url).pathname === "/api/v1/payments";
      account = await accounts.authenticate(request.headers.get("authorization"), { confirmedByStatement });
      resolved.set(request, account);
    }
    return account;
  };
}

/** Gives routes that `.use()` it an `account`; scoped, so only those routes require a key. */
export function authPlugin(authenticate: Authenticate) {
  return new Elysia({ name: "stablegate-auth" }).derive({ as: "scoped" }, async ({ request }) => ({
    account: await authenticate(request),
  }));
}

export type AuthPlugin = ReturnType<typeof authPlugin>;
