/**
 * DepositFactoryV3 on two anvils with the local CCTP rig (test/support/contract-chains.ts): the
 * settlement chain (31337, domain 6) and a source chain (31338, domain 3).
 *
 * What was checked against Circle's FiatToken (circlefin/stablecoin-evm, FiatTokenV2_2 behind
 * FiatTokenProxy, compiled with its solc 0.6.12 and run on anvil):
 * - TestUSDC's blocklist behaves as Blacklistable.sol's: `blacklist(account)`, then `transfer`
 *   reverts with "Blacklistable: account is blacklisted" when the sender or `to` is on it.
 * - The forwarder's FEE_GAS (100,000) against the real token: a fee transfer to a fresh recipient
 *   took 32,063 gas inside the forwarder's call, one to a blacklisted recipient reverted after
 *   5,777; a settle of real USDC estimated 195,228 gas. At every gas limit from 30,000 to
 *   3,000,000 (each one near the least that succeeds), settle either reverted or paid the fee.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Address,
  BaseError,
  decodeErrorResult,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  parseAbi,
  parseEther,
  parseEventLogs,
  zeroAddress,
} from "viem";
import {
  depositAddressV2,
  depositFactoryV2Abi,
  depositTermsArg,
  ensureFactoryV2,
  factoryV2Address,
} from "../../src/chain/deposit-v2.ts";
import {
  type DepositTermsV3,
  depositAddressV3,
  depositFactoryV3Abi,
  depositSaltV3,
  depositTermsV3Arg,
  ensureFactoryV3,
  FINALITY_FAST,
  FINALITY_STANDARD,
  factoryV3Address,
  fastDomainsOf,
  forwarderV3Address,
} from "../../src/chain/deposit-v3.ts";
import { cctpAddresses, testMessageTransmitterV2Abi } from "../../src/dev/cctp-rig.ts";
import { LOCAL_DESTINATION_DOMAIN, LOCAL_SOURCE } from "../../src/dev/crosschain-stack.ts";
import { deployTestToken, mined, testTokenAbi } from "../support/chain.ts";
import {
  attestation,
  balanceOf,
  type ContractChains,
  expectRevert,
  mint,
  randomAddress,
  randomHex,
  type Side,
  startContractChains,
} from "../support/contract-chains.ts";

let chains: ContractChains;
let settlement: Side;
let source: Side;

beforeAll(async () => {
  chains = await startContractChains();
  ({ settlement, source } = chains);
  for (const side of [settlement, source]) {
    await ensureFactoryV3({ publicClient: side.publicClient, walletClient: side.deployer });
  }
}, 60_000);

afterAll(() => chains?.stop());

/** Fresh terms settling in the settlement chain's USDC, with fresh (empty) recipients; fast only from the source. */
function terms(overrides: Partial<DepositTermsV3> = {}): DepositTermsV3 {
  return {
    paymentId: randomHex(32),
    token: settlement.usdc,
    payout: randomAddress(),
    feeRecipient: randomAddress(),
    feeBps: 100,
    settlementDomain: LOCAL_DESTINATION_DOMAIN,
    tokenMessenger: cctpAddresses.tokenMessenger,
    maxBridgeFeeBps: 15,
    fastDomains: fastDomainsOf([LOCAL_SOURCE.domain]),
    ...overrides,
  };
}

const factory = { address: factoryV3Address, abi: depositFactoryV3Abi } as const;

const settle = (side: Side, t: DepositTermsV3) =>
  mined(
    side.publicClient,
    side.stranger.writeContract({ ...factory, functionName: "settle", args: [depositTermsV3Arg(t)] }),
  );

const simulate = (side: Side, functionName: "settle" | "recover" | "bridge", args: readonly unknown[]) =>
  side.publicClient.simulateContract({ account: side.stranger.account, ...factory, functionName, args } as never);

const bridgeArgs = (t: DepositTermsV3, maxFee: bigint, finality: number, burnToken = source.usdc) =>
  [depositTermsV3Arg(t), burnToken, maxFee, finality] as const;

