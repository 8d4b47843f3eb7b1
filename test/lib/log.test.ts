import { describe, expect, test } from "bun:test";
import { HttpRequestError } from "viem";
import { createLogger } from "../../src/lib/log.ts";

/** A logger at debug level and the lines it wrote, parsed. */
function capture() {
  const lines: string[] = [];
  const log = createLogger("debug", (line) => lines.push(line));
  return { log, lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, any>) };
}

describe("createLogger", () => {
  test("an error is logged with its causes, each by name and message", () => {
    const { log, parsed } = capture();
    const root = new Error("disk I/O error", { cause: "SQLITE_IOERR" });
    const wrapped = new TypeError("could not save the payment", { cause: root });
    log.error("unhandled error", { error: wrapped });

    const [line] = parsed();
    expect(line!.error).toMatchObject({
      name: "TypeError",
      message: "could not save the payment",
      cause: { name: "Error", message: "disk I/O error", cause: "SQLITE_IOERR" },
    });
    expect(line!.error.stack).toMatch(/^\s+at /);
    expect(Object.keys(line!.error.cause)).toEqual(["name", "message", "cause"]);
  });

  test("an error's other properties, a viem error's RPC URL and a stack's first line stay out of the log", () => {
    const { log, lines } = capture();
    const rpcError = new HttpRequestError({
      url: "https://rpc.example.com/v3/PROVIDERKEY",
      status: 500,
      body: { method: "eth_blockNumber" },
    });
    const cause = Object.assign(new Error("request failed"), { config: { apiKey: "sk_live_SECRETVALUE" } });
    log.error("rpc failed", { error: rpcError });
    log.error("wrapped", { error: new Error("outer", { cause: rpcError }) });
    log.error("wrapped", { error: new Error("outer", { cause }) });
    log.error("wrapped", { error: new Error("outer", { cause: { apiKey: "sk_live_OBJECTSECRET" } }) });

    const text = lines.join("");
    expect(text).toContain("HTTP request failed.");
    expect(text).toContain("request failed");
    expect(text).not.toContain("PROVIDERKEY");
    expect(text).not.toContain("SECRETVALUE");
    expect(text).not.toContain("OBJECTSECRET");
  });

  test("a cause chain that loops ends after a few causes", () => {
    const { log, parsed } = capture();
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    log.warn("loop", { error: a });

    let depth = 0;
    for (let e = parsed()[0]!.error; typeof e === "object"; e = e.cause) depth++;
    expect(depth).toBe(6); // the error and five causes
  });

  test("fields cannot overwrite time, level or msg; they are kept under another name", () => {
    const { log, parsed } = capture();
    log.info("payment created", { time: "yesterday", level: "error", msg: "forged", payment_id: "0xabc" });

    const [line] = parsed();
    expect(line!.msg).toBe("payment created");
    expect(line!.level).toBe("info");
    expect(new Date(line!.time).toISOString()).toBe(line!.time);
    expect(line).toMatchObject({
      field_time: "yesterday",
      field_level: "error",
      field_msg: "forged",
      payment_id: "0xabc",
    });
  });

  test("levels below the logger's are dropped; bigints are written as strings", () => {
    const lines: string[] = [];
    const log = createLogger("warn", (line) => lines.push(line));
    log.info("quiet");
    log.warn("loud", { amount: 25_000_000n });
    expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ msg: "loud", amount: "25000000" })]);
  });

  test("a line the sink cannot take is dropped: logging never throws into the work it describes", () => {
    let attempts = 0;
    const log = createLogger("info", () => {
      attempts++;
      throw new Error("EPIPE");
    });
    expect(() => log.error("settlement failed", { error: new Error("reverted") })).not.toThrow();
    expect(attempts).toBe(1);
  });
});
