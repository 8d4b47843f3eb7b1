/**
 * Any chain in, end to end on two anvils with the local CCTP rig: a plain USDC transfer to a
 * payment's deposit address on the source chain is bridged by the address itself and settled
 * to the merchant on the settlement chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWalletClient, getAddress, type Hex, http, maxUint256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { factoryV3Address, forwarderV3Address } from "../../../src/chain/deposit-v3.ts";
import {
  CCTP_DEPLOYER_KEY,
  cctpAddresses,
  testMessageTransmitterV2Abi,
  testTokenMessengerV2Abi,
} from "../../../src/dev/cctp-rig.ts";
import { formatExact } from "../../../src/lib/money.ts";
import { ANVIL_KEY_4 } from "../../support/anvil.ts";
import {
  bridgedOnSource,
  bridgesOf,
  mineBothUntil,
  payOnSource,
  sourceBalance,
  untilBridge,
  untilStatus,
} from "../../support/bridging.ts";
import { atNode, undeploy } from "../../support/chain.ts";
import { attestedBurn, type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { createDashboardUser, signIn } from "../../support/dashboard.ts";
import { usdc } from "../../support/test-chain.ts";

let x: CrossChainStack;

beforeAll(async () => {
  x = await startCrossChainStack({ attestationDelayMs: 0 });
}, 60_000);

afterAll(() => x?.stop());

/** Rounds the settler has finished, as /readyz shows them. */
const settlerRounds = async (): Promise<number> => (await x.stack.readyz()).chain.settlement.rounds;

/** Resolves once the settler has finished `n` more rounds: what it was going to do by now, it did. */
async function settlerLooked(n: number): Promise<void> {
  const before = await settlerRounds();
  await x.stack.waitFor(async () => (await settlerRounds()) >= before + n, 15_000, `${n} more settler rounds`);
}

/** What the attested message of a bridge's burn says: the amount burned and the fee CCTP kept. */
async function attestedOf(burnTxHash: string) {
  const [message] = await x.attested(burnTxHash as Hex);
  return attestedBurn(message!.message);
}