const recover = (side: Side, t: DepositTermsV3, otherToken: Address) =>
  mined(
    side.publicClient,
    side.stranger.writeContract({ ...factory, functionName: "recover", args: [depositTermsV3Arg(t), otherToken] }),
  );

/** The revert data of a failed call or simulation; undefined when it reverted without any (out of gas). */
function revertData(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) throw error;
  const found = error.walk((e) => /^0x[0-9a-f]{8,}$/i.test(String((e as { data?: unknown }).data ?? "")));
  const data = (found as { data?: unknown } | null)?.data;
  return typeof data === "string" ? (data as Hex) : undefined;
}

/** FiatToken's blocklist functions, which TestUSDC has too. */
const blocklistAbi = parseAbi(["function blacklist(address account)", "function unBlacklist(address account)"]);

/** Puts `account` on the settlement chain's USDC blocklist, as Circle's blacklister would. */
const blacklist = (account: Address, on = true) =>
  mined(
    settlement.publicClient,
    settlement.deployer.writeContract({
      address: settlement.usdc,
      abi: blocklistAbi,
      functionName: on ? "blacklist" : "unBlacklist",
      args: [account],
    }),
  );

describe("DepositFactoryV3", () => {
  test("the factory and a payment's deposit address are the same on both chains, and off chain", async () => {
    const cases = [
      terms(),
      terms({ feeBps: 0, feeRecipient: zeroAddress }),
      terms({ tokenMessenger: zeroAddress, maxBridgeFeeBps: 0, fastDomains: 0n }),
      terms({ fastDomains: fastDomainsOf([0, 3, 255]) }),
    ];
    for (const side of [settlement, source]) {
      expect(await side.publicClient.readContract({ ...factory, functionName: "IMPLEMENTATION" })).toBe(
        forwarderV3Address,
      );
      for (const t of cases) {
        const args = [depositTermsV3Arg(t)] as const;
        expect(await side.publicClient.readContract({ ...factory, functionName: "salt", args })).toBe(depositSaltV3(t));
        expect(await side.publicClient.readContract({ ...factory, functionName: "depositAddress", args })).toBe(
          depositAddressV3(t),
        );
      }
    }
    // Each committed field moves the address, the fast domains too.
    const base = terms();
    const variants: Partial<DepositTermsV3>[] = [
      { paymentId: randomHex(32) },
      { token: randomAddress() },
      { payout: randomAddress() },
      { feeRecipient: randomAddress() },
      { feeBps: 101 },
      { settlementDomain: 0 },
      { tokenMessenger: randomAddress() },
      { maxBridgeFeeBps: 16 },
      { fastDomains: 0n },
      { fastDomains: fastDomainsOf([LOCAL_SOURCE.domain, 2]) },
    ];
    const addresses = new Set([base, ...variants.map((v) => ({ ...base, ...v }))].map(depositAddressV3));
    expect(addresses.size).toBe(variants.length + 1);
    // Not a version 2 address either: other code, another factory.
    expect(depositAddressV3(base)).not.toBe(depositAddressV2(base));
  });

  test("settle pays the fee and the rest to the payout; Settled says the fee paid", async () => {
    const t = terms({ feeBps: 250 });
    const deposit = depositAddressV3(t);
    await mint(settlement, settlement.usdc, deposit, 1_000_000n);
    const receipt = await settle(settlement, t);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(975_000n);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(25_000n);
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(0n);
    const [settled] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "Settled", logs: receipt.logs });
    expect(settled?.args).toEqual({
      paymentId: t.paymentId,
      depositAddress: deposit,
      token: settlement.usdc,
      payout: t.payout,
      amount: 1_000_000n,
      fee: 25_000n,
    });
    expect(parseEventLogs({ abi: depositFactoryV3Abi, eventName: "FeeSkipped", logs: receipt.logs })).toEqual([]);
  });

  test("a fee recipient on USDC's blocklist: the payout gets everything and FeeSkipped says what was not paid", async () => {
    await ensureFactoryV2({ publicClient: settlement.publicClient, walletClient: settlement.deployer });
    const t = terms({ feeBps: 200 });
    await blacklist(t.feeRecipient);
    try {
      // As Circle's FiatToken: a transfer to a blacklisted account reverts, with its reason.
      await mint(settlement, settlement.usdc, settlement.stranger.account.address, 1n);
      await expectRevert(
        settlement.publicClient.simulateContract({
          account: settlement.stranger.account,
          address: settlement.usdc,
          abi: testTokenAbi,
          functionName: "transfer",
          args: [t.feeRecipient, 1n],
        }),
        { reason: "Blacklistable: account is blacklisted" },
      );
      // Version 2 (and 1) send the fee in the same call as the payout: every settlement reverts.
      const v2 = { ...t };
      await mint(settlement, settlement.usdc, depositAddressV2(v2), 1_000_000n);
      await expectRevert(
        settlement.publicClient.simulateContract({
          account: settlement.stranger.account,
          address: factoryV2Address,
          abi: depositFactoryV2Abi,
          functionName: "settle",
          args: [depositTermsArg(v2)],
        }),
        { errorName: "TokenTransferFailed" },
      );

      const deposit = depositAddressV3(t);
      await mint(settlement, settlement.usdc, deposit, 10_000_000n);
      const receipt = await settle(settlement, t);
      expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(10_000_000n);
      expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(0n);
      expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(0n);
      const [skipped] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "FeeSkipped", logs: receipt.logs });
      expect(skipped?.args).toEqual({
        paymentId: t.paymentId,
        depositAddress: deposit,
        feeRecipient: t.feeRecipient,
        fee: 200_000n,
      });
      const [settled] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "Settled", logs: receipt.logs });
      expect(settled?.args).toMatchObject({ amount: 10_000_000n, fee: 0n });
    } finally {
      await blacklist(t.feeRecipient, false);
    }
    // Once off the list, later funds at the address pay the fee again.
    const deposit = depositAddressV3(t);
    await mint(settlement, settlement.usdc, deposit, 1_000_000n);
    await settle(settlement, t);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(20_000n);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(10_980_000n);
  });

  test("a blocked payout still reverts the whole settlement: the fee is not paid alone, the funds stay", async () => {
    const t = terms({ feeBps: 100 });
    const deposit = depositAddressV3(t);
    await mint(settlement, settlement.usdc, deposit, 5_000_000n);
    await blacklist(t.payout);
    try {
      await expectRevert(simulate(settlement, "settle", [depositTermsV3Arg(t)]), { errorName: "TokenTransferFailed" });
    } finally {
      await blacklist(t.payout, false);
    }
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(5_000_000n);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(0n);
  });

  test("no gas limit makes settle skip the fee of a fee recipient that is not blocked", async () => {
    const t = terms({ feeBps: 100 });
    const deposit = depositAddressV3(t);
    const amount = 3_000_000n;
    const fee = 30_000n;
    await mint(settlement, settlement.usdc, deposit, amount);
    const data = encodeFunctionData({ ...factory, functionName: "settle", args: [depositTermsV3Arg(t)] });

    /** What settle does if sent now with `gas`: "paid" the fee, "skipped" it, or reverted (and why). */
    async function outcome(gas: bigint): Promise<string> {
      try {
        const { data: result } = await settlement.publicClient.call({
          account: settlement.stranger.account,
          to: factoryV3Address,
          data,
          gas,
        });
        const [, moved, paid] = decodeFunctionResult({ ...factory, functionName: "settle", data: result! });
        expect(moved).toBe(amount);
        return paid === fee ? "paid" : paid === 0n ? "skipped" : `paid ${paid}`;
      } catch (error) {
        const data = revertData(error);
        return data ? `reverted ${decodeErrorResult({ abi: depositFactoryV3Abi, data }).errorName}` : "reverted";
      }
    }

    // The least gas limit that settles (every limit above it does too, as the sweep below shows).
    let low = 25_000n;
    let high = 2_000_000n;
    expect(await outcome(high)).toBe("paid");
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      if ((await outcome(middle)).startsWith("reverted")) low = middle;
      else high = middle;
    }
    const least = high;
    expect(await outcome(least)).toBe("paid");
    // Just below, the forwarder's guard refuses: the fee call could not be given its FEE_GAS.
    expect(await outcome(least - 1n)).toBe("reverted FeeGasTooLow");

    // Every limit around the edge, one by one, and a spread of limits up to well above it.
    const seen = new Map<string, number>();
    const limits: bigint[] = [];
    for (let gas = least - 1_500n; gas <= least + 1_500n; gas++) limits.push(gas);
    for (let gas = 30_000n; gas <= 1_500_000n; gas += 7_919n) limits.push(gas);
    for (const gas of limits) {
      const result = await outcome(gas);
      seen.set(result, (seen.get(result) ?? 0) + 1);
      if (result !== "paid" && !result.startsWith("reverted")) throw new Error(`settle with gas ${gas}: ${result}`);
      if (gas >= least) expect(result).toBe("paid");
    }
    expect(seen.get("skipped")).toBeUndefined();
    expect(seen.get("reverted FeeGasTooLow")).toBeGreaterThan(100);

    // And on chain, as a griefer would send it: one gas short reverts and leaves everything in place.
    const send = async (gas: bigint) =>
      settlement.publicClient.waitForTransactionReceipt({
        hash: await settlement.stranger.sendTransaction({ to: factoryV3Address, data, gas }),
      });
    expect((await send(least - 1n)).status).toBe("reverted");
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(amount);
    const receipt = await send(least);
    expect(receipt.status).toBe("success");
    expect(parseEventLogs({ abi: depositFactoryV3Abi, eventName: "FeeSkipped", logs: receipt.logs })).toEqual([]);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(fee);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(amount - fee);
  }, 120_000);

  test("bridge refuses fast finality from a domain the terms do not name, and always allows standard", async () => {
    // Fast only from a domain other than the source's: the operator chose standard there.
    const t = terms({ fastDomains: fastDomainsOf([0, 2]) });
    const deposit = depositAddressV3(t);
    const amount = 10_000_000n;
    await mint(source, source.usdc, deposit, amount);
    const maxFee = (amount * 15n) / 10000n;
    for (const finality of [FINALITY_FAST, 1, 1999]) {
      const error = await simulate(source, "bridge", bridgeArgs(t, maxFee, finality)).catch((e: unknown) => e);
      expect(decodeErrorResult({ abi: depositFactoryV3Abi, data: revertData(error)! })).toEqual({
        abiItem: expect.anything(),
        errorName: "FinalityNotAllowed",
        args: [LOCAL_SOURCE.domain, finality],
      });
    }
    expect(await balanceOf(source, source.usdc, deposit)).toBe(amount);

    // Standard: burned, attested, minted at the same address on the settlement chain, settled.
    const receipt = await mined(
      source.publicClient,
      source.stranger.writeContract({
        ...factory,
        functionName: "bridge",
        args: bridgeArgs(t, 0n, FINALITY_STANDARD),
      }),
    );
    const [bridged] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "Bridged", logs: receipt.logs });
    expect(bridged?.args).toMatchObject({ amount, minFinalityThreshold: FINALITY_STANDARD, maxFee: 0n });
    const signed = await attestation(chains, receipt.transactionHash);
    await mined(
      settlement.publicClient,
      settlement.stranger.writeContract({
        address: cctpAddresses.messageTransmitter,
        abi: testMessageTransmitterV2Abi,
        functionName: "receiveMessage",
        args: [signed.message, signed.attestation],
      }),
    );
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(amount); // the local standard fee is 0
    await settle(settlement, t);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(amount - amount / 100n);

    // With the source's bit set, fast is the caller's to choose.
    const fast = terms();
    await mint(source, source.usdc, depositAddressV3(fast), amount);
    const fastReceipt = await mined(
      source.publicClient,
      source.stranger.writeContract({
        ...factory,
        functionName: "bridge",
        args: bridgeArgs(fast, maxFee, FINALITY_FAST),
      }),
    );
    const [fastBridged] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "Bridged", logs: fastReceipt.logs });
    expect(fastBridged?.args).toMatchObject({ amount, minFinalityThreshold: FINALITY_FAST, maxFee });

    // The fee bound and the settlement chain hold as in version 2.
    await mint(source, source.usdc, deposit, amount);
    await expectRevert(simulate(source, "bridge", bridgeArgs(t, maxFee + 1n, FINALITY_STANDARD)), {
      errorName: "BridgeFeeTooHigh",
    });
    await mint(settlement, settlement.usdc, deposit, amount);
    await expectRevert(simulate(settlement, "bridge", bridgeArgs(t, 0n, FINALITY_STANDARD, settlement.usdc)), {
      errorName: "SettlementChain",
    });
  }, 60_000);

  test("recover pays a stray token and native coin to the payout, never the USDC a bridge can take", async () => {
    const t = terms({ feeBps: 500 });
    const deposit = depositAddressV3(t);
    const stray = await deployTestToken(source.publicClient, source.deployer, { decimals: 18 });
    await mint(source, stray, deposit, parseEther("3"));
    await mint(source, source.usdc, deposit, 1_000_000n);
    await mined(source.publicClient, source.deployer.sendTransaction({ to: deposit, value: parseEther("0.2") }));

    const receipt = await recover(source, t, stray);
    expect(await balanceOf(source, stray, t.payout)).toBe(parseEther("3"));
    expect(await balanceOf(source, stray, t.feeRecipient)).toBe(0n);
    const [recovered] = parseEventLogs({ abi: depositFactoryV3Abi, eventName: "Recovered", logs: receipt.logs });
    expect(recovered?.args).toEqual({
      paymentId: t.paymentId,
      depositAddress: deposit,
      token: stray,
      payout: t.payout,
      amount: parseEther("3"),
    });
    await recover(source, t, zeroAddress);
    expect(await source.publicClient.getBalance({ address: t.payout })).toBe(parseEther("0.2"));
    await expectRevert(simulate(source, "recover", [depositTermsV3Arg(t), source.usdc]), {
      errorName: "BridgeableToken",
    });
    expect(await balanceOf(source, source.usdc, deposit)).toBe(1_000_000n);
    await expectRevert(simulate(settlement, "recover", [depositTermsV3Arg(t), settlement.usdc]), {
      errorName: "CommittedToken",
    });
  });

  test("terms issued without source chains never bridge; USDC sent on another chain is recoverable there", async () => {
    const t = terms({ tokenMessenger: zeroAddress, maxBridgeFeeBps: 0, fastDomains: 0n });
    const deposit = depositAddressV3(t);
    await mint(source, source.usdc, deposit, 4_000_000n);
    await expectRevert(simulate(source, "bridge", bridgeArgs(t, 0n, FINALITY_STANDARD)), { errorName: "NoMessenger" });
    await recover(source, t, source.usdc);
    expect(await balanceOf(source, source.usdc, t.payout)).toBe(4_000_000n);
    // On the settlement chain its USDC still goes only through settle, with the fee.
    await mint(settlement, settlement.usdc, deposit, 1_000_000n);
    await expectRevert(simulate(settlement, "recover", [depositTermsV3Arg(t), settlement.usdc]), {
      errorName: "CommittedToken",
    });
    await settle(settlement, t);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(990_000n);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(10_000n);
  });

  test("rejects invalid fee parameters and a zero payout", async () => {
    const settleOf = (t: DepositTermsV3) => simulate(settlement, "settle", [depositTermsV3Arg(t)]);
    await expectRevert(settleOf(terms({ feeBps: 10001 })), { errorName: "FeeTooHigh" });
    await expectRevert(settleOf(terms({ maxBridgeFeeBps: 10001 })), { errorName: "FeeTooHigh" });
    await expectRevert(settleOf(terms({ feeBps: 1, feeRecipient: zeroAddress })), { errorName: "MissingFeeRecipient" });
    await expectRevert(settleOf(terms({ payout: zeroAddress })), { errorName: "MissingPayout" });
  });
});
