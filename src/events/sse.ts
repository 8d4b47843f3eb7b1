import type { Account } from "../accounts/service.ts";
import type { EventFeed } from "./feed.ts";
import type { EventsService, StreamCursor } from "./service.ts";

/**
 * Events written by another process (`stablegate account set-payout` runs beside the server)
 * wake no stream; each stream looks this often as well, so they arrive within this delay.
 */
const BACKSTOP_MS = 2_000;
const BATCH = 100;

export interface EventStreamDeps {
  events: EventsService;
  feed: EventFeed;
  account: Account;
  /** The API key the stream was opened with: it counts against that key's streams. */
  keyId: string;
  /** Whether that key still authenticates, asked of the store (a revocation may come from any process). */
  keyIsLive: () => boolean;
  /** Where to start (see EventsService.streamCursor). */
  cursor: StreamCursor;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

/**
 * The account's events as Server-Sent Events, from `cursor` on, for as long as the client
 * stays: `id: <evt id>`, `event: <type>`, `data: <the event JSON as webhooks send it>`. Reads
 * only as fast as the client takes them (a slow reader leaves at most 64 KB and one batch
 * queued here), and leaves no timer or subscription behind when either side ends it. Throws (429) before anything
 * is sent when the key or the account has too many streams open.
 *
 * The key is asked about again at every heartbeat, every backstop look and before each batch of
 * events is sent: once it is revoked (by the dashboard, or `stablegate key revoke` in another
 * process) the stream ends within a backstop interval, and no event read after that goes out.
 *
 * It opens by naming the event it starts after (`id:` with no data, which sets an EventSource's
 * last event id without dispatching anything), so a client that connected without one and then
 * lost the connection resumes from there instead of from "new events" again.
 */
export function eventStream(deps: EventStreamDeps): ReadableStream<Uint8Array> {
  const { events, account, signal } = deps;
  const encoder = new TextEncoder();
  let cursor = deps.cursor.seq;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;

  const send = (text: string) => {
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      end(false); // the response is gone already
    }
  };
  let pumping = false;
  const pump = () => {
    // enqueue() may call pull() (and so pump) at once: one pass at a time, cursor moved first.
    if (pumping) return;
    pumping = true;
    try {
      while (!ended && (controller.desiredSize ?? 1) > 0) {
        const batch = events.after(account, cursor, BATCH);
        if (batch.length > 0 && !keyStillLive()) return;
        for (const event of batch) {
          cursor = event.seq;
          // The payload is one line of JSON (written by JSON.stringify), as SSE's data field needs.
          send(`id: ${event.id}\nevent: ${event.type}\ndata: ${event.payload}\n\n`);
        }
        if (batch.length < BATCH) return;
      }
    } finally {
      pumping = false;
    }
  };

  /** Ends the stream (and frees its place) unless its key still authenticates. */
  const keyStillLive = (): boolean => {
    let live = false;
    try {
      live = deps.keyIsLive();
    } catch {
      // The store cannot say: a stream nobody can vouch for ends, and the client reconnects.
    }
    if (!live && !ended) {
      send(": the API key no longer authenticates\n\n");
      end(true);
    }
    return live;
  };

  const unfollow = deps.feed.follow(account.id, deps.keyId, pump, () => end(true));
  const heartbeat = setInterval(() => keyStillLive() && send(": ping\n\n"), deps.feed.heartbeatMs);
  const backstop = setInterval(() => keyStillLive() && pump(), BACKSTOP_MS);
  const onAbort = () => end(false);
  signal.addEventListener("abort", onAbort, { once: true });

  function end(closeStream: boolean): void {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    clearInterval(backstop);
    signal.removeEventListener("abort", onAbort);
    unfollow();
    if (closeStream) controller.close();
  }

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        const startId = deps.cursor.id;
        send(startId === null ? ": connected\n\n" : `id: ${startId}\n\n`);
      },
      pull: () => pump(),
      cancel: () => end(false),
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk?.byteLength ?? 0 },
  );
}
