import { createPayoutService, type PayoutService } from "../accounts/payout.ts";
import { type AccountsService, createAccountsService } from "../accounts/service.ts";
import { createAccountStore } from "../accounts/store.ts";
import { defaultSpeed } from "../config.ts";
import { openStore, storeLocationFrom } from "../db/open.ts";
import { businessJson, createBusinessService } from "../documents/business.ts";
import { createBusinessStore } from "../documents/store.ts";
import { createEventStore } from "../events/store.ts";
import { systemClock } from "../lib/clock.ts";
import { ValidationError } from "../lib/errors.ts";
import { randomIds } from "../lib/ids.ts";
import { type FlagSpec, type ParsedArgs, parseArgs, UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;
type Service = AccountsService & PayoutService & { business: ReturnType<typeof createBusinessService> };

interface Command {
  flags: FlagSpec;
  /** The positional arguments it takes, all required (named in the usage line). */
  positionals?: string[];
  run(service: Service, args: ParsedArgs, env: Env): unknown;
}

const text = { type: "string" } as const;

/**
 * `account create|list|show|set-payout|set-speed|set-business` and `key create|list|revoke`: they share the
 * data dir with a running server.
 */
const COMMANDS: Record<string, Command> = {
  "account create": {
    flags: { name: text, "payout-address": text, "fee-bps": text },
    async run(service, { flags }, env) {
      const feeText = flags.get("fee-bps") as string | undefined;
      if (feeText !== undefined && !/^\d+$/.test(feeText))
        throw new UsageError("--fee-bps must be a whole number from 0 to 10000");
      const feeBps = feeText === undefined ? undefined : Number(feeText);
      if (feeBps && !env.STABLEGATE_FEE_RECIPIENT) {
        throw new UsageError("--fee-bps above 0 needs STABLEGATE_FEE_RECIPIENT set, here and for the server");
      }
      const { account, api_key } = await service.createAccount({
        name: required(flags, "name"),
        payoutAddress: required(flags, "payout-address"),
        feeBps,
      });
      return { account, api_key };
    },
  },
  "account list": { flags: {}, run: (service) => service.listAccounts() },
  "account show": {
    flags: {},
    positionals: ["ACCOUNT_ID"],
    run: (service, { positionals }) => service.showAccount(positionals[0]!),
  },
  "account set-payout": {
    flags: {},
    positionals: ["ACCOUNT_ID", "ADDRESS"],
    run: (service, { positionals }) => service.setPayoutAddress(positionals[0]!, positionals[1]!),
  },
  "account set-speed": {
    flags: {},
    positionals: ["ACCOUNT_ID", "fast|standard|final|default"],
    run: (service, { positionals }) => service.setSpeed(positionals[0]!, positionals[1]!),
  },
  "account set-business": {
    flags: {
      "legal-name": text,
      "address-line": { type: "string", multiple: true },
      "tax-id": text,
      "support-email": text,
    },
    positionals: ["ACCOUNT_ID"],
    async run(service, { positionals, flags }) {
      if (flags.size === 0)
        throw new UsageError("give at least one of --legal-name, --address-line, --tax-id, --support-email");
      const accountId = positionals[0]!;
      const details = await service.business.setText(accountId, {
        legalName: flags.get("legal-name") as string | undefined,
        addressLines: flags.get("address-line") as string[] | undefined,
        taxId: flags.get("tax-id") as string | undefined,
        supportEmail: flags.get("support-email") as string | undefined,
      });
      return businessJson(accountId, details);
    },
  },
  "key create": {
    flags: { account: text },
    run: (service, { flags }) => service.createKey(required(flags, "account")),
  },
  "key list": {
    flags: { account: text },
    run: (service, { flags }) => service.listKeys(flags.get("account") as string | undefined),
  },
  "key revoke": {
    flags: {},
    positionals: ["KEY_ID"],
    run: (service, { positionals }) => service.revokeKey(positionals[0]!),
  },
};

export async function runAccountCommand(group: "account" | "key", argv: string[], env: Env): Promise<unknown> {
  const [action, ...rest] = argv;
  const name = `${group} ${action ?? ""}`.trim();
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command: ${name}`);
  const wanted = command.positionals ?? [];
  const args = parseArgs(rest, command.flags, wanted.length);
  if (args.positionals.length < wanted.length) throw new UsageError(`usage: stablegate ${name} ${wanted.join(" ")}`);
  // Read before the store is opened: a bad STABLEGATE_SPEED stops the command as it stops the server.
  const deps = { clock: systemClock, ids: randomIds, defaultSpeed: defaultSpeed(env) };
  const db = await openStore(storeLocationFrom(env));
  try {
    const store = createAccountStore(db);
    const service: Service = {
      ...createAccountsService({ ...deps, store }),
      ...createPayoutService({ ...deps, store, events: createEventStore(db, randomIds) }),
      business: createBusinessService({
        store: createBusinessStore(db),
        clock: deps.clock,
        accountExists: async (id) => (await store.findAccount(id)) != null,
      }),
    };
    return await command.run(service, args, env);
  } catch (error) {
    // A bad value on the command line is a usage mistake (exit 2), like a bad flag.
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  } finally {
    await db.close();
  }
}

export function required(flags: ParsedArgs["flags"], name: string): string {
  const value = flags.get(name);
  if (typeof value !== "string") throw new UsageError(`--${name} is required`);
  return value;
}
