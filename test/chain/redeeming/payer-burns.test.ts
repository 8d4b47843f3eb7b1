/**
 * Cross-chain funding through the real server (DESIGN.md §8): a second anvil as the source
 * chain, the CCTP rig on both, the local attestation service, and the in-process server
 * quoting, recording and redeeming burns onto the settlement chain.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, decodeFunctionData, erc20Abi, getAddress, type Hex, pad, toHex, zeroHash } from "viem";
import { tokenMessengerAbi } from "../../../src/chain/cctp-abi.ts";
import { cctpAddresses } from "../../../src/dev/cctp-rig.ts";
import { ANVIL_KEY_3 } from "../../support/anvil.ts";
import {
  attestedBurn,
  type CrossChainStack,
  feeAt,
  LOCAL_DESTINATION_DOMAIN,
  LOCAL_SOURCE,
  startCrossChainStack,
} from "../../support/crosschain.ts";
import { type Stack, startStack } from "../../support/stack.ts";
import { randomAddress, usdc } from "../../support/test-chain.ts";
import { redeemerRanSince } from "../../support/wait.ts";

const FAST_BPS = 1; // the local attestation service's fast fee; standard is free

let x: CrossChainStack;
let stack: Stack;
/** A payment paid by a fast transfer, redeemed and confirmed: made by the first test that asks. */
let paidOnce: Promise<{ id: string; burnTxHash: Hex; burnId: string }> | undefined;
function paidPayment() {
  paidOnce ??= (async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const { burnTxHash, record } = await x.payCrossChain(payment.id, "fast");
    await x.waitBurn(payment.id, "redeemed");
    await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    return { id: payment.id, burnTxHash, burnId: record.id };
  })();
  return paidOnce;
}

beforeAll(async () => {
  x = await startCrossChainStack({ attestationDelayMs: 200 });
  stack = x.stack;
}, 30_000);

afterAll(async () => {
  await x?.stop();
});

