import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { errorMessage } from "../chain/rpc-errors.ts";
import { assertOutsideTransaction } from "../db/transaction-scope.ts";
import { checkWebhookUrl, type Resolver } from "./url-guard.ts";

export interface SendResult {
  status: number | null;
  error: string | null;
  durationMs: number;
  retryAfter: string | null;
}

export interface SendOptions {
  resolve?: Resolver;
  allowPrivate: boolean;
  timeoutMs: number;
  /** Aborting gives up the send at once (shutdown). */
  signal?: AbortSignal;
}

/** At most this much of a response is read; the rest is dropped with the connection. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs one webhook. The host is resolved and checked again here, and the connection goes to
 * the checked address (TLS name and Host header stay the hostname), so a DNS answer that
 * changed since registration cannot reach a private address. Redirects are not followed. Never
 * inside a database transaction: the receiver would hold its locks for as long as it takes.
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  assertOutsideTransaction("a webhook send");
  const started = performance.now();
  const done = (partial: Omit<SendResult, "durationMs">): SendResult => ({
    ...partial,
    durationMs: Math.round(performance.now() - started),
  });
  let target: { url: URL; addresses: string[] };
  try {
    target = await withTimeout(
      checkWebhookUrl(url, { resolve: options.resolve, allowPrivate: options.allowPrivate }),
      options.timeoutMs,
    );
  } catch (error) {
    return done({ status: null, error: `refused before sending: ${errorMessage(error)}`, retryAfter: null });
  }
  const address = target.addresses[0]!;
  const family = isIP(address) === 6 ? 6 : 4;
  const client = target.url.protocol === "https:" ? https : http;

  return new Promise<SendResult>((resolvePromise) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise(done(result));
    };
    const request = client.request(
      target.url,
      {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "user-agent": "Stablegate-Webhooks/1",
        },
        // Pin the connection to the address that passed the check.
        lookup: ((_host, opts, callback) =>
          opts?.all ? callback(null, [{ address, family }]) : callback(null, address, family)) as LookupFunction,
        agent: false,
        signal: options.signal,
      },
      (response) => {
        let received = 0;
        response.on("data", (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) response.destroy();
        });
        const answer = () =>
          finish({
            status: response.statusCode ?? null,
            error: null,
            retryAfter: (response.headers["retry-after"] as string | undefined) ?? null,
          });
        response.on("end", answer);
        response.on("close", answer);
        response.on("error", answer);
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: null, error: `no answer within ${options.timeoutMs / 1000} s`, retryAfter: null });
    }, options.timeoutMs);
    request.on("error", (error) => finish({ status: null, error: errorMessage(error), retryAfter: null }));
    request.end(body);
  });
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`DNS lookup took over ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
