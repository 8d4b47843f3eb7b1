/**
 * A payment's speed policy over the API against the real server (SQLite, or PostgreSQL with
 * STABLEGATE_TEST_ENGINE=postgres): the request's `speed`, else the account's, else the server's
 * default, fixed when it is created and echoed on create, retrieve, list and the events; a bad
 * value is a 400 that names the allowed ones and stores nothing; an idempotency key sent again
 * with another speed is another body.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runAccountCommand } from "../../src/cli/accounts.ts";
import { sql } from "../../src/db/engine.ts";
import { type Api, api, isErrorBody, startTestServer, type TestServer } from "../support/server.ts";
import { waitFor } from "../support/wait.ts";

/** Payments expire a second after they are made, so an event (payment.expired) needs no chain. */
const WINDOW_MS = 1_000;

let server: TestServer;

beforeAll(async () => {
  // The server's default is final: neither the schema's default (standard) nor any request's.
  server = await startTestServer({ defaultSpeed: "final", paymentWindowMs: WINDOW_MS });
});
afterAll(async () => await server?.stop());

/** A new account, with its own speed policy when `speed` is given. */
async function merchantWith(speed?: string): Promise<{ accountId: string; call: Api }> {
  const { accountId, apiKey } = await server.createAccount();
  if (speed) await runAccountCommand("account", ["set-speed", accountId, speed], server.env);
  return { accountId, call: api(server.url, apiKey) };
}

const create = (call: Api, body: Record<string, unknown>, headers?: Record<string, string>) =>
  call("/api/v1/payments", { body: { amount: "7.00", ...body }, headers });

const stored = async (id: string) =>
  (await server.running.db.get<{ speed: string }>(sql`SELECT speed FROM payments WHERE id = ${id}`))?.speed;

const countOf = async (accountId: string) =>
  (await server.running.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM payments WHERE account_id = ${accountId}`))!
    .n;

describe("which speed a payment gets", () => {
  test("the request's, else the account's, else the server's default; null is the same as leaving it out", async () => {
    const follows = await merchantWith();
    const own = await merchantWith("standard");
    const cases: Array<[Api, Record<string, unknown>, string]> = [
      [follows.call, {}, "final"],
      [follows.call, { speed: null }, "final"],
      [follows.call, { speed: "fast" }, "fast"],
      [own.call, {}, "standard"],
      [own.call, { speed: "fast" }, "fast"],
      [own.call, { speed: "final" }, "final"],
    ];
    for (const [call, body, expected] of cases) {
      const res = await create(call, body);
      expect({ body, status: res.status, speed: res.json.speed }).toEqual({ body, status: 201, speed: expected });
      expect(await stored(res.json.id)).toBe(expected);
    }
  });

  test("fixed at creation: a later change to the account's policy leaves it as it is", async () => {
    const { accountId, call } = await merchantWith("fast");
    const made = await create(call, {});
    await runAccountCommand("account", ["set-speed", accountId, "final"], server.env);
    expect((await call(`/api/v1/payments/${made.json.id}`)).json.speed).toBe("fast");
    expect((await create(call, {})).json.speed).toBe("final");
  });

  test("echoed on retrieve, list and the payment's events", async () => {
    const { call } = await merchantWith();
    const made = await create(call, { speed: "fast" });
    expect((await call(`/api/v1/payments/${made.json.id}`)).json.speed).toBe("fast");
    const listed = (await call("/api/v1/payments")).json.data as Array<{ id: string; speed: string }>;
    expect(listed.find((p) => p.id === made.json.id)?.speed).toBe("fast");
    const event = await waitFor(
      async () => {
        const events = (await call("/api/v1/events?type=payment.expired")).json.data as Array<{
          data: { payment: { id: string; speed: string } };
        }>;
        return events.find((e) => e.data.payment.id === made.json.id);
      },
      10_000,
      "the payment's payment.expired event",
    );
    expect(event.data.payment.speed).toBe("fast");
  });
});

describe("a bad speed", () => {
  test("is 400 naming the allowed values, and stores nothing", async () => {
    const { accountId, call } = await merchantWith();
    for (const speed of ["instant", "FAST", " fast", "", 1, true, ["fast"], { fast: true }]) {
      const before = await countOf(accountId);
      const res = await create(call, { speed });
      expect({ speed, status: res.status, error: isErrorBody(res.json) }).toEqual({ speed, status: 400, error: true });
      expect(res.json.error).toBe("speed must be one of fast, standard, final");
      expect(await countOf(accountId)).toBe(before);
    }
  });
});

describe("speed and Idempotency-Key", () => {
  test("the same key with the same speed replays; with another speed it is another body (422), nothing created", async () => {
    const { accountId, call } = await merchantWith();
    const key = `speed-${crypto.randomUUID()}`;
    const first = await create(call, { speed: "fast" }, { "idempotency-key": key });
    expect(first.status).toBe(201);
    const replay = await create(call, { speed: "fast" }, { "idempotency-key": key });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(first.text);
    for (const body of [{ speed: "final" }, {}]) {
      const other = await create(call, body, { "idempotency-key": key });
      expect({ body, status: other.status }).toEqual({ body, status: 422 });
    }
    expect(await countOf(accountId)).toBe(1);
  });
});