describe("GET /api/public/payments/{id}/cross-chain", () => {
  test("lists the configured source chain", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const res = await x.crossChain(payment.id);
    expect(res.status).toBe(200);
    expect(res.json.data).toHaveLength(1);
    const [source] = res.json.data;
    expect(source).toMatchObject({
      name: LOCAL_SOURCE.name,
      chain_id: LOCAL_SOURCE.chainId,
      domain: LOCAL_SOURCE.domain,
    });
    expect(source.fast_seconds).toBeGreaterThan(0);
    expect(source.standard_seconds).toBeGreaterThan(source.fast_seconds);
  });

  test("?chain= quotes fast and standard with the fee endpoint's rates and the exact wallet calls", async () => {
    const payment = await stack.createPayment({ amount: "25.00" });
    const deposit = getAddress(payment.deposit_address);
    const res = await x.crossChain(payment.id, LOCAL_SOURCE.name);
    expect(res.status).toBe(200);
    const quote = res.json;
    expect(quote).toMatchObject({
      chain: LOCAL_SOURCE.name,
      chain_id: LOCAL_SOURCE.chainId,
      domain: LOCAL_SOURCE.domain,
      destination_domain: LOCAL_DESTINATION_DOMAIN,
      amount_due: "25.00",
      needed: true,
    });

    const feeRes = await fetch(
      `${x.local.attestation.url}/v2/burn/USDC/fees/${LOCAL_SOURCE.domain}/${LOCAL_DESTINATION_DOMAIN}`,
    );
    const fees = (await feeRes.json()) as Array<{ finalityThreshold: number; minimumFee: number }>;
    const feeFor = (threshold: number) => fees.find((f) => f.finalityThreshold === threshold)!.minimumFee;
    expect(feeFor(1000)).toBe(FAST_BPS);
    for (const [kind, feeBps, finality] of [
      ["fast", feeFor(1000), 1000],
      ["standard", feeFor(2000), 2000],
    ] as const) {
      const option = quote[kind];
      expect(option).toMatchObject({ available: true, fee_bps: feeBps, min_finality_threshold: finality });
      const burn = usdc(option.burn_amount);
      const maxFee = usdc(option.max_fee);
      // The burn covers maxFee in full, so at least the amount due is minted whatever the fee.
      expect(burn - maxFee).toBeGreaterThanOrEqual(usdc("25.00"));
      if (feeBps > 0) expect(maxFee).toBeGreaterThan(feeAt(burn, feeBps));
      else expect(maxFee).toBe(0n);

      expect(option.calls).toHaveLength(2);
      const [approve, deposit4Burn] = option.calls as Array<{ to: Address; data: Hex; value: string }>;
      expect(getAddress(approve!.to)).toBe(x.source.usdc);
      expect(approve!.value).toBe("0");
      const approveCall = decodeFunctionData({ abi: erc20Abi, data: approve!.data });
      expect(approveCall.functionName).toBe("approve");
      expect(approveCall.args).toEqual([cctpAddresses.tokenMessenger, burn]);

      expect(getAddress(deposit4Burn!.to)).toBe(cctpAddresses.tokenMessenger);
      expect(deposit4Burn!.value).toBe("0");
      const burnCall = decodeFunctionData({ abi: tokenMessengerAbi, data: deposit4Burn!.data });
      expect(burnCall.functionName).toBe("depositForBurn");
      expect(burnCall.args).toEqual([
        burn,
        LOCAL_DESTINATION_DOMAIN,
        pad(deposit, { size: 32 }).toLowerCase() as Hex,
        x.source.usdc,
        zeroHash,
        maxFee,
        finality,
      ]);
    }
  });

  test("an unknown or unconfigured chain is 400", async () => {
    const payment = await stack.createPayment({ amount: "1.00" });
    for (const name of ["base", "nowhere", ""]) {
      const res = await x.crossChain(payment.id, name);
      expect(res.status).toBe(400);
      expect(typeof res.json.error).toBe("string");
    }
  });

  test("a server with the cross-chain env but no sources lists none and refuses quotes and burns", async () => {
    const bare = await startStack({ chain: x.chain, relayerKey: ANVIL_KEY_3 });
    try {
      await bare.restart({ ...x.local.env, STABLEGATE_CCTP_CUSTOM_SOURCES: "" });
      expect(bare.config.crossChain).toBeNull();
      const payment = await bare.createPayment({ amount: "1.00" });
      const list = await bare.request(`/api/public/payments/${payment.id}/cross-chain`, { auth: false });
      expect(list).toMatchObject({ status: 200, json: { data: [] } });
      const quote = await bare.request(`/api/public/payments/${payment.id}/cross-chain?chain=${LOCAL_SOURCE.name}`, {
        auth: false,
      });
      expect(quote.status).toBe(400);
      const post = await bare.request(`/api/public/payments/${payment.id}/cross-chain`, {
        body: { chain: LOCAL_SOURCE.name, tx_hash: `0x${"ab".repeat(32)}` },
        auth: false,
      });
      expect(post.status).toBe(400);
    } finally {
      await bare.stop();
    }
  });

  test("a built-in source chain without fast transfers quotes standard only", async () => {
    // Avalanche has no CCTP fast transfers (the chain table's fastSource); a quote never touches its RPC.
    const slow = await startStack({ chain: x.chain, relayerKey: ANVIL_KEY_3 });
    try {
      await slow.restart({ ...x.local.env, STABLEGATE_CCTP_SOURCES: "avalanche=http://127.0.0.1:9" });
      const payment = await slow.createPayment({ amount: "3.00" });
      const list = await slow.request(`/api/public/payments/${payment.id}/cross-chain`, { auth: false });
      const avalanche = list.json.data.find((s: { name: string }) => s.name === "avalanche");
      expect(avalanche).toMatchObject({ domain: 1, fast_seconds: null });
      const quote = await slow.request(`/api/public/payments/${payment.id}/cross-chain?chain=avalanche`, {
        auth: false,
      });
      expect(quote.status).toBe(200);
      expect(quote.json.fast).toEqual({ available: false });
      expect(quote.json.standard).toMatchObject({
        available: true,
        fee_bps: 0,
        burn_amount: "3.00",
        estimated_seconds: 8,
      });
    } finally {
      await slow.stop();
    }
  });
});

