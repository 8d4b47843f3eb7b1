/**
 * DepositFactoryV2 on two anvils with the local CCTP rig (src/dev/crosschain-stack.ts): the
 * settlement chain (31337, domain 6) and a source chain (31338, domain 3), the test
 * TokenMessengerV2 at the same address on both, and the local attestation service.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Address, BaseError, maxUint256, parseEther, parseEventLogs, zeroAddress } from "viem";
import {
  type DepositTerms,
  depositAddressV2,
  depositFactoryV2Abi,
  depositSaltV2,
  depositTermsArg,
  ensureFactoryV2,
  factoryV2Address,
  forwarderV2Address,
} from "../../src/chain/deposit-v2.ts";
import { cctpAddresses, testMessageTransmitterV2Abi } from "../../src/dev/cctp-rig.ts";
import { LOCAL_DESTINATION_DOMAIN } from "../../src/dev/crosschain-stack.ts";
import { deployTestToken, mined } from "../support/chain.ts";
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
  withSourceMessenger,
} from "../support/contract-chains.ts";

const FAST = 1000;

let chains: ContractChains;
let settlement: Side;
let source: Side;

beforeAll(async () => {
  chains = await startContractChains();
  ({ settlement, source } = chains);
  for (const side of [settlement, source]) {
    await ensureFactoryV2({ publicClient: side.publicClient, walletClient: side.deployer });
  }
}, 60_000);

afterAll(() => chains?.stop());

/** Fresh terms settling in the settlement chain's USDC, with fresh (empty) recipients. */
function terms(overrides: Partial<DepositTerms> = {}): DepositTerms {
  return {
    paymentId: randomHex(32),
    token: settlement.usdc,
    payout: randomAddress(),
    feeRecipient: randomAddress(),
    feeBps: 100,
    settlementDomain: LOCAL_DESTINATION_DOMAIN,
    tokenMessenger: cctpAddresses.tokenMessenger,
    maxBridgeFeeBps: 15,
    ...overrides,
  };
}

const factory = { address: factoryV2Address, abi: depositFactoryV2Abi } as const;

const bridge = (t: DepositTerms, maxFee: bigint, burnToken = source.usdc) =>
  mined(
    source.publicClient,
    source.stranger.writeContract({
      ...factory,
      functionName: "bridge",
      args: [depositTermsArg(t), burnToken, maxFee, FAST],
    }),
  );

const simulateBridge = (t: DepositTerms, maxFee: bigint, burnToken = source.usdc) =>
  source.publicClient.simulateContract({
    account: source.stranger.account,
    ...factory,
    functionName: "bridge",
    args: [depositTermsArg(t), burnToken, maxFee, FAST],
  });

const settle = (side: Side, t: DepositTerms) =>
  mined(
    side.publicClient,
    side.stranger.writeContract({ ...factory, functionName: "settle", args: [depositTermsArg(t)] }),
  );

const simulateRecover = (t: DepositTerms, otherToken: Address) =>
  source.publicClient.simulateContract({
    account: source.stranger.account,
    ...factory,
    functionName: "recover",
    args: [depositTermsArg(t), otherToken],
  });

const recover = (side: Side, t: DepositTerms, otherToken: Address) =>
  mined(
    side.publicClient,
    side.stranger.writeContract({ ...factory, functionName: "recover", args: [depositTermsArg(t), otherToken] }),
  );