describe("a plain transfer on a source chain", () => {
  test("reaches confirmed; the payout gets the amount less the bridge fee; bridge_fee and each state shown", async () => {
    const payment = await x.stack.createPayment({ amount: "25.00" });
    const payoutBefore = await x.stack.usdcBalance(x.stack.payout);
    const txHash = await payOnSource(x, payment.deposit_address, usdc("25.00"));

    const confirmed = await untilStatus(x, payment.id, "confirmed");
    const [bridge, ...more] = await bridgesOf(x, payment.id);
    expect(more).toEqual([]);
    expect(bridge).toMatchObject({ state: "settled", chain_id: LOCAL_SOURCE.chainId, error: null });
    const { amount: burned, feeExecuted } = await attestedOf(bridge!.burn_tx_hash!);
    expect(burned).toBe(usdc("25.00"));
    expect(feeExecuted).toBeGreaterThan(0n);

    // Credited once, for what the payer sent: the mint is not a second payment.
    expect(confirmed.amount_received).toBe("25.00");
    expect(usdc(confirmed.bridge_fee)).toBe(feeExecuted);
    expect(confirmed.transfers).toEqual([
      expect.objectContaining({
        chain: LOCAL_SOURCE.name,
        chain_id: LOCAL_SOURCE.chainId,
        tx_hash: txHash,
        amount: "25.00",
        confirmed: true,
        bridge: {
          state: "settled",
          fee: confirmed.bridge_fee,
          burn_tx_hash: bridge!.burn_tx_hash,
          mint_tx_hash: bridge!.mint_tx_hash,
        },
      }),
    ]);
    // The redeemer minted the address's own burn once; the payer's burns list stays empty.
    expect(confirmed.cross_chain_transfers).toEqual([]);
    expect(await x.mintsTo(payment.deposit_address)).toEqual([burned - feeExecuted]);
    expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toHaveLength(1);

    // The payout has the funds on the settlement chain (no platform fee on this account).
    expect((await x.stack.usdcBalance(x.stack.payout)) - payoutBefore).toBe(usdc("25.00") - feeExecuted);
    expect(await x.stack.usdcBalance(payment.deposit_address)).toBe(0n);
    expect(await sourceBalance(x, payment.deposit_address)).toBe(0n);
    expect(await x.stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);

    // The payer's page follows the funds too, without the merchant's fee.
    const pub = await x.stack.publicPayment(payment.id);
    expect(pub.incoming_transfers).toEqual([
      expect.objectContaining({
        tx_hash: txHash,
        confirmed: true,
        bridge: { state: "settled", burn_tx_hash: bridge!.burn_tx_hash, mint_tx_hash: bridge!.mint_tx_hash },
      }),
    ]);
    expect(JSON.stringify(pub)).not.toContain("bridge_fee");

    // The merchant's page: the transfer on its network, and the bridge fee out of what they net.
    const client = await signIn(x.stack.url, await createDashboardUser(x.stack.env, x.stack.accountId));
    const page = await (await client.get(`/dashboard/payments/${payment.id}`)).text();
    expect(page).toContain(`<dt>Bridge fee</dt><dd>${confirmed.bridge_fee} USDC</dd>`);
    expect(page).toContain(`<dt>Net to you</dt><dd>${formatExact(usdc("25.00") - feeExecuted)} USDC</dd>`);
    expect(page).toContain(`<td>${LOCAL_SOURCE.name}</td>`);
  }, 60_000);

  test("under the fast policy: from a plain transfer to confirmed without a block mined on top on either chain", async () => {
    const payment = await x.stack.createPayment({ amount: "5.00", speed: "fast" });
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("5.00"));
    const paidIn = (await x.source.publicClient.getTransactionReceipt({ hash: txHash })).blockNumber;
    // Credited in its block, burned in the next (the bridge), minted and swept on the settlement chain.
    const confirmed = await x.stack.waitForStatus(payment.id, "confirmed", { mine: false, timeoutMs: 30_000 });
    expect(confirmed.amount_received).toBe("5.00");
    const [bridge] = await bridgesOf(x, payment.id);
    expect(bridge).toMatchObject({ state: "settled", min_finality: 1000 });
    expect(await x.source.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(paidIn + 1n);
  }, 60_000);

  test("under the final policy: credited at the source chain's finalized block and burned at standard finality", async () => {
    const payment = await x.stack.createPayment({ amount: "5.00", speed: "final" });
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("5.00"));
    // Anvil's finalized block trails its head by two epochs of 32 slots: 64 blocks at once.
    await x.mineSource(64);
    const bridge = await untilBridge(x, payment.id, (row) => row.burn_tx_hash !== null, "the burn");
    // Circle attests a standard burn once it is final on its chain; the source allows fast, the policy does not.
    expect(bridge.min_finality).toBe(2000);
    const [credited] = await x.stack.sql<{ credited_at: number | null }>(
      "SELECT credited_at FROM transfers WHERE tx_hash = ?",
      txHash,
    );
    expect(credited!.credited_at).not.toBeNull();
    // Carried to the end, so nothing of it lands on the shared payout during another test.
    await untilStatus(x, payment.id, "confirmed", 60_000);
  }, 90_000);

  test("underpaid on the source chain, completed on the settlement chain: both add up, one settlement", async () => {
    const payment = await x.stack.createPayment({ amount: "10.00" });
    await payOnSource(x, payment.deposit_address, usdc("4.00"));
    const underpaid = await x.stack.getPayment(payment.id);
    expect(underpaid).toMatchObject({ status: "underpaid", amount_received: "4.00" });
    // Bridged while underpaid: the funds move, the status waits for the rest.
    await mineBothUntil(
      x,
      async () => (await bridgesOf(x, payment.id))[0]?.state === "minted",
      "the first part to be minted",
    );
    expect((await x.stack.getPayment(payment.id)).status).toBe("underpaid");

    await x.stack.pay(payment.deposit_address, usdc("6.00"));
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    const [bridge] = await bridgesOf(x, payment.id);
    const { feeExecuted } = await attestedOf(bridge!.burn_tx_hash!);
    expect(confirmed.amount_received).toBe("10.00");
    expect(usdc(confirmed.bridge_fee)).toBe(feeExecuted);
    const byChain = (t: { chain: string; bridge: { state: string } | null }) => `${t.chain}:${t.bridge?.state ?? "-"}`;
    expect(confirmed.transfers.map(byChain).sort()).toEqual(
      [`${LOCAL_SOURCE.name}:settled`, `${x.stack.config.chain.name}:-`].sort(),
    );
    expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toHaveLength(1);
    expect(await x.stack.usdcBalance(payment.deposit_address)).toBe(0n);
  }, 60_000);

  test("underpaid on the settlement chain, completed on the source chain: not settled before the bridged part lands", async () => {
    const payment = await x.stack.createPayment({ amount: "10.00" });
    await x.stack.pay(payment.deposit_address, usdc("6.00"));
    await x.stack.waitForStatus(payment.id, "underpaid", { mine: true });
    x.local.attestation.setMode("down");
    try {
      await payOnSource(x, payment.deposit_address, usdc("4.00"));
      // Paid in full and on its way: settling, but nothing swept while the bridge is open.
      await x.stack.waitForStatus(payment.id, "settling");
      await settlerLooked(2);
      expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toEqual([]);
    } finally {
      x.local.attestation.setMode("normal");
    }
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    const fee = usdc(confirmed.bridge_fee);
    expect(fee).toBeGreaterThan(0n);
    // One settlement swept both parts.
    expect(await x.stack.sql("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
      { state: "mined" },
    ]);
    const [{ settled }] = (await x.stack.sql<{ settled: number }>(
      "SELECT amount_settled AS settled FROM payments WHERE id = ?",
      payment.id,
    )) as [{ settled: number }];
    expect(BigInt(settled)).toBe(usdc("10.00") - fee);
    expect(await x.stack.usdcBalance(payment.deposit_address)).toBe(0n);
  }, 60_000);

  test("late funds on the source chain after confirmed: bridged, swept, announced as funds_received", async () => {
    const payment = await x.stack.createPayment({ amount: "3.00" });
    await payOnSource(x, payment.deposit_address, usdc("3.00"));
    await untilStatus(x, payment.id, "confirmed");
    await payOnSource(x, payment.deposit_address, usdc("1.50"));
    const swept = await mineBothUntil(
      x,
      async () => {
        const p = await x.stack.getPayment(payment.id);
        return (await bridgesOf(x, payment.id)).every((b) => b.state === "settled") && p.transfers.length === 2 && p;
      },
      "the late funds to be bridged and swept",
    );
    expect(swept).toMatchObject({ status: "confirmed", amount_received: "4.50" });
    const fees = (await bridgesOf(x, payment.id)).map((b) => BigInt(b.fee!));
    expect(fees).toHaveLength(2);
    expect(usdc(swept.bridge_fee)).toBe(fees[0]! + fees[1]!);
    expect(await x.stack.events(payment.id)).toEqual([
      "payment.settling",
      "payment.confirmed",
      "payment.funds_received",
    ]);
    // What was owed is what was swept: received less the bridge fees, nothing counted twice
    // however often the settler looks again at the emptied address.
    await settlerLooked(3);
    const [row] = await x.stack.sql<{ received: number; settled: number; fee: number }>(
      "SELECT amount_received AS received, amount_settled AS settled, bridge_fee AS fee FROM payments WHERE id = ?",
      payment.id,
    );
    expect(BigInt(row!.settled)).toBe(BigInt(row!.received) - BigInt(row!.fee));
    expect(await x.stack.sql("SELECT state FROM settlements WHERE payment_id = ?", payment.id)).toEqual([
      { state: "mined" },
      { state: "mined" },
    ]);
  }, 60_000);

  test("an attestation outage changes nothing but time: the bridge waits, saying why, then completes once", async () => {
    const payment = await x.stack.createPayment({ amount: "2.00" });
    x.local.attestation.setMode("down");
    try {
      await payOnSource(x, payment.deposit_address, usdc("2.00"));
      // Circle's fee cannot be read: nothing is burned, and the bridge says why.
      const waiting = await x.stack.waitFor(
        async () => (await bridgesOf(x, payment.id)).find((b) => b.error !== null && b.attempts >= 2),
        15_000,
        "the bridge to retry",
      );
      expect(waiting).toMatchObject({ state: "credited", tx_hash: null });
      expect(waiting.error).toMatch(/attestation service answered 503/);
      const ready = await x.stack.readyz();
      expect(ready.chain.bridging).toEqual([
        expect.objectContaining({ chain: LOCAL_SOURCE.name, open: 1, last_error: expect.stringMatching(/503/) }),
      ]);
    } finally {
      x.local.attestation.setMode("normal");
    }
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    expect(confirmed.amount_received).toBe("2.00");
    expect(await x.mintsTo(payment.deposit_address)).toHaveLength(1);
    expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toHaveLength(1);
  }, 60_000);

  test("a balance above Circle's per-message burn limit is bridged in several burns, all settled at once", async () => {
    const owner = createWalletClient({
      chain: { ...foundry, id: LOCAL_SOURCE.chainId },
      transport: http(x.local.source.rpcUrl),
      account: privateKeyToAccount(CCTP_DEPLOYER_KEY),
    });
    const setLimit = async (limit: bigint) =>
      x.source.publicClient.waitForTransactionReceipt({
        hash: await owner.writeContract({
          address: cctpAddresses.tokenMessenger,
          abi: testTokenMessengerV2Abi,
          functionName: "setMaxBurnAmountPerMessage",
          args: [x.source.usdc, limit],
        }),
      });
    await setLimit(usdc("4.00"));
    try {
      const payment = await x.stack.createPayment({ amount: "10.00" });
      await payOnSource(x, payment.deposit_address, usdc("10.00"));
      const confirmed = await untilStatus(x, payment.id, "confirmed");
      const bridges = await bridgesOf(x, payment.id);
      expect(bridges.map((b) => [b.state, BigInt(b.amount!)])).toEqual([
        ["settled", usdc("4.00")],
        ["settled", usdc("4.00")],
        ["settled", usdc("2.00")],
      ]);
      const fees = bridges.reduce((sum, b) => sum + BigInt(b.fee!), 0n);
      expect(usdc(confirmed.bridge_fee)).toBe(fees);
      // The transfer is carried by the first burn; the others took what the limit left.
      expect(confirmed.transfers).toEqual([
        expect.objectContaining({ amount: "10.00", bridge: expect.objectContaining({ state: "settled" }) }),
      ]);
      expect(await x.mintsTo(payment.deposit_address)).toHaveLength(3);
      expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toHaveLength(1);
      expect(await sourceBalance(x, payment.deposit_address)).toBe(0n);
      expect(await x.stack.usdcBalance(payment.deposit_address)).toBe(0n);
    } finally {
      await setLimit(maxUint256);
    }
  }, 60_000);

  test("no relayer gas on the source chain: its bridge waits, saying so, the settlement chain goes on; funded, it completes", async () => {
    const relayer = (await x.stack.readyz()).chain.settlement.relayer;
    const funded = await x.source.publicClient.getBalance({ address: relayer });
    const payment = await x.stack.createPayment({ amount: "1.00" });
    await x.local.source.rpc("anvil_setBalance", [relayer, "0x0"]);
    try {
      await gasReadAgain(LOCAL_SOURCE.name);
      await payOnSource(x, payment.deposit_address, usdc("1.00"));
      const waiting = await x.stack.waitFor(
        async () => (await bridgesOf(x, payment.id)).find((b) => b.error?.includes("has no gas")),
        15_000,
        "the bridge to wait for gas",
      );
      expect(waiting).toMatchObject({ state: "credited", tx_hash: null });
      expect(waiting.error).toBe(
        `the relayer ${relayer} has no gas on ${LOCAL_SOURCE.name}; fund it with the chain's native coin`,
      );
      expect((await x.stack.readyz()).chain.bridging).toEqual([
        expect.objectContaining({ chain: LOCAL_SOURCE.name, last_error: waiting.error }),
      ]);
      // The settlement chain is not held up.
      const direct = await x.stack.createPayment({ amount: "1.00" });
      await x.stack.pay(direct.deposit_address, usdc("1.00"));
      await x.stack.waitForStatus(direct.id, "confirmed", { mine: true });
      expect(await bridgesOf(x, payment.id)).toEqual([expect.objectContaining({ state: "credited", tx_hash: null })]);
    } finally {
      await x.local.source.rpc("anvil_setBalance", [relayer, `0x${funded.toString(16)}`]);
      await gasReadAgain(LOCAL_SOURCE.name);
    }
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    expect(confirmed.amount_received).toBe("1.00");
  }, 60_000);
});