describe("paying from the source chain", () => {
  test("is redeemed to the deposit address and the payment confirmed and settled to the merchant", async () => {
    const before = await stack.usdcBalance(stack.payout);
    const payment = await stack.createPayment({ amount: "25.00" });
    const { burnTxHash, record } = await x.payCrossChain(payment.id, "fast");
    expect(record).toMatchObject({
      chain: LOCAL_SOURCE.name,
      tx_hash: burnTxHash.toLowerCase(),
      state: "attesting",
      error: null,
    });
    expect(record.id).toMatch(/^burn_/);
    // Posted again while in flight, several at once: the same record every time.
    const repeats = await Promise.all(
      [1, 2, 3].map(() => x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: burnTxHash })),
    );
    for (const repeat of repeats) expect(repeat).toMatchObject({ status: 202, json: { id: record.id } });

    const row = await x.waitBurn(payment.id, "redeemed");
    const { mintRecipient, amount: minted, feeCollected } = await x.minted(row.redeem_tx_hash as Hex);
    expect(mintRecipient).toBe(getAddress(payment.deposit_address));
    expect(minted + feeCollected).toBe(BigInt(row.amount!)); // the burned amount
    expect(minted).toBeGreaterThanOrEqual(usdc("25.00"));

    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(usdc(confirmed.amount_received)).toBe(minted);
    expect((await stack.usdcBalance(stack.payout)) - before).toBe(minted);
    // The quote's fee margin minted a little more than due: not reported as an overpayment.
    expect(minted).toBeGreaterThan(usdc("25.00"));
    expect(await stack.events(payment.id)).toEqual(["payment.settling", "payment.confirmed"]);
    expect(await stack.usdcBalance(payment.deposit_address)).toBe(0n);

    const burnView = {
      id: record.id,
      chain: LOCAL_SOURCE.name,
      tx_hash: burnTxHash.toLowerCase(),
      state: "redeemed",
      redeem_tx_hash: row.redeem_tx_hash,
      error: null,
    };
    expect(confirmed.cross_chain_transfers).toEqual([expect.objectContaining(burnView)]);
    expect(usdc(confirmed.cross_chain_transfers[0].amount)).toBe(BigInt(row.amount!));
    const publicView = await stack.publicPayment(payment.id);
    expect(publicView.cross_chain_transfers).toEqual([expect.objectContaining(burnView)]);
    expect(publicView.status).toBe("confirmed");
    expect(await x.messagesReceived(row.message_nonce as Hex)).toHaveLength(1);

    // The fee charged is the fast rate on the burn, within the quote's maxFee.
    const [message] = await x.attested(burnTxHash);
    const fee = attestedBurn(message!.message);
    expect(fee.feeExecuted).toBe(feeAt(fee.amount, FAST_BPS));
    expect(fee.feeExecuted).toBe(feeCollected);
  }, 30_000);

  test("a standard transfer (no fee) mints exactly the amount due", async () => {
    const payment = await stack.createPayment({ amount: "4.20" });
    const { record } = await x.payCrossChain(payment.id, "standard");
    expect(record).toMatchObject({ state: "attesting" });
    const row = await x.waitBurn(payment.id, "redeemed");
    expect(BigInt(row.amount!)).toBe(usdc("4.20"));
    expect(await x.mintsTo(payment.deposit_address)).toEqual([usdc("4.20")]);
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("4.20");
  }, 30_000);

  test("a fast burn of the payer's own with a larger maxFee than quoted is still overpaid", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const txHash = await x.burn({
      amount: usdc("6.00"),
      maxFee: usdc("1.00"),
      finality: 1000,
      mintRecipient: getAddress(payment.deposit_address),
    });
    expect((await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash })).status).toBe(202);
    const row = await x.waitBurn(payment.id, "redeemed");
    const { amount: minted, feeCollected } = await x.minted(row.redeem_tx_hash as Hex);
    expect(feeCollected).toBe(feeAt(usdc("6.00"), FAST_BPS));
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(usdc(confirmed.amount_received)).toBe(minted);
    expect(await stack.events(payment.id)).toEqual(["payment.overpaid", "payment.confirmed"]);
  }, 30_000);

  test("a confirmed payment's quote says nothing more is needed", async () => {
    const paid = await paidPayment();
    const res = await x.crossChain(paid.id, LOCAL_SOURCE.name);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ needed: false, amount_due: "0.00" });
    expect(res.json.fast).toBeUndefined();
  }, 30_000);
});

