/**
 * A local webhook receiver over real HTTP: records every request and answers with `answer`
 * (200 unless a test changes it). Servers using it need STABLEGATE_WEBHOOK_ALLOW_PRIVATE.
 */
export interface ReceivedHook {
  id: string;
  body: string;
  headers: Headers;
}

export interface Receiver {
  url: string;
  hits: ReceivedHook[];
  /** What the next requests get; a promise holds the request open until it settles. */
  answer: (req: Request) => Response | Promise<Response>;
  stop(): void;
}

export function startReceiver(): Receiver {
  const receiver: Receiver = {
    url: "",
    hits: [],
    answer: () => new Response("ok"),
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      receiver.hits.push({ id: req.headers.get("webhook-id") ?? "", body: await req.text(), headers: req.headers });
      return receiver.answer(req);
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}/hook`;
  return receiver;
}
