import { createAccountStore } from "../accounts/store.ts";
import type { Db } from "../db/index.ts";
import { openStore, storeLocationFrom } from "../db/open.ts";
import { systemClock } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { randomIds } from "../lib/ids.ts";
import { createUsersService, type UsersService } from "../users/service.ts";
import { createUserStore } from "../users/store.ts";
import { required } from "./accounts.ts";
import { type FlagSpec, type ParsedArgs, parseArgs, UsageError } from "./args.ts";

type Env = Record<string, string | undefined>;

interface Command {
  flags: FlagSpec;
  positional?: string;
  run(service: UsersService, args: ParsedArgs, password: () => Promise<string | undefined>): unknown;
}

const text = { type: "string" } as const;
const passwordStdin = { "password-stdin": { type: "boolean" } } as const;

/** `user create|list|reset-password|delete`: dashboard users, managed beside a running server. */
const COMMANDS: Record<string, Command> = {
  "user create": {
    flags: { account: text, email: text, ...passwordStdin },
    async run(service, { flags }, password) {
      const accountId = required(flags, "account");
      const email = required(flags, "email");
      try {
        return await service.createUser({ accountId, email, password: await password() });
      } catch (error) {
        // The account is named on the command line: an unknown one is a usage mistake.
        if (error instanceof NotFoundError) throw new UsageError(`--account: ${error.message}`);
        throw error;
      }
    },
  },
  "user list": {
    flags: { account: text },
    run: (service, { flags }) => service.listUsers(flags.get("account") as string | undefined),
  },
  "user reset-password": {
    flags: passwordStdin,
    positional: "USER_ID",
    run: async (service, { positionals }, password) => service.resetPassword(positionals[0]!, await password()),
  },
  "user delete": {
    flags: {},
    positional: "USER_ID",
    run: (service, { positionals }) => service.deleteUser(positionals[0]!),
  },
};

/**
 * Runs one `user` command and returns what it prints. With --password-stdin the password is the
 * first line of `stdin` (a trailing newline, as `echo` adds, is not part of it).
 */
export async function runUserCommand(
  argv: string[],
  env: Env,
  stdin: () => Promise<string> = () => Bun.stdin.text(),
): Promise<unknown> {
  const [action, ...rest] = argv;
  const name = `user ${action ?? ""}`.trim();
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command: ${name}`);
  const args = parseArgs(rest, command.flags, command.positional ? 1 : 0);
  if (command.positional && args.positionals.length === 0)
    throw new UsageError(`usage: stablegate ${name} ${command.positional}`);
  const password = async () => {
    if (!args.flags.get("password-stdin")) return undefined;
    const line = (await stdin()).split(/\r?\n/)[0] ?? "";
    if (!line) throw new UsageError("--password-stdin: no password on standard input");
    return line;
  };
  const db = await openStore(storeLocationFrom(env));
  try {
    return await command.run(usersService(db), args, password);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  } finally {
    await db.close();
  }
}

export function usersService(db: Db): UsersService {
  const accounts = createAccountStore(db);
  return createUsersService({
    store: createUserStore(db),
    clock: systemClock,
    ids: randomIds,
    accountExists: async (id) => (await accounts.findAccount(id)) !== null,
  });
}
