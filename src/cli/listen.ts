/**
 * `stablegate listen`: follows an account's events on a running server (this machine or another)
 * and forwards each to a local URL, signed as real webhook deliveries are, so a merchant can
 * develop a webhook handler without a public https endpoint.
 */
import { EVENT_TYPES } from "../events/service.ts";
import { randomIds } from "../lib/ids.ts";
import { signatureHeaders } from "../webhooks/signature.ts";
import { parseArgs, UsageError } from "./args.ts";
import { followEvents, type RemoteEvent } from "./event-source.ts";

const FLAGS = {
  url: { type: "string" },
  key: { type: "string" },
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

export function parseListenArgs(argv: string[]): ListenOptions {
  const { flags } = parseArgs(argv, FLAGS, 0);
  const required = (name: string): string => {
    const value = flags.get(name);
    if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
    return value;
  };
  const url = httpUrl("--url", required("url"));
  const key = required("key");
  const forwardTo = httpUrl("--forward-to", required("forward-to"));
  let types: Set<string> | null = null;
  const wanted = flags.get("events");
  if (typeof wanted === "string") {
    types = new Set(wanted.split(",").map((type) => type.trim()));
    for (const type of types)
      if (!EVENT_TYPES.includes(type))
        throw new UsageError(`--events: unknown event type "${type}" (one of ${EVENT_TYPES.join(", ")})`);
  }
  return { url, key, forwardTo, types };
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
export async function runListen(argv: string[]): Promise<number> {
  const opts = parseListenArgs(argv);
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
      console.log(`${new Date().toISOString()}  ${event.type}  ${event.id}  ${answer}`);
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return 0;
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
