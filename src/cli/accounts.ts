import { createAccountStore } from "../accounts/store.ts";
import { createAccountsService } from "../accounts/service.ts";
import { dataDirFrom } from "../config.ts";
import { openDb } from "../db/index.ts";
import { systemClock } from "../lib/clock.ts";
import { randomIds } from "../lib/ids.ts";
import { UsageError, parseArgs } from "./args.ts";

type Env = Record<string, string | undefined>;

/** `account create` and `key create|list|revoke`: they share the data dir with a running server. */
export function runAccountCommand(group: "account" | "key", argv: string[], env: Env): unknown {
  const { positionals, flags } = parseArgs(argv);
  const [action, target] = positionals;
  const db = openDb(dataDirFrom(env));
  try {
    const service = createAccountsService({ store: createAccountStore(db), clock: systemClock, ids: randomIds });
    if (group === "account" && action === "create") {
      const name = required(flags, "name");
      const payoutAddress = required(flags, "payout-address");
      const feeText = flags.get("fee-bps");
      if (feeText !== undefined && !/^\d+$/.test(feeText)) throw new UsageError("--fee-bps must be a whole number from 0 to 10000");
      const feeBps = feeText === undefined ? undefined : Number(feeText);
      if (feeBps && !env.STABLEGATE_FEE_RECIPIENT) {
        throw new UsageError("--fee-bps above 0 needs STABLEGATE_FEE_RECIPIENT set, here and for the server");
      }
      const { account, api_key } = service.createAccount({ name, payoutAddress, feeBps });
      return { account, api_key };
    }
    if (group === "key" && action === "create") return service.createKey(required(flags, "account"));
    if (group === "key" && action === "list") return service.listKeys(flags.get("account"));
    if (group === "key" && action === "revoke") {
      if (!target) throw new UsageError("usage: stablegate key revoke KEY_ID");
      return service.revokeKey(target);
    }
    throw new UsageError(`unknown command: ${group} ${action ?? ""}`.trim());
  } finally {
    db.close();
  }
}

function required(flags: Map<string, string>, name: string): string {
  const value = flags.get(name);
  if (value === undefined || value === "true") throw new UsageError(`--${name} is required`);
  return value;
}
