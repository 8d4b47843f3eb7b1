import type { AccountsService } from "../accounts/service.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import { createUsersService } from "./service.ts";
import { createUserStore } from "./store.ts";

/** Dashboard users and their sign-in sessions; a user belongs to an account that must exist. */
export function createUsers(
  w: Pick<Plumbing, "db" | "clock" | "ids"> & { accounts: Pick<AccountsService, "findAccount"> },
) {
  return createUsersService({
    store: createUserStore(w.db),
    clock: w.clock,
    ids: w.ids,
    accountExists: async (id) => (await w.accounts.findAccount(id)) !== null,
  });
}
