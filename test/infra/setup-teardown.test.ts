/**
 * Test setup stops what it started when a later step fails: the checkout rig when chromium cannot
 * be launched after the chain (anvil) and the stack (the shipped binary) are up, a stack whose
 * server cannot start on the chain it started, the local cross-chain rig when its deployment fails.
 */
import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalCrossChain } from "../../src/dev/crosschain-stack.ts";
import { ANVIL_KEY_0 } from "../support/anvil.ts";
import { startBrowserRig } from "../support/browser.ts";
import { childrenDuring } from "../support/processes.ts";
import { startStack } from "../support/stack.ts";
import { randomAddress } from "../support/test-chain.ts";

const commands = (started: Array<{ command: string }>) => started.map((p) => p.command).join("\n");

describe("setup that fails half-way stops what it started", () => {
  test("a checkout rig whose browser cannot launch stops its chain and stack", async () => {
    const badPath = join(tmpdir(), `no-chromium-${crypto.randomUUID()}`);
    const { error, started, alive } = await childrenDuring(() => startBrowserRig({ executablePath: badPath }));
    expect((error as Error).message).toStartWith(`no chromium at ${badPath}: install Debian's chromium`);
    expect(commands(started)).toContain("anvil");
    expect(commands(started)).toContain("dist/stablegate serve");
    expect(alive).toEqual([]);
  }, 240_000);

  test("a browser rig whose server cannot start closes the browser it launched beside it", async () => {
    const { error, started, alive } = await childrenDuring(() =>
      startBrowserRig({
        start: async () => {
          throw new Error("the server would not start");
        },
      }),
    );
    expect(String(error)).toContain("the server would not start");
    expect(commands(started)).toContain("chromium");
    expect(alive).toEqual([]);
  });

  test("a stack whose server cannot start stops the chain it started", async () => {
    // A fee with no recipient is a configuration error: the server refuses to start.
    const { error, started, alive } = await childrenDuring(() => startStack({ feeBps: 50 }));
    expect(String(error)).toContain("STABLEGATE_FEE_RECIPIENT");
    expect(commands(started)).toContain("anvil");
    expect(alive).toEqual([]);
  });

  test("a local cross-chain rig that cannot reach its destination chain stops its source chain", async () => {
    const { error, started, alive } = await childrenDuring(() =>
      startLocalCrossChain({
        destination: { rpcUrl: "http://127.0.0.1:9", usdc: randomAddress() },
        deployerKey: ANVIL_KEY_0,
        payer: randomAddress(),
      }),
    );
    expect(String(error)).toContain("127.0.0.1:9");
    expect(commands(started)).toContain("--chain-id 31338");
    expect(alive).toEqual([]);
  });
});
