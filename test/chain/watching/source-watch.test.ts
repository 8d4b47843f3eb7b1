/**
 * Plain USDC transfers on a source chain, found by that chain's own watcher: credited after its
 * confirmations through the same ledger, added to what the settlement chain brought, forgotten
 * when reorged away, refused for an address that cannot bridge, and never in the way of the settlement
 * chain when the source RPC hangs. Two real anvils, the real server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getAddress, zeroAddress } from "viem";
import {
  type CrossChainStack,
  LOCAL_SOURCE,
  type SourceSettings,
  startCrossChainStack,
} from "../../support/crosschain.ts";
import { asVersion1 } from "../../support/legacy-payments.ts";
import type { Stack } from "../../support/stack.ts";
import { usdc } from "../../support/test-chain.ts";

const SOURCE: SourceSettings = { confirmations: 2, pollIntervalMs: 100 };

let x: CrossChainStack;
let stack: Stack;

beforeAll(async () => {
  x = await startCrossChainStack({ source: SOURCE, logLevel: "warn" });
  stack = x.stack;
}, 60_000);

afterAll(async () => {
  await x?.stop();
});

/** A transfer's block on the source chain. */
async function sourceBlock(txHash: `0x${string}`): Promise<bigint> {
  return (await x.source.publicClient.getTransactionReceipt({ hash: txHash })).blockNumber;
}

/** Mines both chains until every earlier test's bridge has landed and been swept where it can be. */
function earlierBridgesDone(): Promise<unknown> {
  return stack.waitFor(
    async () => {
      await x.mineSource(1);
      await stack.mine(1);
      const open = await stack.sql<{ state: string; error: string | null }>(
        `SELECT b.state, b.error FROM bridges b JOIN payments p ON p.id = b.payment_id
         WHERE b.state IN ('credited', 'burned', 'attested')
            OR (b.state = 'minted' AND p.status IN ('settling', 'overpaid', 'confirmed'))`,
      );
      if (open.length > 0) throw new Error(JSON.stringify(open));
      return true;
    },
    30_000,
    "the earlier bridges to be done",
  );
}

