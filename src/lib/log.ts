import { isoMillis } from "./clock.ts";

/** JSON lines on stdout. Callers pass structured fields; secrets are never handed to it. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Written by the logger itself; a field of the same name is kept as `field_<name>` instead. */
const RESERVED = new Set(["time", "level", "msg"]);
/** How many causes of an error are logged (a chain can be long, or a cycle). */
const MAX_CAUSES = 5;

export function createLogger(
  level: LogLevel = "info",
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const line: Record<string, unknown> = { time: isoMillis(Date.now()), level: lvl, msg };
    for (const [key, value] of Object.entries(fields ?? {})) line[RESERVED.has(key) ? `field_${key}` : key] = value;
    try {
      write(`${JSON.stringify(line, jsonSafe)}\n`);
    } catch {
      // A line that cannot be written (stdout gone) is dropped: logging never takes down the work it describes.
    }
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { ...describeError(value), stack: stackFrames(value) };
  return value;
}

/**
 * An error's name and message, and its causes' in turn. Nothing else of it: other properties
 * can carry anything (a request, a config). A viem error's full message quotes the RPC URL,
 * which may hold a provider key, so its short message is used instead.
 */
function describeError(error: Error, causesAbove = 0): Record<string, unknown> {
  const described: Record<string, unknown> = {
    name: error.name,
    message: (error as { shortMessage?: unknown }).shortMessage ?? error.message,
  };
  const cause = error.cause;
  if (cause === undefined) return described;
  if (causesAbove === MAX_CAUSES) described.cause = "(more causes not shown)";
  else if (cause instanceof Error) described.cause = describeError(cause, causesAbove + 1);
  else if (cause === null || ["string", "number", "boolean"].includes(typeof cause)) described.cause = cause;
  else described.cause = `(${typeof cause})`;
  return described;
}

/** Where it was thrown, without the first line, which repeats the message. */
function stackFrames(error: Error): string | undefined {
  return error.stack
    ?.split("\n")
    .filter((line) => /^\s+at /.test(line))
    .join("\n");
}

export const silentLogger: Logger = createLogger("error", () => {});
