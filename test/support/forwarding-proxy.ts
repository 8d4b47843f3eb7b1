/**
 * A reverse proxy as a process of its own, in front of a real server the way Caddy or nginx is:
 * it adds the address of whoever connected to it to X-Forwarded-For (after whatever the client
 * sent, as nginx's `$proxy_add_x_forwarded_for` does: the harder case for the server, which must
 * not believe the client's part), and it connects to the server from `via`, a loopback address of
 * its own, so the server can tell the proxy from a client. Clients are told apart the same way:
 * `fetchFrom` connects from a loopback address of the test's choosing.
 *
 *   const proxy = await startForwardingProxy(server.url, "127.0.0.2");
 *   const res = await fetchFrom("127.0.0.10", `${proxy.url}/dashboard/login`);  // client 127.0.0.10
 *   await proxy.stop();
 */
import http from "node:http";
import { loadConfig } from "../../src/config.ts";
import { drainTail } from "../../src/lib/stream-tail.ts";
import { startTestServer, type TestServer } from "./server.ts";
import { waitFor } from "./wait.ts";

export interface ForwardingProxy {
  url: string;
  stop(): Promise<void>;
}

/** Starts the proxy (`bun test/support/forwarding-proxy.ts UPSTREAM VIA`); resolves once it listens. */
export async function startForwardingProxy(upstream: string, via: string): Promise<ForwardingProxy> {
  const proc = Bun.spawn([process.execPath, import.meta.path, upstream, via], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    await proc.exited;
  };
  const stdout = drainTail(proc.stdout);
  const stderr = drainTail(proc.stderr);
  try {
    const port = await waitFor(
      async () => {
        if (proc.exitCode !== null) throw new Error(`proxy exited with ${proc.exitCode}: ${await stderr()}`);
        return /"port":(\d+)/.exec(await stdout())?.[1];
      },
      10_000,
      "the forwarding proxy to listen",
    );
    return { url: `http://127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * fetch, from the local address `from` (any 127.x.y.z on Linux): a client the server sees at that
 * address. Redirects are never followed; the body may be text or URLSearchParams, as a form's.
 */
export function fetchFrom(from: string, url: string, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url);
  const headers = new Headers(init.headers);
  let body: string | undefined;
  if (init.body instanceof URLSearchParams) {
    body = init.body.toString();
    if (!headers.has("content-type")) headers.set("content-type", "application/x-www-form-urlencoded");
  } else if (typeof init.body === "string") {
    body = init.body;
  }
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: init.method ?? "GET",
        headers: Object.fromEntries(headers),
        localAddress: from,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const answer = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            answer.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: answer }));
        });
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** The proxy itself, when this file is run. */
function serveProxy(upstream: URL, via: string): void {
  const server = http.createServer((req, res) => {
    const sent = [req.headers["x-forwarded-for"] ?? []].flat().join(", ");
    const peer = req.socket.remoteAddress ?? "";
    const headers = { ...req.headers, "x-forwarded-for": sent ? `${sent}, ${peer}` : peer };
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
        localAddress: via,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(out);
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    console.log(JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 }));
  });
}

if (import.meta.main) {
  const [upstream, via] = process.argv.slice(2);
  if (!upstream || !via) {
    console.error("usage: bun test/support/forwarding-proxy.ts UPSTREAM_URL LOCAL_ADDRESS");
    process.exit(64);
  }
  serveProxy(new URL(upstream), via);
}

/** The address the proxy connects to the server from. */
export const PROXY_ADDRESS = "127.0.0.2";

/** A server behind the forwarding proxy, with what a test added to it. */
export type ProxiedServer<T> = { server: TestServer; proxy: ForwardingProxy } & T;

/**
 * A server configured from `env` (STABLEGATE_TRUSTED_PROXIES) with its clock stopped, so no wait
 * or rate-limit bucket runs out while a slow machine sends the next request, the proxy in front,
 * and what `add` makes on it; the server is stopped again if anything after it fails.
 */
export async function startBehindProxy<T>(
  env: Record<string, string>,
  add: (server: TestServer) => Promise<T>,
): Promise<ProxiedServer<T>> {
  const clock = { now: () => Date.parse("2031-05-01T10:00:00.000Z") };
  const server = await startTestServer({ trustedProxies: loadConfig(env).trustedProxies }, { clock });
  try {
    const proxy = await startForwardingProxy(server.url, PROXY_ADDRESS);
    return { server, proxy, ...(await add(server)) };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Stops what `startBehindProxy` started. */
export async function stopBehindProxy(rig: { server: TestServer; proxy: ForwardingProxy } | undefined) {
  await rig?.proxy.stop();
  await rig?.server.stop();
}