describe("a plain transfer on the source chain", () => {
  test("is credited after the source chain's confirmations, with its chain and confirmations counted there", async () => {
    // An earlier test's burn landing on the source chain would add a block under the count below.
    await earlierBridgesDone();
    const payment = await stack.createPayment({ amount: "25.00" });
    expect(payment.deposit_address).toBeDefined();
    // The settlement chain far ahead: confirmations counted on it would be in the hundreds.
    await stack.mine(300);

    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("25.00"));
    const block = await sourceBlock(txHash);

    const synced = await stack.sync(payment.id, txHash, LOCAL_SOURCE.name);
    expect(synced.status).toBe(200);
    expect(synced.json.amount_received).toBeNull();
    expect(synced.json.incoming_transfers).toEqual([
      {
        chain: LOCAL_SOURCE.name,
        chain_id: LOCAL_SOURCE.chainId,
        tx_hash: txHash,
        amount: "25.00",
        confirmations: 0,
        confirmed: false,
        bridge: null, // not credited yet
      },
    ]);

    // One block on top: the watcher scans up to head - 2, which is still below the transfer.
    await x.mineSource(1);
    await x.sourceScanned(block - 1n, { mine: false });
    expect((await stack.getPayment(payment.id)).amount_received).toBeNull();

    await x.mineSource(1);
    const credited = await stack.waitFor(async () => {
      const p = await stack.getPayment(payment.id);
      return p.amount_received === "25.00" ? p : undefined;
    });
    expect(credited.transfers).toEqual([
      expect.objectContaining({
        chain: LOCAL_SOURCE.name,
        chain_id: LOCAL_SOURCE.chainId,
        tx_hash: txHash,
        amount: "25.00",
        block_number: Number(block),
        confirmed: true,
      }),
    ]);
    expect(
      await stack.sql("SELECT chain_id, credited_at IS NOT NULL AS credited FROM transfers WHERE tx_hash = ?", txHash),
    ).toEqual([{ chain_id: LOCAL_SOURCE.chainId, credited: 1 }]);
    // Counted on the source chain: the blocks on top of the transfer there (2, or more once this
    // payment's bridge transaction lands there too), never the settlement chain's hundreds.
    const view = await stack.waitFor(async () => {
      const v = await stack.publicPayment(payment.id);
      const onTop = Number((await x.source.publicClient.getBlockNumber({ cacheTime: 0 })) - block);
      return onTop >= 2 && v.incoming_transfers[0]?.confirmations === onTop ? v : undefined;
    });
    expect(view.incoming_transfers[0]).toMatchObject({ chain: LOCAL_SOURCE.name, confirmed: true });
    expect(view.amount_received).toBe("25.00");
  }, 30_000);

  test("adds up with an underpayment on the settlement chain", async () => {
    const payment = await stack.createPayment({ amount: "30.00" });
    await stack.pay(payment.deposit_address, usdc("10.00"));
    await stack.waitForStatus(payment.id, "underpaid", { mine: true });

    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("20.00"));
    await x.mineSource(SOURCE.confirmations);
    const paid = await stack.waitFor(async () => {
      const p = await stack.getPayment(payment.id);
      return p.amount_received === "30.00" ? p : undefined;
    });
    // Paid in full: settlement starts (what `confirmed` then needs is the bridging's part).
    const moved = await stack.mineUntil(async () => {
      const p = await stack.getPayment(payment.id);
      return p.status !== "underpaid" ? p : undefined;
    });
    expect(["settling", "confirmed"]).toContain(moved.status);
    expect((await stack.events(payment.id)).slice(0, 2)).toEqual(["payment.underpaid", "payment.settling"]);
    expect(paid.transfers).toHaveLength(2);
    expect(paid.transfers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ chain: stack.config.chain.name, amount: "10.00", confirmed: true }),
        expect.objectContaining({
          chain: LOCAL_SOURCE.name,
          chain_id: LOCAL_SOURCE.chainId,
          tx_hash: txHash,
          amount: "20.00",
          confirmed: true,
        }),
      ]),
    );
  }, 30_000);

  test("reorged away before its confirmations credits nothing", async () => {
    // The revert below must not take an earlier test's burn with it.
    await earlierBridgesDone();
    const payment = await stack.createPayment({ amount: "25.00" });
    const snapshot = await x.local.source.snapshot();
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("25.00"));
    const block = await sourceBlock(txHash);

    const synced = await stack.sync(payment.id, txHash, LOCAL_SOURCE.name);
    expect(synced.json.incoming_transfers).toEqual([
      expect.objectContaining({ chain: LOCAL_SOURCE.name, tx_hash: txHash, confirmed: false }),
    ]);
    expect(await stack.sql("SELECT credited_at FROM transfers WHERE tx_hash = ?", txHash)).toEqual([
      { credited_at: null },
    ]);

    await x.local.source.revert(snapshot);
    expect(await x.source.publicClient.getTransactionReceipt({ hash: txHash }).catch(() => null)).toBeNull();
    await x.mineSource(10);
    // The source watcher scans the new chain past the old transfer's block and finds nothing there.
    // Its cursor alone cannot tell (before it sees the reorg it may already stand past the block,
    // on the old chain): the transfer taken off the record can.
    await x.sourceScanned(block + 1n);
    await stack.waitFor(
      async () => (await stack.allEvents(payment.id)).includes("payment.funds_reversed") || undefined,
    );
    const after = await stack.getPayment(payment.id);
    // The merchant's record keeps it, as reversed; nothing was ever credited.
    expect(after).toMatchObject({ status: "pending", amount_received: null });
    expect(after.transfers).toEqual([expect.objectContaining({ tx_hash: txHash, confirmed: false, reversed: true })]);
    expect((await stack.publicPayment(payment.id)).incoming_transfers).toEqual([]);
    expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
    expect(await stack.allEvents(payment.id)).toEqual(["payment.funds_seen", "payment.funds_reversed"]);
  }, 30_000);
});

