/**
 * A source chain is offered, watched and bridged from only once its deposit factory is there.
 * Two real anvils with the CCTP rig; the source anvil starts without the deterministic
 * deployment proxy (its code removed), so the server cannot deploy the factory there: the chain
 * is not offered, a transfer made there anyway is not credited, /readyz says why. With the proxy's
 * code put back the server deploys the factory, the chain is offered, and the transfer made
 * meanwhile is credited and settled. Also what /readyz says when Circle's contracts there change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, createWalletClient, getAddress, type Hex, http, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { recoverCall, type TermsRow } from "../../../src/chain/deposit-terms.ts";
import { factoryV2Address } from "../../../src/chain/deposit-v2.ts";
import { factoryV3Address } from "../../../src/chain/deposit-v3.ts";
import { revertOf } from "../../../src/chain/rpc-errors.ts";
import { CCTP_DEPLOYER_KEY, cctpAddresses, testTokenMessengerV2Abi } from "../../../src/dev/cctp-rig.ts";
import { untilStatus } from "../../support/bridging.ts";
import {
  type CrossChainStack,
  LOCAL_DESTINATION_DOMAIN,
  LOCAL_SOURCE,
  startCrossChainStack,
} from "../../support/crosschain.ts";
import { usdc } from "../../support/test-chain.ts";

let x: CrossChainStack;

beforeAll(async () => {
  x = await startCrossChainStack({
    attestationDelayMs: 0,
    withoutDeploymentProxy: true,
    source: { pollIntervalMs: 200 },
  });
}, 60_000);

afterAll(() => x?.stop());

const NO_PROXY = "no deterministic deployment proxy on this chain";

/** Waits until the source chain's /readyz entry (of `on`'s server) satisfies `ok`; returns it. */
function sourceEntryWhere(ok: (entry: any) => boolean, what: string, on: CrossChainStack = x) {
  return on.stack.waitFor(
    async () => {
      const entry = await on.sourceReadiness();
      return entry && ok(entry) ? entry : undefined;
    },
    15_000,
    what,
  );
}

/** The public view's network names for a payment. */
async function networkNames(paymentId: string): Promise<string[]> {
  return (await x.stack.publicPayment(paymentId)).networks.map((n: { chain: string }) => n.chain);
}

/** The source chain's head as its watcher last read it reached `block`: a whole round passed after it. */
async function watcherSawHead(block: bigint): Promise<void> {
  for (const target of [block, block + 1n]) {
    await x.mineSource(1);
    await sourceEntryWhere((e) => e.head !== null && BigInt(e.head) >= target, `the source head at ${target}`);
  }
}

const sourceTransfersOf = (paymentId: string) =>
  x.stack.sql<{ credited_at: number | null }>(
    "SELECT credited_at FROM transfers WHERE payment_id = ? AND chain_id = ?",
    paymentId,
    LOCAL_SOURCE.chainId,
  );