describe("DepositFactoryV2 across two chains", () => {
  test("the factory and a payment's deposit address are the same on both chains", async () => {
    const cases = [terms(), terms({ feeBps: 0, feeRecipient: zeroAddress }), terms({ maxBridgeFeeBps: 0 })];
    for (const side of [settlement, source]) {
      expect(await side.publicClient.readContract({ ...factory, functionName: "IMPLEMENTATION" })).toBe(
        forwarderV2Address,
      );
      for (const t of cases) {
        const args = [depositTermsArg(t)] as const;
        expect(await side.publicClient.readContract({ ...factory, functionName: "salt", args })).toBe(depositSaltV2(t));
        expect(await side.publicClient.readContract({ ...factory, functionName: "depositAddress", args })).toBe(
          depositAddressV2(t),
        );
      }
    }
    // Each committed field moves the address.
    const base = terms();
    const variants: Partial<DepositTerms>[] = [
      { paymentId: randomHex(32) },
      { token: randomAddress() },
      { payout: randomAddress() },
      { feeRecipient: randomAddress() },
      { feeBps: 101 },
      { settlementDomain: 0 },
      { tokenMessenger: randomAddress() },
      { maxBridgeFeeBps: 16 },
    ];
    const addresses = new Set([base, ...variants.map((v) => ({ ...base, ...v }))].map(depositAddressV2));
    expect(addresses.size).toBe(variants.length + 1);
  });

  test("a bridge from the source chain, attested and received, mints at the same address and settles", async () => {
    const t = terms({ feeBps: 200, maxBridgeFeeBps: 15 });
    const deposit = depositAddressV2(t);
    const amount = 25_000_000n;
    await mint(source, source.usdc, deposit, amount);

    const maxFee = (amount * 15n) / 10000n; // exactly the bound
    const receipt = await bridge(t, maxFee);
    expect(await balanceOf(source, source.usdc, deposit)).toBe(0n);
    const [bridged] = parseEventLogs({ abi: depositFactoryV2Abi, eventName: "Bridged", logs: receipt.logs });
    expect(bridged?.args).toEqual({
      paymentId: t.paymentId,
      depositAddress: deposit,
      burnToken: source.usdc,
      amount,
      destinationDomain: LOCAL_DESTINATION_DOMAIN,
      maxFee,
      minFinalityThreshold: FAST,
    });

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
    const bridgeFee = amount / 10000n; // the local service's fast fee: 1 bp
    const arrived = amount - bridgeFee;
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(arrived);

    await settle(settlement, t);
    const fee = (arrived * 200n) / 10000n;
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(arrived - fee);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(fee);
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(0n);
  }, 60_000);

  test("a stranger cannot over-fee, bridge the settlement token, or burn on the settlement chain", async () => {
    const t = terms({ maxBridgeFeeBps: 15 });
    const deposit = depositAddressV2(t);
    const amount = 10_000_000n;
    await mint(source, source.usdc, deposit, amount);

    // One micro-USDC above 15 bps of the balance.
    await expectRevert(simulateBridge(t, (amount * 15n) / 10000n + 1n), { errorName: "BridgeFeeTooHigh" });
    await expectRevert(simulateBridge(terms({ maxBridgeFeeBps: 0 }), 1n), { errorName: "BridgeFeeTooHigh" });
    // On the settlement chain, nothing bridges: its USDC only ever goes through settle.
    await mint(settlement, settlement.usdc, deposit, amount);
    await expectRevert(
      settlement.publicClient.simulateContract({
        account: settlement.stranger.account,
        ...factory,
        functionName: "bridge",
        args: [depositTermsArg(t), settlement.usdc, 0n, FAST],
      }),
      { errorName: "SettlementChain" },
    );
    expect(await balanceOf(settlement, settlement.usdc, deposit)).toBe(amount);
    // A token the messenger cannot burn.
    const other = await deployTestToken(source.publicClient, source.deployer, { decimals: 6 });
    await mint(source, other, deposit, 1_000n);
    await expectRevert(simulateBridge(t, 0n, other), { reason: "Burn token not supported" });

    expect(await balanceOf(source, source.usdc, deposit)).toBe(amount);
  });

  test("other recipients, domains or messengers are other deposit addresses: the funds stay put", async () => {
    const t = terms();
    const deposit = depositAddressV2(t);
    await mint(source, source.usdc, deposit, 5_000_000n);
    const attacker = randomAddress();

    for (const forged of [
      { ...t, payout: attacker },
      { ...t, feeRecipient: attacker, feeBps: 10000 },
      { ...t, settlementDomain: 0 }, // another chain the attacker controls an address on
      { ...t, tokenMessenger: attacker },
      { ...t, maxBridgeFeeBps: 10000 },
    ]) {
      expect(depositAddressV2(forged)).not.toBe(deposit);
      // Whatever the forged terms do, they act on their own, empty, deposit address.
      await source.publicClient
        .simulateContract({
          account: source.stranger.account,
          ...factory,
          functionName: "bridge",
          args: [depositTermsArg(forged), source.usdc, 0n, FAST],
        })
        .then(
          () => expect.unreachable("a bridge of an empty address must revert"),
          (e) => expect(e).toBeInstanceOf(BaseError),
        );
      // Recovering it is refused (the USDC is bridgeable), or, with a forged messenger that has
      // no code, sweeps the forged terms' own empty address.
      await source.publicClient
        .simulateContract({
          account: source.stranger.account,
          ...factory,
          functionName: "recover",
          args: [depositTermsArg(forged), source.usdc],
        })
        .then(
          ({ result }) => expect(result).toBe(0n),
          (e) => expect(e).toBeInstanceOf(BaseError),
        );
    }
    expect(await balanceOf(source, source.usdc, deposit)).toBe(5_000_000n);
    expect(await balanceOf(source, source.usdc, attacker)).toBe(0n);
  });

  test("recover on the source chain pays a stray token and native coin to the payout there, never its USDC", async () => {
    const t = terms({ feeBps: 500 });
    const deposit = depositAddressV2(t);
    const stray = await deployTestToken(source.publicClient, source.deployer, { decimals: 18 });
    await mint(source, stray, deposit, parseEther("3"));
    await mint(source, source.usdc, deposit, 1_000_000n);
    await mined(source.publicClient, source.deployer.sendTransaction({ to: deposit, value: parseEther("0.2") }));

    const receipt = await recover(source, t, stray);
    expect(await balanceOf(source, stray, t.payout)).toBe(parseEther("3"));
    expect(await balanceOf(source, stray, t.feeRecipient)).toBe(0n);
    const [recovered] = parseEventLogs({ abi: depositFactoryV2Abi, eventName: "Recovered", logs: receipt.logs });
    expect(recovered?.args).toEqual({
      paymentId: t.paymentId,
      depositAddress: deposit,
      token: stray,
      payout: t.payout,
      amount: parseEther("3"),
    });
    await recover(source, t, zeroAddress);
    expect(await source.publicClient.getBalance({ address: t.payout })).toBe(parseEther("0.2"));

    // The source chain's USDC is burnable by the messenger: it leaves only by bridge, then settle.
    await expectRevert(
      source.publicClient.simulateContract({
        account: source.stranger.account,
        ...factory,
        functionName: "recover",
        args: [depositTermsArg(t), source.usdc],
      }),
      { errorName: "BridgeableToken" },
    );
    expect(await balanceOf(source, source.usdc, deposit)).toBe(1_000_000n);
  });

  test("a balance above Circle's per-message burn limit bridges in burns of at most the limit", async () => {
    const t = terms({ maxBridgeFeeBps: 15 });
    const deposit = depositAddressV2(t);
    const limit = 4_000_000n;
    await mint(source, source.usdc, deposit, 10_000_000n);
    await withSourceMessenger(
      chains,
      { functionName: "setMaxBurnAmountPerMessage", args: [source.usdc, limit] },
      { functionName: "setMaxBurnAmountPerMessage", args: [source.usdc, maxUint256] },
      async () => {
        // The fee bound is on what is burned, not on the balance.
        await expectRevert(simulateBridge(t, (limit * 15n) / 10000n + 1n), { errorName: "BridgeFeeTooHigh" });
        const burned: bigint[] = [];
        for (const [burning, left] of [
          [limit, 6_000_000n],
          [limit, 2_000_000n],
          [2_000_000n, 0n],
        ] as const) {
          const receipt = await bridge(t, (burning * 15n) / 10000n);
          const [event] = parseEventLogs({ abi: depositFactoryV2Abi, eventName: "Bridged", logs: receipt.logs });
          burned.push(event!.args.amount);
          expect(await balanceOf(source, source.usdc, deposit)).toBe(left);
        }
        expect(burned).toEqual([limit, limit, 2_000_000n]);
      },
    );
  });

  test("recover takes a source chain's USDC when its messenger has no route to the settlement domain", async () => {
    const t = terms({ settlementDomain: 9 }); // no messenger registered for domain 9 on the source chain
    const deposit = depositAddressV2(t);
    await mint(source, source.usdc, deposit, 1_000_000n);
    await expectRevert(simulateBridge(t, 0n), { reason: "No TokenMessenger for domain" });
    await recover(source, t, source.usdc);
    expect(await balanceOf(source, source.usdc, t.payout)).toBe(1_000_000n);
    expect(await balanceOf(source, source.usdc, deposit)).toBe(0n);
  });

  test("recover takes a source chain's USDC while the messenger has no minter, and refuses it again after", async () => {
    const t = terms();
    const deposit = depositAddressV2(t);
    await mint(source, source.usdc, deposit, 2_000_000n);
    await withSourceMessenger(
      chains,
      { functionName: "removeLocalMinter", args: [] },
      { functionName: "addLocalMinter", args: [cctpAddresses.tokenMessenger] },
      async () => {
        await expectRevert(simulateBridge(t, 0n), { reason: "Local minter is not set" });
        await recover(source, t, source.usdc);
      },
    );
    expect(await balanceOf(source, source.usdc, t.payout)).toBe(2_000_000n);
    await mint(source, source.usdc, deposit, 1_000_000n);
    await expectRevert(simulateRecover(t, source.usdc), { errorName: "BridgeableToken" });
  });

  test("recover takes a source chain's USDC only while Circle's minimum fee is above the committed bound", async () => {
    const t = terms({ maxBridgeFeeBps: 15 });
    const deposit = depositAddressV2(t);
    const amount = 10_000_000n; // large enough for Circle's rounded-down minimum to show 15.001 bp
    const bound = (amount * 15n) / 10000n;
    await mint(source, source.usdc, deposit, amount);
    // 15 bp in Circle's 1/1000 bp: the bound still pays it, so the USDC only leaves by bridge.
    await withSourceMessenger(
      chains,
      { functionName: "setMinFee", args: [15_000n] },
      { functionName: "setMinFee", args: [0n] },
      async () => {
        await simulateBridge(t, bound);
        await expectRevert(simulateRecover(t, source.usdc), { errorName: "BridgeableToken" });
      },
    );
    await withSourceMessenger(
      chains,
      { functionName: "setMinFee", args: [15_001n] },
      { functionName: "setMinFee", args: [0n] },
      async () => {
        await expectRevert(simulateBridge(t, bound), { reason: "Insufficient max fee" });
        await recover(source, t, source.usdc);
      },
    );
    expect(await balanceOf(source, source.usdc, t.payout)).toBe(amount);
  });

  test("on the settlement chain, settle and recover behave as version 1", async () => {
    const t = terms({ feeBps: 250 });
    const deposit = depositAddressV2(t);
    await mint(settlement, settlement.usdc, deposit, 1_000_000n);
    await expectRevert(
      settlement.publicClient.simulateContract({
        account: settlement.stranger.account,
        ...factory,
        functionName: "recover",
        args: [depositTermsArg(t), settlement.usdc],
      }),
      { errorName: "CommittedToken" },
    );
    await settle(settlement, t);
    expect(await balanceOf(settlement, settlement.usdc, t.payout)).toBe(975_000n);
    expect(await balanceOf(settlement, settlement.usdc, t.feeRecipient)).toBe(25_000n);

    const stray = await deployTestToken(settlement.publicClient, settlement.deployer, {
      decimals: 6,
      returnsNothing: true,
    });
    await mint(settlement, stray, deposit, 42n);
    await recover(settlement, t, stray);
    expect(await balanceOf(settlement, stray, t.payout)).toBe(42n);
  });

  test("rejects invalid fee parameters and a zero payout", async () => {
    const simulateSettle = (t: DepositTerms) =>
      settlement.publicClient.simulateContract({
        account: settlement.stranger.account,
        ...factory,
        functionName: "settle",
        args: [depositTermsArg(t)],
      });
    await expectRevert(simulateSettle(terms({ feeBps: 10001 })), { errorName: "FeeTooHigh" });
    await expectRevert(simulateSettle(terms({ maxBridgeFeeBps: 10001 })), { errorName: "FeeTooHigh" });
    await expectRevert(simulateSettle(terms({ feeBps: 1, feeRecipient: zeroAddress })), {
      errorName: "MissingFeeRecipient",
    });
    await expectRevert(simulateSettle(terms({ payout: zeroAddress })), { errorName: "MissingPayout" });
  });
});
