import { runEvery } from "../lib/loop.ts";
import type { Plumbing } from "../lib/plumbing.ts";
import { createEventFeed } from "./feed.ts";
import { createEventsService } from "./service.ts";
import { createEventStore } from "./store.ts";

/** Events' slice of the configuration: on PostgreSQL, other replicas write events too. */
export interface EventsConfig {
  databaseUrl: string | null;
}

export interface EventOptions {
  /** How often an idle event stream sends a comment line (HEARTBEAT_MS); tests shorten it. */
  eventHeartbeatMs?: number;
}

export type Events = ReturnType<typeof createEvents>;

/**
 * Events: their store (the outbox every status change writes to), the event list's service and
 * the open event streams. Whoever writes an event calls `written()`, which wakes what waits for
 * new ones: what registered with `onWritten` (the webhook worker), then the open streams.
 */
export function createEvents(
  w: Pick<Plumbing, "db" | "clock" | "ids" | "log"> & { config: EventsConfig; options?: EventOptions },
) {
  const store = createEventStore(w.db, w.ids);
  const feed = createEventFeed({ heartbeatMs: w.options?.eventHeartbeatMs });
  const waiting: Array<() => void> = [];
  return {
    store,
    feed,
    service: createEventsService({ store, clock: w.clock }),
    written(): void {
      // Once the event's transaction commits: woken before, a reader on another connection
      // (PostgreSQL) would not see it yet and would leave it for its next round.
      w.db.afterCommit(() => {
        for (const wake of waiting) wake();
        feed.notify();
      });
    },
    onWritten(wake: () => void): void {
      waiting.push(wake);
    },
    /** Event streams open now (GET /api/v1/events/stream). */
    activity: () => ({ eventStreams: feed.open() }),
    /** On PostgreSQL, other replicas write events too: open streams look for them every second. */
    async run(signal: AbortSignal): Promise<void> {
      if (!w.config.databaseUrl) return;
      await runEvery("event streams", 1_000, () => feed.open() > 0 && feed.notify(), { log: w.log, signal });
    },
  };
}