describe("a deposit address that cannot bridge from the source chain", () => {
  const kinds = {
    /** Version 3 with no messenger: made while cross-chain funding was off. */
    "issued while no source chain was enabled": async () => {
      await stack.restart({ STABLEGATE_CCTP_CUSTOM_SOURCES: "" });
      let payment: any;
      try {
        payment = await stack.createPayment({ amount: "25.00" });
      } finally {
        await stack.restart(x.sourceEnv(SOURCE));
      }
      expect(await stack.sql("SELECT factory_version, token_messenger FROM payments WHERE id = ?", payment.id)).toEqual(
        [{ factory_version: 3, token_messenger: zeroAddress }],
      );
      return payment;
    },
    /** Version 1, a contract only on the settlement chain. */
    "of version 1, from an older build": async () => {
      const payment = await asVersion1(stack, await stack.createPayment({ amount: "25.00" }));
      expect(await stack.sql("SELECT factory_version FROM payments WHERE id = ?", payment.id)).toEqual([
        { factory_version: 1 },
      ]);
      return payment;
    },
  };

  for (const [kind, issue] of Object.entries(kinds))
    test(`${kind}: is not credited for a transfer on the source chain, and the operator is warned`, async () => {
      const payment = await issue();
      const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("25.00"));
      const block = await sourceBlock(txHash);
      await x.sourceScanned(block + 1n);
      expect(await stack.getPayment(payment.id)).toMatchObject({
        status: "pending",
        amount_received: null,
        transfers: [],
      });
      expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
      expect(
        stack
          .logs()
          .filter((line) => line.level === "warn" && line.tx_hash === txHash)
          .map((line) => [line.msg, line.payment_id, line.chain_id]),
      ).toEqual([[expect.stringContaining("cannot bridge from there"), payment.id, LOCAL_SOURCE.chainId]]);

      const synced = await stack.sync(payment.id, txHash, LOCAL_SOURCE.name);
      expect(synced.status).toBe(422);
      expect(synced.json.error).toBe(
        `this payment's deposit address is valid only on ${stack.config.chain.name}; funds sent to it on ${LOCAL_SOURCE.name} are not credited`,
      );
      expect(await stack.sql("SELECT * FROM transfers WHERE payment_id = ?", payment.id)).toEqual([]);
    }, 60_000);
});

describe("POST /api/public/payments/{id}/sync with a chain", () => {
  /** The payment's transfers recorded on a chain other than the source chain. */
  const onOtherChains = (paymentId: string) =>
    stack.sql("SELECT * FROM transfers WHERE payment_id = ? AND chain_id != ?", paymentId, LOCAL_SOURCE.chainId);

  test("an unknown chain is 400 naming the chains allowed, and records nothing", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("1.00"));
    const res = await stack.sync(payment.id, txHash, "base");
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: `chain must be one of ${stack.config.chain.name}, ${LOCAL_SOURCE.name}` });
    const empty = await stack.sync(payment.id, txHash, "");
    expect(empty.status).toBe(400);
    expect(empty.json.error).toMatch(/^chain /);
    // Nothing on any chain but the source chain, whose own watcher records the transfer when it scans it.
    expect(await onOtherChains(payment.id)).toEqual([]);
  });

  test("without a chain looks on the settlement chain, where a source transaction is not found", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("1.00"));
    const res = await stack.sync(payment.id, txHash);
    // Unknown to the settlement chain's node: accepted as pending, as for a hash not relayed yet.
    expect(res.status).toBe(202);
    expect(await onOtherChains(payment.id)).toEqual([]);
  });
});