describe("POST /api/public/payments/{id}/cross-chain", () => {
  test("posting a burn again answers the same record and adds no row", async () => {
    const paid = await paidPayment();
    const again = await x.postBurn(paid.id, { chain: LOCAL_SOURCE.name, tx_hash: paid.burnTxHash });
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ id: paid.burnId, state: "redeemed" });
    const upper = await x.postBurn(paid.id, {
      chain: LOCAL_SOURCE.name,
      tx_hash: `0x${paid.burnTxHash.slice(2).toUpperCase()}`,
    });
    expect(upper.status).toBe(202);
    expect(upper.json.id).toBe(paid.burnId);
    expect(
      await stack.sql("SELECT id FROM crosschain_burns WHERE tx_hash = ?", paid.burnTxHash.toLowerCase()),
    ).toHaveLength(1);
    expect(await x.burns(paid.id)).toHaveLength(1);
  }, 30_000);

  test("the same burn posted for another payment is 422 and recorded nowhere else", async () => {
    const paid = await paidPayment();
    const other = await stack.createPayment({ amount: "25.00" });
    const res = await x.postBurn(other.id, { chain: LOCAL_SOURCE.name, tx_hash: paid.burnTxHash });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatch(/mints to another address, not this payment's deposit address/);
    expect(await x.burns(other.id)).toHaveLength(0);
    expect(
      await stack.sql("SELECT payment_id FROM crosschain_burns WHERE tx_hash = ?", paid.burnTxHash.toLowerCase()),
    ).toEqual([{ payment_id: paid.id }]);
  }, 30_000);

  test("a mined transaction that is not a burn is 422 with a clear reason and records nothing", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    // A plain transfer, to another address: one to the deposit address would be a payment there.
    const txHash = await x.sourceTransfer(randomAddress(), usdc("5.00"));
    const res = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatch(/not a CCTP burn/);
    expect(await x.burns(payment.id)).toHaveLength(0);
    const view = await stack.publicPayment(payment.id);
    expect(view.cross_chain_transfers).toEqual([]);
    expect(view.status).toBe("pending");
  });

  test("a mined burn minting to another address is 422 and nothing reaches the deposit address", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const elsewhere = randomAddress();
    const txHash = await x.burn({ amount: usdc("5.00"), mintRecipient: elsewhere });
    const res = await x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash });
    expect(res.status).toBe(422);
    expect(res.json.error).toMatch(/another address/);
    expect(await x.burns(payment.id)).toHaveLength(0);

    // The attesters did sign it; the server still never received it.
    const [message] = await x.attested(txHash);
    expect(message).toBeDefined();
    // Two whole redeemer rounds since the attestation was there: had the burn been recorded, the
    // first would have picked up the attestation and the second sent the redemption.
    await redeemerRanSince(stack);
    await redeemerRanSince(stack);
    expect(await x.messagesReceived(message!.eventNonce)).toHaveLength(0);
    expect(await x.mintsTo(payment.deposit_address)).toEqual([]);
    expect(await x.mintsTo(elsewhere)).toEqual([]);
    expect((await stack.getPayment(payment.id)).status).toBe("pending");
  });

  test("hashes nothing can check yet are capped at 20 per payment; a mined burn to the payment is recorded all the same", async () => {
    const payment = await stack.createPayment({ amount: "3.00" });
    const post = (txHash: Hex) => x.postBurn(payment.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash });
    const unknownHash = () => toHex(crypto.getRandomValues(new Uint8Array(32)));
    for (let i = 0; i < 20; i++) expect((await post(unknownHash())).status).toBe(202);
    stack.clock.advance(2_000); // the public rate limit allows bursts of 20, then one every 2 s
    const capped = await post(unknownHash());
    expect(capped.status).toBe(409);
    expect(capped.json.error).toMatch(/20 cross-chain transfers waiting for their source chain/);

    const txHash = await x.burn({ amount: usdc("3.00"), mintRecipient: getAddress(payment.deposit_address) });
    stack.clock.advance(2_000);
    const real = await post(txHash);
    expect(real).toMatchObject({ status: 202, json: { tx_hash: txHash.toLowerCase(), amount: "3.00" } });
    const confirmed = await stack.waitForStatus(payment.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("3.00");
    expect(await x.burns(payment.id)).toHaveLength(21);
  }, 30_000);

  test("a chain that is not configured, and a malformed hash or chain, are 400 and record nothing", async () => {
    const payment = await stack.createPayment({ amount: "5.00" });
    const hash = `0x${"12".repeat(32)}`;
    const bodies: unknown[] = [
      { chain: "base", tx_hash: hash },
      { chain: LOCAL_SOURCE.name, tx_hash: "0x1234" },
      { chain: LOCAL_SOURCE.name, tx_hash: `0x${"zz".repeat(32)}` },
      { chain: LOCAL_SOURCE.name, tx_hash: hash.slice(2) },
      { chain: LOCAL_SOURCE.name },
      { chain: "", tx_hash: hash },
      { chain: "x".repeat(65), tx_hash: hash },
      { chain: 31338, tx_hash: hash },
      { tx_hash: hash },
      { chain: LOCAL_SOURCE.name, tx_hash: hash, extra: 1 },
    ];
    for (const body of bodies) {
      const res = await x.postBurn(payment.id, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(typeof res.json.error).toBe("string");
    }
    expect(await x.burns(payment.id)).toHaveLength(0);
  });
});

