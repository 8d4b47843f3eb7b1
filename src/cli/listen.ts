/**
 * `stablegate listen`: follows an account's events on a running server (this machine or another)
 * and forwards each to a local URL, signed as real webhook deliveries are, so a merchant can
 * develop a webhook handler without a public https endpoint.
 */
import { EVENT_TYPES } from "../events/service.ts";
import { API_KEY, randomIds } from "../lib/ids.ts";
import { signatureHeaders } from "../webhooks/signature.ts";
import { parseArgs, UsageError } from "./args.ts";
import { followEvents, type RemoteEvent } from "./event-source.ts";

const FLAGS = {
  url: { type: "string" },
  "key-stdin": { type: "boolean" },
  "forward-to": { type: "string" },
  events: { type: "string" },
} as const;

/** As long as a real delivery waits for the merchant's answer. */
const FORWARD_TIMEOUT_MS = 15_000;

export interface ListenOptions {
  url: string;
  key: string;
  forwardTo: string;
  /** Event types to forward; null: all. */
  types: Set<string> | null;
}

/** Where the key may come from: never the command line, which `ps` and shell history show. */
export interface KeySources {
  env: Record<string, string | undefined>;
  /** Whether standard input is a terminal (a person typing), rather than a pipe or a file. */
  stdinIsTty: boolean;
  readStdin: () => Promise<string>;
}

const KEY_ON_COMMAND_LINE = "a key on the command line shows in `ps` and shell history";
const HOW_TO_PASS_THE_KEY =
  "set STABLEGATE_API_KEY, or pipe the key to standard input (--key-stdin), e.g. " +
  "`stablegate listen --key-stdin ... < key.txt`";

export async function parseListenArgs(argv: string[], sources: KeySources): Promise<ListenOptions> {
  // Refused before anything else, and without repeating the value: it is a secret.
  if (argv.some((arg) => arg === "--key" || arg.startsWith("--key=")))
    throw new UsageError(`--key is no longer accepted: ${KEY_ON_COMMAND_LINE}; ${HOW_TO_PASS_THE_KEY}`);
  const { flags } = parseArgs(argv, FLAGS, 0);
  const required = (name: string): string => {
    const value = flags.get(name);
    if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
    return value;
  };
  const url = serverUrl(required("url"));
  const forwardTo = httpUrl("--forward-to", required("forward-to"));
  let types: Set<string> | null = null;
  const wanted = flags.get("events");
  if (typeof wanted === "string") {
    types = new Set(wanted.split(",").map((type) => type.trim()));
    for (const type of types)
      if (!EVENT_TYPES.includes(type))
        throw new UsageError(`--events: unknown event type "${type}" (one of ${EVENT_TYPES.join(", ")})`);
  }
  const key = await apiKey(flags.get("key-stdin") === true, sources);
  return { url, key, forwardTo, types };
}

/**
 * The key from standard input with --key-stdin, else STABLEGATE_API_KEY, else standard input
 * when it is piped. Its first line, without the newline `echo` adds; checked for shape here, so a
 * wrong paste is a usage mistake rather than a 401 after connecting.
 */
async function apiKey(fromStdin: boolean, sources: KeySources): Promise<string> {
  const env = sources.env.STABLEGATE_API_KEY?.trim();
  let key: string;
  let where: string;
  if (fromStdin || (!env && !sources.stdinIsTty)) {
    key = ((await sources.readStdin()).split(/\r?\n/)[0] ?? "").trim();
    where = "the key on standard input";
    if (!key) throw new UsageError(`no API key on standard input; ${HOW_TO_PASS_THE_KEY}`);
  } else if (env) {
    key = env;
    where = "STABLEGATE_API_KEY";
  } else throw new UsageError(`no API key: ${HOW_TO_PASS_THE_KEY}`);
  if (!API_KEY.test(key)) throw new UsageError(`${where} is not an API key (sk_live_ and 32 letters or digits)`);
  return key;
}

/**
 * The server to follow. The key and customers' data travel on this connection, so plain http is
 * refused unless it stays on this machine.
 */
function serverUrl(text: string): string {
  const href = httpUrl("--url", text);
  const url = new URL(href);
  if (url.protocol === "http:" && !isLoopback(url.hostname))
    throw new UsageError(
      `--url: http:// would send the API key and customer data unencrypted; use https://, ` +
        "or http:// only to this machine (localhost, 127.0.0.1, [::1])",
    );
  return href;
}

/** localhost, 127.0.0.0/8 or ::1, as the URL parser normalises them (`127.1` is 127.0.0.1). */
function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function httpUrl(flag: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${flag} must be an http:// or https:// URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`${flag} must be an http:// or https:// URL`);
  return url.href;
}

/**
 * Runs until Ctrl-C or SIGTERM (exit 0) or a refusal retrying cannot fix, such as a bad key
 * (thrown). Prints the signing secret first, then one line per event on stdout; connection
 * news goes to stderr.
 */
export async function runListen(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const opts = await parseListenArgs(argv, {
    env,
    stdinIsTty: process.stdin.isTTY === true,
    readStdin: () => Bun.stdin.text(),
  });
  const secret = randomIds.webhookSecret();
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  console.log(`Forwarding events from ${opts.url} to ${opts.forwardTo}`);
  console.log(`Webhook signing secret: ${secret}`);
  try {
    const events = followEvents({
      url: opts.url,
      key: opts.key,
      signal: stop.signal,
      notice: (line) => console.error(`${new Date().toISOString()}  ${line}`),
    });
    for await (const event of events) {
      if (opts.types && !opts.types.has(event.type)) continue;
      const answer = await forward(opts.forwardTo, secret, event, stop.signal);
      const about = eventSubject(event.payload);
      console.log(`${new Date().toISOString()}  ${event.type}  ${event.id}  ${about ? `${about}  ` : ""}${answer}`);
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return 0;
}

/**
 * What a payment or refund event is about, for its line: the object's id, (a refund's) payment,
 * amount and status, so a merchant can follow a refund without opening each payload. Null for
 * other events, and for a payload it cannot read (the line still shows the event).
 */
export function eventSubject(payload: string): string | null {
  let data: { payment?: Record<string, unknown>; refund?: Record<string, unknown> } | undefined;
  try {
    data = JSON.parse(payload)?.data;
  } catch {
    return null;
  }
  const text = (value: unknown) => (typeof value === "string" ? value : "?");
  const refund = data?.refund;
  if (refund)
    return `${text(refund.id)}  payment ${text(refund.payment)}  ${text(refund.amount)} USDC  ${text(refund.status)}`;
  const payment = data?.payment;
  if (payment) return `payment ${text(payment.id)}  ${text(payment.amount)} USDC  ${text(payment.status)}`;
  return null;
}

/** POSTs one event as a webhook delivery would; returns the local answer as the line shows it. */
async function forward(target: string, secret: string, event: RemoteEvent, signal: AbortSignal): Promise<string> {
  const headers = signatureHeaders(secret, event.id, Math.floor(Date.now() / 1000), event.payload);
  try {
    const res = await fetch(target, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "user-agent": "stablegate-listen" },
      body: event.payload,
      redirect: "manual",
      signal: AbortSignal.any([signal, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    });
    await res.body?.cancel();
    return `[${res.status}]`;
  } catch (error) {
    return `[error: ${(error as Error).message}]`;
  }
}
