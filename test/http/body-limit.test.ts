/**
 * Bodies are read only up to the 256 KB limit, chunked or not: the server process's memory stays
 * bounded however much clients send. Measured on a real server subprocess (its peak RSS from
 * /proc), so the test process's own memory does not count.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ServerProcess, spawnTestServer, toApiResponse } from "../support/server.ts";

let server: ServerProcess;

beforeAll(async () => {
  server = await spawnTestServer();
});

afterAll(() => server?.stop());

const CHUNK = new Uint8Array(64 * 1024).fill(0x20); // whitespace: valid JSON padding to the very end

/** A body of `chunks` x 64 KB sent chunked (no Content-Length), produced lazily. */
function chunkedBody(chunks: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ < chunks) controller.enqueue(CHUNK);
      else controller.close();
    },
  });
}

async function postChunked(path: string, chunks: number) {
  try {
    const res = await fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chunkedBody(chunks),
    });
    return await toApiResponse(res);
  } catch (error) {
    // A reset connection instead of an answer: shows up as status 0 in the assertions.
    return { status: 0, json: undefined, text: String(error), headers: new Headers() };
  }
}

describe("request bodies larger than 256 KB", () => {
  test("a chunked body over the limit is a JSON 413", async () => {
    const res = await postChunked(`/api/public/payments/0x${"0".repeat(64)}/sync`, 8);
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: "request body is larger than 256 KB" });
  });

  test("a chunked body over 8 MB gets the JSON 413 too, not Bun's own empty one", async () => {
    const res = await postChunked(`/api/public/payments/0x${"0".repeat(64)}/sync`, 200);
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: "request body is larger than 256 KB" });
  });

  test("a Content-Length far over the limit is refused before the body is read, as JSON", async () => {
    const body = new Uint8Array(12 * 1024 * 1024).fill(0x20);
    const res = await toApiResponse(
      await fetch(`${server.url}/api/v1/payments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    );
    expect(res.status).toBe(413);
    expect(res.json).toEqual({ error: "request body is larger than 256 KB" });
  });

  test("a chunked body under the limit is read in full (and judged on its content)", async () => {
    const res = await postChunked(`/api/public/payments/0x${"0".repeat(64)}/sync`, 3);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "request body must be a JSON object" });
  });

  test("100 concurrent chunked 7.5 MB uploads leave the server's peak memory far below their total", async () => {
    const before = server.memory();
    const results = await Promise.all(
      Array.from({ length: 100 }, () => postChunked(`/api/public/payments/0x${"0".repeat(64)}/sync`, 120)),
    );
    const after = server.memory();
    // Every upload gets the JSON 413 (the rest of its body is read and dropped, not reset).
    const answers = new Set(results.map((r) => `${r.status} ${r.text.slice(0, 100)}`));
    expect([...answers]).toEqual(['413 {"error":"request body is larger than 256 KB"}']);
    // The uploads total 750 MB; unbounded reads took the server from ~100 MB to ~880 MB.
    console.log(
      `server memory: rss ${before.rssMb.toFixed(0)} MB before, ${after.rssMb.toFixed(0)} MB after, peak ${after.peakMb.toFixed(0)} MB`,
    );
    expect(after.peakMb - before.rssMb).toBeLessThan(250);
  });
});
