/**
 * A client of GET /api/v1/events/stream over real HTTP that keeps every frame it has read, parsed
 * here independently of the `listen` command's own parser: tests wait on `frames`, never on time.
 */
import { waitFor } from "./wait.ts";

/** One SSE frame as sent: its fields, or the comment it is. */
export interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface EventStreamClient {
  status: number;
  headers: Headers;
  /** The error body of a refused request; "" for an open stream. */
  text: string;
  frames: Frame[];
  /** Frames that carry an event (those with data). */
  events(): Frame[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  waitForEvents(count: number, what?: string): Promise<Frame[]>;
  /** Disconnects, as a client going away does. */
  close(): Promise<void>;
}

export async function openEventStream(
  baseUrl: string,
  key: string,
  opts: { lastEventId?: string; query?: string } = {},
): Promise<EventStreamClient> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: "text/event-stream" };
  if (opts.lastEventId !== undefined) headers["last-event-id"] = opts.lastEventId;
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}/api/v1/events/stream${opts.query ?? ""}`, { headers, signal: abort.signal });
  const frames: Frame[] = [];
  const events = () => frames.filter((frame) => frame.data !== undefined);
  let text = "";
  let ended: Promise<void> = Promise.resolve();
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) text = await res.text();
  else
    ended = (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        const reader = res.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          let end = buffer.indexOf("\n\n");
          while (end >= 0) {
            frames.push(parseFrame(buffer.slice(0, end)));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf("\n\n");
          }
        }
      } catch {
        // aborted by close()
      }
    })();
  return {
    status: res.status,
    headers: res.headers,
    text,
    frames,
    events,
    ended,
    waitForEvents: (count, what = `${count} events on the stream`) =>
      waitFor(() => events().length >= count && events(), 10_000, what),
    async close() {
      abort.abort();
      await ended;
    },
  };
}

function parseFrame(text: string): Frame {
  if (text.startsWith(":")) return { comment: text.slice(1).trim() };
  const frame: Frame = {};
  for (const line of text.split("\n")) {
    const colon = line.indexOf(": ");
    const field = line.slice(0, colon) as "id" | "event" | "data";
    frame[field] = line.slice(colon + 2);
  }
  return frame;
}
