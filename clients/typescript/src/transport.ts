import { errorFromResponse, StablegateConnectionError } from "./errors.ts";

export interface ClientOptions {
  /** The merchant's secret API key (`sk_live_...`). Keep it on your server. */
  apiKey: string;
  /** Where the Stablegate server answers, such as `https://pay.example.com`. */
  baseUrl: string;
  /** The fetch to use; the global one by default. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /**
   * How many times a request is sent again (default 2) when it got no answer at all, or a 409 (its
   * Idempotency-Key's first request still running), and sending it again cannot do anything twice:
   * reads, and writes that carry an Idempotency-Key.
   */
  maxNetworkRetries?: number;
}

export interface RequestOptions {
  /** Makes the write safe to send again: the server answers a repeat with the first answer. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Query parameters; undefined ones are left out. */
export type Query = object;

interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** Waits before each resend: 0.5 s, then 1 s, then 2 s... */
const backoffMs = (attempt: number) => 500 * 2 ** attempt;

/** Sends calls to the API with the key, turns answers into values and refusals into typed errors. */
export class Transport {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #fetch: NonNullable<ClientOptions["fetch"]>;
  readonly #maxNetworkRetries: number;

  constructor(options: ClientOptions) {
    if (!options.apiKey) throw new TypeError("Stablegate: apiKey is required");
    if (!options.baseUrl) throw new TypeError("Stablegate: baseUrl is required");
    this.#apiKey = options.apiKey;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.#maxNetworkRetries = options.maxNetworkRetries ?? 2;
  }

  async request<T>(call: Call): Promise<T> {
    const url = this.#url(call.path, call.query);
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: "application/json" };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
    const init: RequestInit = {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: call.signal,
    };
    const repeatable = call.method === "GET" || call.idempotencyKey !== undefined;
    const key = call.idempotencyKey ?? null;
    const pause = (attempt: number) => new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await this.#fetch(url, init);
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted) throw error;
        if (repeatable && attempt < this.#maxNetworkRetries) {
          await pause(attempt);
          continue;
        }
        // The cause's message comes from the runtime's networking, which never sees the key.
        const reason = error instanceof Error ? error.message : String(error);
        throw new StablegateConnectionError(`no answer from ${new URL(url).origin}: ${reason}`, {
          status: null,
          idempotencyKey: key,
          cause: error,
        });
      }
      // "Still in progress; retry shortly": what a resend after a lost answer meets on a slow server.
      if (response.status === 409 && key !== null && attempt < this.#maxNetworkRetries) {
        await pause(attempt);
        continue;
      }
      if (!response.ok) throw errorFromResponse(response, text, key);
      return JSON.parse(text) as T;
    }
  }

  #url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.#baseUrl}${path}${search ? `?${search}` : ""}`;
  }
}

/** One path segment from an id, so an id can never reach another route. */
export const segment = (id: string): string => encodeURIComponent(id);