describe("a source chain whose deposit factory went away (a reorg took its deployment)", () => {
  test("the bridge finds no factory, deploys it again, and completes", async () => {
    // A first bridge: the factory is deployed on the source chain, and the bridger knows it is.
    const first = await x.stack.createPayment({ amount: "5.00" });
    await payOnSource(x, first.deposit_address, usdc("5.00"));
    await untilStatus(x, first.id, "confirmed");

    // Then a reorg takes the deployment of the factory new payments bridge through (version 3)
    // and of the forwarder it created.
    await undeploy(x.local.source, [factoryV3Address, forwarderV3Address]);

    const second = await x.stack.createPayment({ amount: "6.00" });
    await payOnSource(x, second.deposit_address, usdc("6.00"));
    const confirmed = await untilStatus(x, second.id, "confirmed");
    expect(confirmed.amount_received).toBe("6.00");
    for (const address of [factoryV3Address, forwarderV3Address])
      expect(await x.source.publicClient.getCode({ address })).toMatch(/^0x[0-9a-f]{2,}$/);
    expect((await bridgesOf(x, second.id)).map((b) => b.state)).toEqual(["settled"]);
  }, 60_000);
});

describe("a bridge's message relayed by someone else", () => {
  test("before the burn has its confirmations: the mint is recognised as the bridge's, nothing relayed twice", async () => {
    const payment = await x.stack.createPayment({ amount: "3.30" });
    await payOnSource(x, payment.deposit_address, usdc("3.30"));
    // Mined at once (automine), then no block on top: the server waits for the burn's confirmation.
    const sent = await x.stack.waitFor(
      async () => (await bridgesOf(x, payment.id))[0]?.tx_hash,
      15_000,
      "the bridge to be sent",
    );
    await x.source.publicClient.waitForTransactionReceipt({ hash: sent as Hex });
    const signed = await x.stack.waitFor(
      async () => {
        const res = await fetch(
          `${x.local.attestation.url}/v2/messages/${LOCAL_SOURCE.domain}?transactionHash=${sent}`,
        );
        if (!res.ok) return undefined;
        const [m] = ((await res.json()) as { messages: Array<{ message: Hex; attestation: string; status: string }> })
          .messages;
        return m?.status === "complete" ? m : undefined;
      },
      15_000,
      "Circle's attestation",
    );
    // A stranger (anyone may) receives it on the settlement chain first.
    const stranger = createWalletClient({
      chain: { ...foundry, id: x.chain.anvil.chainId },
      transport: http(x.chain.rpcUrl),
      account: privateKeyToAccount(ANVIL_KEY_4),
    });
    const received = await x.chain.publicClient.waitForTransactionReceipt({
      hash: await stranger.writeContract({
        address: cctpAddresses.messageTransmitter,
        abi: testMessageTransmitterV2Abi,
        functionName: "receiveMessage",
        args: [signed.message, signed.attestation as Hex],
      }),
    });
    // Not yet recognised, unless other work of the server mined the mint's confirmations meanwhile
    // (read the state first: the head read after it is at least what the watcher had seen).
    const state = (await bridgesOf(x, payment.id))[0]!.state;
    expect(["credited", "minted"]).toContain(state);
    if (state === "minted")
      expect(await x.chain.publicClient.getBlockNumber()).toBeGreaterThanOrEqual(
        received.blockNumber + BigInt(x.stack.config.chain.confirmations),
      );
    // The settlement chain's watcher sees the mint while the burn still waits for its block on top.
    await x.stack.mineUntil(
      async () => (await bridgesOf(x, payment.id))[0]!.state === "minted",
      15_000,
      "the mint recognised",
    );

    const confirmed = await untilStatus(x, payment.id, "confirmed");
    const [bridge, ...more] = await bridgesOf(x, payment.id);
    expect(more).toEqual([]);
    expect(bridge).toMatchObject({ state: "settled", amount: Number(usdc("3.30")) });
    expect(confirmed.amount_received).toBe("3.30");
    expect(usdc(confirmed.bridge_fee)).toBe(attestedBurn(signed.message).feeExecuted);
    expect(await x.mintsTo(payment.deposit_address)).toHaveLength(1);
    expect(await x.messagesReceived(attestedBurn(signed.message).nonce)).toHaveLength(1);
    expect(await x.stack.sql("SELECT * FROM settlements WHERE payment_id = ?", payment.id)).toHaveLength(1);
    // Its burn, once confirmed, was not handed to the redeemer: the mint had landed already.
    expect(await x.burns(payment.id)).toEqual([]);
  }, 60_000);
});

