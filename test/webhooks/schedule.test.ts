import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { nextDelayMs, parseRetryAfter, RETRY_SCHEDULE_MS } from "../../src/webhooks/schedule.ts";
import { signatureHeaders } from "../../src/webhooks/signature.ts";

const HOUR = 3_600_000;
const fixed = (value: number) => () => value;

describe("RETRY_SCHEDULE_MS", () => {
  test("immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: about three days", () => {
    expect(RETRY_SCHEDULE_MS).toEqual([
      0,
      5_000,
      300_000,
      1_800_000,
      2 * HOUR,
      5 * HOUR,
      10 * HOUR,
      14 * HOUR,
      20 * HOUR,
      24 * HOUR,
    ]);
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(3 * 24 * HOUR);
    expect(total).toBeLessThan(3.2 * 24 * HOUR);
  });
});

describe("nextDelayMs", () => {
  const schedule = [0, 1_000, 10_000];

  test("without jitter (random 0.5) each attempt waits its schedule entry", () => {
    expect(schedule.map((_, i) => nextDelayMs(schedule, i, null, fixed(0.5)))).toEqual([0, 1_000, 10_000]);
  });

  test("null once the schedule is exhausted, whatever Retry-After says", () => {
    expect(nextDelayMs(schedule, 3, null, fixed(0.5))).toBeNull();
    expect(nextDelayMs(schedule, 3, 5_000, fixed(0.5))).toBeNull();
    expect(nextDelayMs(schedule, 99, null)).toBeNull();
    expect(nextDelayMs(RETRY_SCHEDULE_MS, RETRY_SCHEDULE_MS.length, null)).toBeNull();
    expect(nextDelayMs(RETRY_SCHEDULE_MS, RETRY_SCHEDULE_MS.length - 1, null)).not.toBeNull();
  });

  test("jitter stays within ±10% and spans it", () => {
    expect(nextDelayMs(schedule, 2, null, fixed(0))).toBe(9_000);
    expect(nextDelayMs(schedule, 2, null, fixed(0.999_999))).toBe(11_000);
    const seen: number[] = [];
    for (let i = 0; i < 2_000; i++) {
      const d = nextDelayMs(schedule, 1, null)!;
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(900);
      expect(d).toBeLessThanOrEqual(1_100);
      seen.push(d);
    }
    expect(Math.min(...seen)).toBeLessThan(920);
    expect(Math.max(...seen)).toBeGreaterThan(1_080);
  });

  test("an immediate entry stays immediate", () => {
    for (const r of [0, 0.5, 0.999]) expect(nextDelayMs(schedule, 0, null, fixed(r))).toBe(0);
  });

  test("Retry-After wins when it asks for longer, never when it asks for less", () => {
    expect(nextDelayMs(schedule, 1, 30_000, fixed(0.5))).toBe(30_000);
    expect(nextDelayMs(schedule, 2, 500, fixed(0.5))).toBe(10_000);
    expect(nextDelayMs(schedule, 2, 0, fixed(0))).toBe(9_000);
    expect(nextDelayMs(schedule, 0, 2_000, fixed(0.5))).toBe(2_000);
  });

  test("Retry-After is capped at 24 h", () => {
    expect(nextDelayMs(schedule, 1, 30 * 24 * HOUR, fixed(0.5))).toBe(24 * HOUR);
    expect(nextDelayMs(schedule, 1, Number.MAX_SAFE_INTEGER, fixed(0.5))).toBe(24 * HOUR);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-06-01T12:00:00.000Z");

  test("delay-seconds", () => {
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("1", now)).toBe(1_000);
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 7 ", now)).toBe(7_000);
  });

  test("an HTTP date, counted from now", () => {
    expect(parseRetryAfter("Sun, 01 Jun 2025 12:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 3_600_000).toUTCString(), now)).toBe(3_600_000);
  });

  test("a date in the past means now", () => {
    expect(parseRetryAfter("Sun, 01 Jun 2025 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", now)).toBe(0);
  });

  test("absent or unreadable is null", () => {
    for (const value of [null, undefined, "", "   ", "soon", "5s", "0x10", "1e3", "NaN"]) {
      expect(parseRetryAfter(value, now)).toBeNull();
    }
  });

  test("neither delay-seconds nor an HTTP date is null, not a date guessed from digits", () => {
    // JavaScriptCore's Date.parse reads "-5" and "1.5" as dates in 2001, and "3000.1" as one in
    // the year 3000, which would have held deliveries back for the 24 h cap.
    for (const value of ["-5", "1.5", "12.0", "+30", "3000.1", "2030-01-01"])
      expect(parseRetryAfter(value, now)).toBeNull();
  });
});

describe("signatureHeaders", () => {
  test("the Standard Webhooks specification's example signature", () => {
    // Its published test vector; the expected value was also checked with `openssl dgst -hmac`.
    const headers = signatureHeaders(
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  test("a known answer over a non-ASCII body, recomputed with node:crypto", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const secret = `whsec_${key.toString("base64")}`;
    expect(secret).toBe("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
    const body = '{"id":"evt_abc","data":{"amount":"1.50","note":"é"}}';
    const expected = createHmac("sha256", key)
      .update(Buffer.from(`evt_abc.1700000000.${body}`, "utf8"))
      .digest("base64");
    // Computed beforehand with openssl over the UTF-8 bytes.
    expect(expected).toBe("6dclzTG6u0eYFbvoE4HpBBp7uk4z3mePVbverR1UvGc=");
    expect(signatureHeaders(secret, "evt_abc", 1700000000, body)["webhook-signature"]).toBe(`v1,${expected}`);
  });

  test("the key is the secret's decoded bytes, not its text", () => {
    const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const asText = createHmac("sha256", secret).update("evt_1.1.{}").digest("base64");
    expect(signatureHeaders(secret, "evt_1", 1, "{}")["webhook-signature"]).not.toBe(`v1,${asText}`);
  });

  test("what it signs verifies with the standardwebhooks package, and only unchanged", () => {
    const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
    const body = JSON.stringify({
      id: "evt_x",
      object: "event",
      type: "test",
      created_at: new Date().toISOString(),
      data: {},
    });
    const headers = signatureHeaders(secret, "evt_x", Math.floor(Date.now() / 1000), body);
    const wh = new Webhook(secret);
    expect(wh.verify(body, headers)).toEqual(JSON.parse(body));
    expect(wh.sign("evt_x", new Date(Number(headers["webhook-timestamp"]) * 1000), body)).toBe(
      headers["webhook-signature"]!,
    );
    expect(() => wh.verify(`${body} `, headers)).toThrow();
    expect(() => wh.verify(body, { ...headers, "webhook-id": "evt_y" })).toThrow();
  });

  test("the timestamp is whole seconds and every header is a string", () => {
    const h = signatureHeaders("whsec_AAAA", "evt_1", 1700000000, "{}");
    expect(h["webhook-timestamp"]).toBe("1700000000");
    for (const v of Object.values(h)) expect(typeof v).toBe("string");
  });
});