describe("/readyz per chain", () => {
  /** The chain's entry once its gas was read again (the injected clock moved past the minute). */
  async function gasReadAgain(name: string) {
    const before = (await stack.readyz()).chains.find((c: { name: string }) => c.name === name).relayer_gas.read_at;
    stack.clock.advance(61_000);
    return stack.waitFor(async () => {
      const entry = (await stack.readyz()).chains.find((c: { name: string }) => c.name === name);
      return entry.relayer_gas.read_at !== before ? entry : undefined;
    });
  }

  test("shows the settlement chain and the source chain, each with its watcher and the relayer's gas there", async () => {
    const relayer = (await stack.readyz()).chain.settlement.relayer;
    await x.mineSource(1);
    const ready = await stack.waitFor(async () => {
      const r = await stack.readyz();
      return r.chains.every(
        (c: { ok: boolean; relayer_gas: { balance_wei: string | null } }) => c.ok && c.relayer_gas.balance_wei,
      )
        ? r
        : undefined;
    });
    expect(ready.ok).toBe(true);
    expect(ready.chain).toMatchObject({ ok: true, chain: stack.config.chain.name, settlement: { relayer } });
    expect(
      ready.chains.map((c: { name: string; chain_id: number; role: string }) => [c.name, c.chain_id, c.role]),
    ).toEqual([
      [stack.config.chain.name, stack.config.chain.chainId, "settlement"],
      [LOCAL_SOURCE.name, LOCAL_SOURCE.chainId, "source"],
    ]);
    const [settlement, source] = ready.chains;
    expect(settlement).toMatchObject({ confirmations: stack.config.chain.confirmations, last_error: null });
    expect(source).toMatchObject({ confirmations: SOURCE.confirmations, last_error: null });
    for (const entry of ready.chains) {
      expect(BigInt(entry.head) - BigInt(entry.scanned_to)).toBe(BigInt(entry.lag_blocks));
      expect(entry.relayer_gas).toMatchObject({ relayer, low: false, ok: true, problem: null, last_error: null });
      expect(BigInt(entry.relayer_gas.low_below_wei)).toBeGreaterThan(0n);
    }
    // The balances themselves: read on each chain (exact figures in the next test, which sets them).
    expect(BigInt(source.relayer_gas.balance_wei)).toBeGreaterThan(0n);
    expect(BigInt(settlement.relayer_gas.balance_wei)).toBeGreaterThan(0n);
  });

  test("a relayer low on gas on the source chain is flagged there; with none, that chain's gas is not ok", async () => {
    const relayer = (await stack.readyz()).chain.settlement.relayer;
    const funded = await x.source.publicClient.getBalance({ address: relayer });
    try {
      await x.local.source.rpc("anvil_setBalance", [relayer, "0x1"]);
      const low = await gasReadAgain(LOCAL_SOURCE.name);
      expect(low.relayer_gas).toMatchObject({ balance_wei: "1", low: true, ok: true, problem: null });

      await x.local.source.rpc("anvil_setBalance", [relayer, "0x0"]);
      const none = await gasReadAgain(LOCAL_SOURCE.name);
      expect(none.relayer_gas).toMatchObject({
        balance_wei: "0",
        low: true,
        ok: false,
        problem: `the relayer ${relayer} has no gas on ${LOCAL_SOURCE.name}; fund it with the chain's native coin`,
      });
      // Only that chain: the settlement chain's relayer still has its gas.
      const settlement = (await stack.readyz()).chains[0];
      expect(settlement.relayer_gas).toMatchObject({ ok: true, low: false });
    } finally {
      await x.local.source.rpc("anvil_setBalance", [relayer, `0x${funded.toString(16)}`]);
      await gasReadAgain(LOCAL_SOURCE.name);
    }
  });
});

describe("a source chain whose RPC hangs", () => {
  test("does not delay a payment on the settlement chain", async () => {
    let held = 0;
    const hung = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        held++;
        return new Promise<Response>(() => {}); // never answers
      },
    });
    try {
      // The earlier tests' source payments bridged, and swept where paid in full, first: their
      // sweeps would land in the payout below (an underpaid payment's minted funds wait for the rest).
      await earlierBridgesDone();
      await stack.restart(x.sourceEnv({ ...SOURCE, rpcUrl: `http://127.0.0.1:${hung.port}` }));
      await stack.waitFor(() => held > 0, 10_000, "the source watcher to call the hung RPC");
      const sourceCursor = await x.sourceCursor();
      const payoutBefore = await stack.usdcBalance(stack.payout);

      const payment = await stack.createPayment({ amount: "25.00" });
      await stack.pay(payment.deposit_address, usdc("25.00"));
      const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
      expect(confirmed.amount_received).toBe("25.00");
      expect((await stack.usdcBalance(stack.payout)) - payoutBefore).toBe(usdc("25.00"));
      // All the while the source chain's watcher had no answer: it never got past its first call.
      expect(await x.sourceCursor()).toBe(sourceCursor);
      // /readyz answers from what each loop last saw: the source chain degraded, the settlement chain ok.
      const ready = await stack.readyz();
      expect(ready.chain.ok).toBe(true);
      expect(ready.chains.map((c: { name: string; ok: boolean }) => [c.name, c.ok])).toEqual([
        [stack.config.chain.name, true],
        [LOCAL_SOURCE.name, false],
      ]);
      expect(ready.chains[1].last_error).toBeString();
      expect(ready.chains[1].relayer_gas.ok).toBe(false);
    } finally {
      hung.stop(true);
      await stack.restart(x.sourceEnv(SOURCE));
    }
  }, 60_000);
});
