/**
 * The client side of `stablegate listen`: an account's events from a running server, in order,
 * each once, across dropped connections and restarts. It follows GET /api/v1/events/stream and
 * falls back to polling GET /api/v1/events where the stream is unavailable (an older server, a
 * proxy that does not pass it).
 */
import { sleep } from "../lib/sleep.ts";

export interface RemoteEvent {
  id: string;
  type: string;
  /** The event JSON exactly as the server sent it. */
  payload: string;
}

export interface FollowOptions {
  url: string;
  key: string;
  signal: AbortSignal;
  /** Connection news for the operator (connected, reconnecting, polling). */
  notice: (line: string) => void;
  pollMs?: number;
}

/** A refusal that retrying cannot fix (a bad key, an event the server does not know). */
export class ListenError extends Error {}

const PAGE = 100;
const MAX_BACKOFF_MS = 10_000;

/**
 * Yields every event written after the call began, oldest first. Where it resumes after a
 * reconnect is the last event the caller took (a generator does not run on until asked for the
 * next), so none is lost and none comes twice. Ends when `signal` aborts.
 */
export async function* followEvents(opts: FollowOptions): AsyncGenerator<RemoteEvent> {
  const { signal, notice } = opts;
  const pollMs = opts.pollMs ?? 2_000;
  // null: before the account's first event (it had none when we started).
  let cursor: string | null = await withRetry(opts, () => newestEventId(opts));
  let polling = false;
  let backoff = 500;

  while (!signal.aborted) {
    try {
      if (polling) {
        for (const event of await listAfter(opts, cursor, null)) {
          yield event;
          cursor = event.id;
        }
        await sleep(pollMs, signal);
        continue;
      }
      const res = await request(opts, "/api/v1/events/stream", {
        accept: "text/event-stream",
        ...(cursor === null ? {} : { "last-event-id": cursor }),
      });
      const type = res.headers.get("content-type") ?? "";
      if (res.status === 404 || res.status === 405 || (res.ok && !type.startsWith("text/event-stream"))) {
        await res.body?.cancel();
        notice(`the event stream is not available here (${res.status}); polling every ${pollMs / 1000} s instead`);
        polling = true;
        continue;
      }
      if (!res.ok) throw await refusal(res);
      notice("connected");
      for await (const message of sseMessages(res.body!, signal)) {
        backoff = 500;
        if (message.data === null) {
          // The stream names where it starts. Started from "new events" with none seen yet:
          // whatever was written before that point and after we began comes first, by listing.
          if (cursor === null && message.id) {
            for (const event of await listAfter(opts, null, message.id)) {
              yield event;
              cursor = event.id;
            }
          }
          continue;
        }
        yield { id: message.id, type: message.event, payload: message.data };
        cursor = message.id;
      }
      if (!signal.aborted) notice("the server ended the stream; reconnecting");
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ListenError) throw error;
      notice(`${(error as Error).message}; retrying in ${(backoff / 1000).toFixed(1)} s`);
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

function request(opts: FollowOptions, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, opts.url), {
    headers: { authorization: `Bearer ${opts.key}`, ...headers },
    signal: opts.signal,
  });
}

/** 401 and 400 will not change by asking again; anything else (429, 5xx) may. */
async function refusal(res: Response): Promise<Error> {
  let message = `${res.status}`;
  try {
    message = `${res.status} ${(JSON.parse(await res.text()) as { error: string }).error}`;
  } catch {}
  const text = `the server answered ${message}`;
  return res.status === 400 || res.status === 401 || res.status === 403 ? new ListenError(text) : new Error(text);
}

async function withRetry<T>(opts: FollowOptions, work: () => Promise<T>): Promise<T> {
  let backoff = 500;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ListenError || opts.signal.aborted) throw error;
      opts.notice(`${(error as Error).message}; retrying in ${(backoff / 1000).toFixed(1)} s`);
      await sleep(backoff, opts.signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

async function listPage(opts: FollowOptions, startingAfter: string | null) {
  const query = `limit=${PAGE}${startingAfter === null ? "" : `&starting_after=${startingAfter}`}`;
  const res = await request(opts, `/api/v1/events?${query}`);
  if (!res.ok) throw await refusal(res);
  return (await res.json()) as { data: Array<{ id: string; type: string }>; has_more: boolean };
}

async function newestEventId(opts: FollowOptions): Promise<string | null> {
  return (await listPage(opts, null)).data[0]?.id ?? null;
}

/**
 * The events after `after` (null: all listed) up to and including `until` (null: the newest),
 * oldest first, from the newest-first list, each with its payload as sent.
 */
async function listAfter(opts: FollowOptions, after: string | null, until: string | null): Promise<RemoteEvent[]> {
  const found: RemoteEvent[] = [];
  let reached = until === null;
  let page = await listPage(opts, null);
  for (;;) {
    for (const event of page.data) {
      if (event.id === after) return withPayloads(opts, found.reverse());
      if (event.id === until) reached = true;
      if (reached) found.push({ id: event.id, type: event.type, payload: "" });
    }
    if (!page.has_more) break;
    page = await listPage(opts, page.data.at(-1)!.id);
  }
  if (after !== null) throw new ListenError(`event ${after} is no longer listed by the server; start listen again`);
  return withPayloads(opts, found.reverse());
}

/** Fills in each event's payload as the server stores it: re-serialising the list's JSON could change its bytes. */
async function withPayloads(opts: FollowOptions, events: RemoteEvent[]): Promise<RemoteEvent[]> {
  for (const event of events) {
    const res = await request(opts, `/api/v1/events/${event.id}`);
    if (!res.ok) throw await refusal(res);
    event.payload = await res.text();
  }
  return events;
}

interface SseMessage {
  id: string;
  event: string;
  /** null: a message without data (the stream naming where it starts). */
  data: string | null;
}

/** Server-Sent Events as the HTML spec parses them: fields until a blank line; comments skipped. */
async function* sseMessages(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const cancel = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", cancel, { once: true });
  let buffer = "";
  let id = "";
  let named = false; // this message carried an id field
  let event = "message";
  let data: string[] | null = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.search(/\r\n|\r|\n/);
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(buffer[end] === "\r" && buffer[end + 1] === "\n" ? end + 2 : end + 1);
        if (line === "") {
          if (data !== null || named) yield { id, event, data: data === null ? null : data.join("\n") };
          named = false;
          event = "message";
          data = null;
        } else if (!line.startsWith(":")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") {
            id = value;
            named = true;
          } else if (field === "event") event = value;
          else if (field === "data") (data ??= []).push(value);
        }
        end = buffer.search(/\r\n|\r|\n/);
      }
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    await cancel();
  }
}
