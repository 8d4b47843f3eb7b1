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
  keyIsLive: () => Promise<boolean> | boolean;
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

  let pumping: Promise<void> | null = null;
  let again = false;
  /**
   * Sends what was written since the cursor, for as long as the client takes it. One pass at a
   * time: a wake-up during a pass (enqueue() may call pull() at once, or an event is written while
   * a read is on its way) makes it look once more when the pass is done, so nothing written is
   * left for the backstop.
   */
  const pump = (): Promise<void> => {
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      try {
        do {
          again = false;
          await pass();
        } while (again && !ended);
      } finally {
        pumping = null;
      }
    })();
    return pumping;
  };
  const pass = async () => {
    while (!ended && (controller.desiredSize ?? 1) > 0) {
      const batch = await events.after(account, cursor, BATCH);
      if (ended) return;
      if (batch.length > 0 && (!(await keyStillLive()) || ended)) return;
      for (const event of batch) {
        cursor = event.seq; // moved first: enqueue() may start the next read at once
        // The payload is one line of JSON (written by JSON.stringify), as SSE's data field needs.
        send(`id: ${event.id}\nevent: ${event.type}\ndata: ${event.payload}\n\n`);
      }
      if (batch.length < BATCH) return;
    }
  };

  /** Ends the stream (and frees its place) unless its key still authenticates. */
  const keyStillLive = async (): Promise<boolean> => {
    let live = false;
    try {
      live = await deps.keyIsLive();
    } catch {
      // The store cannot say: a stream nobody can vouch for ends, and the client reconnects.
    }
    if (!live && !ended) {
      send(": the API key no longer authenticates\n\n");
      end(true);
    }
    return live;
  };

  /** A read that failed fails the stream: the client reconnects and resumes after the last event it got. */
  const fail = (error: unknown) => {
    end(false);
    controller.error(error);
  };
  /** The key asked about first; `then` only while it still authenticates. */
  const checked = (then: () => Promise<void> | void) => {
    void (async () => {
      if ((await keyStillLive()) && !ended) await then();
    })().catch(fail);
  };

  const unfollow = deps.feed.follow(
    account.id,
    deps.keyId,
    () => void pump().catch(fail),
    () => end(true),
  );
  const heartbeat = setInterval(() => checked(() => send(": ping\n\n")), deps.feed.heartbeatMs);
  const backstop = setInterval(() => checked(pump), BACKSTOP_MS);
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
      pull: () => pump().catch(fail),
      cancel: () => end(false),
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk?.byteLength ?? 0 },
  );
}