describe("a bridge transaction stuck in the source chain's mempool", () => {
  test("is replaced on its nonce with higher fees, and the replacement burns once", async () => {
    const payment = await x.stack.createPayment({ amount: "2.50" });
    await x.sourceTransfer(getAddress(payment.deposit_address), usdc("2.50"));
    await x.local.source.rpc("evm_setAutomine", [false]);
    try {
      await x.mineSource(1); // the transfer's confirmation: credited, and the bridge sent into the mempool
      const sent = await x.stack.waitFor(
        async () => (await bridgesOf(x, payment.id))[0]?.tx_hash,
        15_000,
        "the bridge to be sent",
      );
      const original = await atNode(x.source.publicClient, sent as Hex);
      expect(original.blockNumber).toBeNull();
      // Held by the node past the stuck threshold (30 s, by the stack's clock): outbid.
      x.stack.clock.advance(31_000);
      const replaced = await x.stack.waitFor(
        async () =>
          (await bridgesOf(x, payment.id)).find((b) => (JSON.parse(b.tx_hashes ?? "[]") as string[]).length === 2),
        15_000,
        "the bridge to be replaced",
      );
      expect(JSON.parse(replaced.tx_hashes!)).toEqual([sent, replaced.tx_hash]);
      expect(replaced.nonce).toBe((await bridgesOf(x, payment.id))[0]!.nonce);
      const replacement = await atNode(x.source.publicClient, replaced.tx_hash as Hex);
      expect(replacement.nonce).toBe(original.nonce);
      expect(replacement.maxFeePerGas!).toBeGreaterThan(original.maxFeePerGas!);
    } finally {
      await x.local.source.rpc("evm_setAutomine", [true]);
    }
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    expect(confirmed.amount_received).toBe("2.50");
    const [bridge] = await bridgesOf(x, payment.id);
    expect(bridge!.burn_tx_hash).toBe(bridge!.tx_hash);
    const burns = await bridgedOnSource(x, payment.id);
    expect(burns.map((b) => b.transactionHash as string)).toEqual([bridge!.tx_hash!]);
  }, 60_000);
});

/** Lets the relayer-gas loop of `name` read the balance again (it reads once a minute, by the stack's clock). */
async function gasReadAgain(name: string) {
  const entry = async () => (await x.stack.readyz()).chains.find((c: { name: string }) => c.name === name);
  const before = (await entry()).relayer_gas.read_at;
  x.stack.clock.advance(61_000);
  return x.stack.waitFor(async () => {
    const now = await entry();
    return now.relayer_gas.read_at !== before ? now : undefined;
  });
}