describe("a source chain without the deterministic deployment proxy", () => {
  test("is not offered and credits nothing; once the proxy is back, the factory is deployed and the transfer made meanwhile is credited and settled", async () => {
    const missing = await sourceEntryWhere((e) => e.deposit_factory.checked_at !== null, "a first look");
    expect(missing).toMatchObject({
      role: "source",
      ok: false,
      offered: false,
      deposit_factory: { present: false, addresses: [factoryV2Address, factoryV3Address], problem: NO_PROXY },
    });
    for (const address of [factoryV2Address, factoryV3Address])
      expect(await x.source.publicClient.getCode({ address })).toBeUndefined();

    const payment = await x.stack.createPayment({ amount: "7.00" });
    // Not offered to the payer: only the settlement chain, and no QR request for the source chain.
    expect(await networkNames(payment.id)).toEqual([x.stack.config.chain.name]);
    const qr = await x.stack.request(`/api/public/payments/${payment.id}/qr?format=eip681&chain=${LOCAL_SOURCE.name}`, {
      auth: false,
    });
    expect(qr).toMatchObject({ status: 400, json: { error: `chain must be one of ${x.stack.config.chain.name}` } });

    // Sent there anyway: neither scanned nor credited, nor recorded through the payer's hint.
    const txHash = await x.sourceTransfer(getAddress(payment.deposit_address), usdc("7.00"));
    const block = (await x.source.publicClient.getTransactionReceipt({ hash: txHash })).blockNumber;
    await watcherSawHead(block + 1n);
    const hint = await x.stack.sync(payment.id, txHash, LOCAL_SOURCE.name);
    expect(hint.status).toBe(503);
    expect(hint.json.error).toContain(`the deposit contracts are not on ${LOCAL_SOURCE.name} yet`);
    expect(await sourceTransfersOf(payment.id)).toEqual([]);
    expect(await x.stack.getPayment(payment.id)).toMatchObject({ status: "pending", amount_received: null });
    // Its cursor was placed where it would start anyway, before the transfer, and waits there.
    expect(await x.sourceCursor()).not.toBeNull();
    expect(BigInt((await x.sourceCursor())!)).toBeLessThan(block);

    // The proxy comes, but the relayer has no gas there: the deployment fails, and /readyz says so.
    const relayer = (await x.stack.readyz()).chain.settlement.relayer as Address;
    const funded = await x.source.publicClient.getBalance({ address: relayer });
    await x.local.source.rpc("anvil_setBalance", [relayer, "0x0"]);
    try {
      await x.deploymentProxy(true);
      const failed = await sourceEntryWhere(
        (e) => e.deposit_factory.problem !== NO_PROXY,
        "the deployment to be tried",
      );
      expect(failed).toMatchObject({ ok: false, offered: false, deposit_factory: { present: false } });
      expect(failed.deposit_factory.problem).toStartWith("factory deployment failed: ");
      expect(await networkNames(payment.id)).toEqual([x.stack.config.chain.name]);
    } finally {
      await x.local.source.rpc("anvil_setBalance", [relayer, toHex(funded)]);
    }

    // With gas, the next look deploys it: offered, and the blocks it waited over are scanned.
    await x.sourceOffered();
    for (const address of [factoryV2Address, factoryV3Address])
      expect(await x.source.publicClient.getCode({ address })).not.toBeUndefined();
    const ready = await x.sourceReadiness();
    expect(ready).toMatchObject({ offered: true, deposit_factory: { present: true, problem: null } });
    expect(await networkNames(payment.id)).toEqual([x.stack.config.chain.name, LOCAL_SOURCE.name]);
    const confirmed = await untilStatus(x, payment.id, "confirmed");
    expect(confirmed).toMatchObject({ amount_received: "7.00" });
    expect(confirmed.transfers).toEqual([
      expect.objectContaining({ chain: LOCAL_SOURCE.name, tx_hash: txHash, amount: "7.00", confirmed: true }),
    ]);
  }, 90_000);
});

