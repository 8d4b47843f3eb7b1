/**
 * One HTTP/1.1 request over a plain socket, for what fetch will not send: a body on a GET (Bun's
 * fetch throws, and drops a Content-Length header given without one). The server takes such a
 * request like any other, so its answer is a real one; the connection closes after it. rawApi
 * (server.ts) sends a GET with a body through here.
 */
import { connect } from "node:net";

export async function rawRequest(
  url: string,
  req: { method: string; headers: Record<string, string>; body: string },
): Promise<Response> {
  const target = new URL(url);
  const head = [
    `${req.method} ${target.pathname}${target.search} HTTP/1.1`,
    `host: ${target.host}`,
    "connection: close",
    ...Object.entries(req.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(req.body)}`,
  ].join("\r\n");
  const received = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(`${head}\r\n\r\n`);
      socket.end(req.body);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks)));
    // A server that answered early may reset the connection while the body is still going out.
    socket.on("error", (error) => (chunks.length > 0 ? resolve(Buffer.concat(chunks)) : reject(error)));
  });
  const end = received.indexOf("\r\n\r\n");
  if (end === -1) throw new Error(`no HTTP answer: ${received.toString("utf8").slice(0, 200)}`);
  const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
  const headers = new Headers(
    lines.map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
  );
  if (headers.get("transfer-encoding")?.includes("chunked")) throw new Error("a chunked answer is not read here");
  return new Response(Uint8Array.from(received.subarray(end + 4)), {
    status: Number(statusLine!.split(" ")[1]),
    headers,
  });
}