describe("a burn belongs to the payment whose deposit address it mints to, whoever posts it first", () => {
  test("posted for another payment first, it is refused there (422) and redeemed and credited for its own", async () => {
    const victim = await stack.createPayment({ amount: "5.00" });
    const attacker = await stack.createPayment({ amount: "5.00" });
    const txHash = await x.burn({ amount: usdc("5.00"), mintRecipient: getAddress(victim.deposit_address) });

    const hijack = await x.postBurn(attacker.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash });
    expect(hijack.status).toBe(422);
    expect(hijack.json.error).toMatch(/mints to another address, not this payment's deposit address/);
    expect(await x.burns(attacker.id)).toHaveLength(0);

    const own = await x.postBurn(victim.id, { chain: LOCAL_SOURCE.name, tx_hash: txHash });
    expect(own.status).toBe(202);
    expect(own.json).toMatchObject({ tx_hash: txHash.toLowerCase(), amount: "5.00" });
    const row = await x.waitBurn(victim.id, "redeemed");
    const confirmed = await stack.waitForStatus(victim.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("5.00");
    expect(await x.messagesReceived(row.message_nonce as Hex)).toHaveLength(1);

    expect(await stack.getPayment(attacker.id)).toMatchObject({
      status: "pending",
      amount_received: null,
      cross_chain_transfers: [],
    });
    expect(await x.mintsTo(attacker.deposit_address)).toEqual([]);
  }, 30_000);

  test("posted for another payment before it is mined, it fails there and is still redeemed once for its own", async () => {
    const victim = await stack.createPayment({ amount: "6.00" });
    const attacker = await stack.createPayment({ amount: "6.00" });
    const pending = await x.pendingBurn({ amount: usdc("6.00"), mintRecipient: getAddress(victim.deposit_address) });
    let mined = false;
    try {
      // Nothing can tell yet where it mints: both are recorded, each for its own payment.
      const hijack = await x.postBurn(attacker.id, { chain: LOCAL_SOURCE.name, tx_hash: pending.txHash });
      expect(hijack).toMatchObject({ status: 202, json: { state: "attesting", amount: null } });
      const own = await x.postBurn(victim.id, { chain: LOCAL_SOURCE.name, tx_hash: pending.txHash });
      expect(own).toMatchObject({ status: 202, json: { state: "attesting" } });
      expect(own.json.id).not.toBe(hijack.json.id);
      await pending.mine();
      mined = true;
    } finally {
      if (!mined) await pending.mine();
    }

    const row = await x.waitBurn(victim.id, "redeemed");
    const confirmed = await stack.waitForStatus(victim.id, "confirmed", { mine: true });
    expect(confirmed.amount_received).toBe("6.00");
    expect(await x.messagesReceived(row.message_nonce as Hex)).toHaveLength(1);
    expect(await x.mintsTo(victim.deposit_address)).toEqual([usdc("6.00")]);

    const wrong = await x.waitBurn(attacker.id, "failed");
    expect(wrong.error).toMatch(/mints to another address/);
    expect(wrong.redeem_tx_hash).toBeNull();
    const after = await stack.getPayment(attacker.id);
    expect(after).toMatchObject({ status: "pending", amount_received: null });
    expect(after.cross_chain_transfers).toEqual([expect.objectContaining({ state: "failed", error: wrong.error })]);
    expect(await x.mintsTo(attacker.deposit_address)).toEqual([]);
  }, 30_000);
});
