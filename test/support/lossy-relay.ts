/**
 * A TCP relay in front of a server that can lose an answer on the way back: the request reaches
 * the server and is processed, then the client's connection is closed instead of the answer
 * being passed on. What a client sees when a network drops a connection at the worst moment.
 *
 *   const relay = await startLossyRelay(server.url);
 *   relay.loseAnswers(1);        // the next answer never arrives
 *   ... call relay.url ...
 *   relay.stop();
 */
import type { Socket } from "bun";

export interface LossyRelay {
  /** http://127.0.0.1:<port>, forwarding to the target. */
  url: string;
  /** Answers lost so far. */
  readonly lost: number;
  /** Loses the next `count` answers (one per connection that gets one). */
  loseAnswers(count: number): void;
  stop(): void;
}

interface Link {
  upstream?: Socket<unknown>;
  /** Bytes from the client that arrived before the upstream connection was open. */
  early: Uint8Array[];
}

export async function startLossyRelay(target: string): Promise<LossyRelay> {
  const { hostname, port } = new URL(target);
  let toLose = 0;
  let lost = 0;
  const listener = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { early: [] };
        let losing = false;
        const upstream = await Bun.connect({
          hostname,
          port: Number(port),
          socket: {
            data(_upstream, chunk) {
              if (!losing && toLose > 0) {
                toLose--;
                lost++;
                losing = true;
              }
              if (losing) client.end();
              else client.write(chunk);
            },
            close() {
              client.end();
            },
          },
        });
        client.data.upstream = upstream as Socket<unknown>;
        for (const chunk of client.data.early.splice(0)) upstream.write(chunk);
      },
      data(client, chunk) {
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.early.push(new Uint8Array(chunk));
      },
      close(client) {
        client.data.upstream?.end();
      },
    },
  });
  return {
    url: `http://127.0.0.1:${listener.port}`,
    get lost() {
      return lost;
    },
    loseAnswers(count) {
      toLose += count;
    },
    stop: () => listener.stop(true),
  };
}