// A stack of its own, with the proxy in place: the first describe's removes it, and tests run in any order.
describe("Circle's contracts on the source chain, in /readyz", () => {
  let c: CrossChainStack;
  beforeAll(async () => {
    c = await startCrossChainStack({ attestationDelayMs: 0, source: { pollIntervalMs: 200 } });
  }, 60_000);
  afterAll(() => c?.stop());

  const owner = () =>
    createWalletClient({
      chain: { ...foundry, id: LOCAL_SOURCE.chainId },
      transport: http(c.local.source.rpcUrl),
      account: privateKeyToAccount(CCTP_DEPLOYER_KEY),
    });
  /** An owner's call on the source chain's TokenMessengerV2, mined. */
  async function onMessenger(
    call:
      | { functionName: "removeRemoteTokenMessenger"; args: [number] }
      | { functionName: "addRemoteTokenMessenger"; args: [number, Hex] }
      | { functionName: "setMinFee"; args: [bigint] }
      | { functionName: "setMaxBurnAmountPerMessage"; args: [Address, bigint] },
  ) {
    const hash = await owner().writeContract({
      address: cctpAddresses.tokenMessenger,
      abi: testTokenMessengerV2Abi,
      ...call,
    } as Parameters<ReturnType<typeof owner>["writeContract"]>[0]);
    const receipt = await c.source.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
  }
  const read = <T>(functionName: "remoteTokenMessengers" | "minFee" | "burnLimitsPerMessage", args: unknown[] = []) =>
    c.source.publicClient.readContract({
      address: cctpAddresses.tokenMessenger,
      abi: testTokenMessengerV2Abi,
      functionName,
      args,
    } as never) as Promise<T>;

  /** Lets the once-a-minute look come (by the stack's clock) and returns the entry it left. */
  async function lookedAgain() {
    const before = (await c.sourceReadiness()).circle.read_at;
    c.stack.clock.advance(61_000);
    return sourceEntryWhere((e) => e.circle.read_at !== before, "Circle's contracts read again", c);
  }

  /** `recover` of the source chain's USDC at the payment's deposit address, simulated there. */
  async function simulateRecover(paymentId: string): Promise<string> {
    const [row] = await c.stack.sql<TermsRow>("SELECT * FROM payments WHERE id = ?", paymentId);
    try {
      await c.source.publicClient.simulateContract({
        ...recoverCall(row!, c.source.usdc),
        account: c.source.payer,
      } as never);
      return "ok";
    } catch (error) {
      return revertOf(error)?.data?.errorName ?? String(error);
    }
  }

  test("a removed route, a minimum fee above the bound or no burn limit: still offered, USDC not bridged, and why", async () => {
    await c.sourceOffered();
    const settlementName = c.stack.config.chain.name;
    const bound = c.stack.config.crossChain!.maxBridgeFeeBps;
    const open = await lookedAgain();
    expect(open.circle).toMatchObject({
      bridgeable: true,
      problem: null,
      min_fee_bps: Number(await read<bigint>("minFee")) / 1000,
      max_bridge_fee_bps: bound,
      usdc: `credited, then bridged to ${settlementName} and settled there`,
      last_error: null,
    });

    const remote = await read<Hex>("remoteTokenMessengers", [LOCAL_DESTINATION_DOMAIN]);
    await onMessenger({ functionName: "removeRemoteTokenMessenger", args: [LOCAL_DESTINATION_DOMAIN] });
    try {
      const removed = await lookedAgain();
      expect(removed).toMatchObject({ offered: true, deposit_factory: { present: true } });
      expect(removed.circle).toMatchObject({
        bridgeable: false,
        problem: `Circle's messenger here has no route to ${settlementName} (domain ${LOCAL_DESTINATION_DOMAIN})`,
      });
      // The rig's source USDC has the settlement USDC's address: the factory refuses it as the
      // committed token whatever Circle says, and /readyz says so.
      expect(removed.circle.usdc).toBe(
        `credited, but not bridged: it stays at the deposit address on ${LOCAL_SOURCE.name}, ` +
          "and recover refuses it there (it has the address of the settlement chain's USDC)",
      );
      const payment = await c.stack.createPayment({ amount: "1.00" });
      expect(await simulateRecover(payment.id)).toBe("CommittedToken");
    } finally {
      await onMessenger({ functionName: "addRemoteTokenMessenger", args: [LOCAL_DESTINATION_DOMAIN, remote] });
    }
    expect((await lookedAgain()).circle).toMatchObject({ bridgeable: true, problem: null });

    const minFee = await read<bigint>("minFee");
    await onMessenger({ functionName: "setMinFee", args: [BigInt(bound + 1) * 1000n] });
    try {
      expect((await lookedAgain()).circle).toMatchObject({
        bridgeable: false,
        min_fee_bps: bound + 1,
        problem: `Circle's minimum fee here (${bound + 1} bps) is above the ${bound} bps new deposit addresses commit to`,
      });
    } finally {
      await onMessenger({ functionName: "setMinFee", args: [minFee] });
    }

    const limit = await read<bigint>("burnLimitsPerMessage", [c.source.usdc]);
    await onMessenger({ functionName: "setMaxBurnAmountPerMessage", args: [c.source.usdc, 0n] });
    try {
      expect((await lookedAgain()).circle).toMatchObject({
        bridgeable: false,
        problem: `Circle's minter here does not burn this chain's USDC (${c.source.usdc})`,
      });
    } finally {
      await onMessenger({ functionName: "setMaxBurnAmountPerMessage", args: [c.source.usdc, limit] });
    }
    expect((await lookedAgain()).circle).toMatchObject({ bridgeable: true, problem: null });
  }, 60_000);
});
