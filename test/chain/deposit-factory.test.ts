import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  getAddress,
  type Hex,
  type PublicClient,
  parseAbi,
  parseEther,
  parseEventLogs,
  parseGwei,
  toHex,
  zeroAddress,
} from "viem";
import {
  artifacts,
  DETERMINISTIC_DEPLOYER,
  type DepositParams,
  depositAddress,
  depositArgs,
  depositFactoryAbi,
  depositSalt,
  ensureFactory,
  factoryAddress,
  forwarderAddress,
} from "../../src/chain/contracts.ts";
import { createNonceManager } from "../../src/chain/nonces.ts";
import { ANVIL_KEY_0, ANVIL_KEY_1, type Anvil, startAnvil } from "../support/anvil.ts";
import {
  deployTestToken,
  deployTestUsdc,
  mined,
  publicClientFor,
  type TestWallet,
  testTokenAbi,
  walletClientFor,
} from "../support/chain.ts";
import { waitFor } from "../support/wait.ts";

const forwarderAbi = parseAbi([
  "function forward(address token, address payout, address feeRecipient, uint16 feeBps) returns (uint256, uint256)",
  "function sweep(address token, address payout) returns (uint256)",
  "function sweepNative(address payout) returns (uint256)",
  "error NotFactory()",
]);

let anvil: Anvil;
let publicClient: PublicClient;
let relayer: TestWallet; // deploys the factory and the test tokens
let stranger: TestWallet; // an arbitrary account: settles and recovers without any privilege
let usdc: Address;

beforeAll(async () => {
  anvil = await startAnvil();
  publicClient = publicClientFor(anvil.rpcUrl);
  relayer = walletClientFor(anvil.rpcUrl, ANVIL_KEY_0);
  stranger = walletClientFor(anvil.rpcUrl, ANVIL_KEY_1);
  usdc = await deployTestUsdc(publicClient, relayer);
});

afterAll(async () => {
  await anvil?.stop();
});

const randomHex = (bytes: number): Hex => toHex(crypto.getRandomValues(new Uint8Array(bytes)));
const randomAddress = (): Address => getAddress(randomHex(20));

/** Fresh payment id and fresh (empty) recipients, so balances start at zero. */
function params(overrides: Partial<DepositParams> = {}): DepositParams {
  return {
    paymentId: randomHex(32),
    token: usdc,
    payout: randomAddress(),
    feeRecipient: randomAddress(),
    feeBps: 100,
    ...overrides,
  };
}

const balanceOf = (token: Address, account: Address) =>
  publicClient.readContract({ address: token, abi: testTokenAbi, functionName: "balanceOf", args: [account] });

const tokenCall = { abi: testTokenAbi } as const;
const factoryCall = { address: factoryAddress, abi: depositFactoryAbi } as const;

const mint = (token: Address, to: Address, amount: bigint) =>
  mined(
    publicClient,
    relayer.writeContract({ ...tokenCall, address: token, functionName: "mint", args: [to, amount] }),
  );

const setBlocked = (account: Address, blocked: boolean) =>
  mined(
    publicClient,
    relayer.writeContract({ ...tokenCall, address: usdc, functionName: "setBlocked", args: [account, blocked] }),
  );

const settle = (p: DepositParams) =>
  mined(publicClient, stranger.writeContract({ ...factoryCall, functionName: "settle", args: depositArgs(p) }));

const recover = (p: DepositParams, otherToken: Address) =>
  mined(
    publicClient,
    stranger.writeContract({
      ...factoryCall,
      functionName: "recover",
      args: [...depositArgs(p), otherToken],
    }),
  );

const simulateSettle = (p: DepositParams) =>
  publicClient.simulateContract({
    account: stranger.account,
    ...factoryCall,
    functionName: "settle",
    args: depositArgs(p),
  });

/** Expects a contract call to revert with the named custom error. */
async function expectRevert(call: Promise<unknown>, errorName: string) {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BaseError);
  const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
  expect(reverted).toBeInstanceOf(ContractFunctionRevertedError);
  expect((reverted as ContractFunctionRevertedError).data?.errorName).toBe(errorName);
}

describe("ensureFactory", () => {
  // A fresh chain for each test, with no factory yet, whatever ran before.
  let anvil: Anvil;
  let publicClient: PublicClient;
  let relayer: TestWallet;
  beforeEach(async () => {
    anvil = await startAnvil();
    publicClient = publicClientFor(anvil.rpcUrl);
    relayer = walletClientFor(anvil.rpcUrl, ANVIL_KEY_0);
  });
  afterEach(() => anvil?.stop());

  test("fails clearly when the deterministic deployment proxy is missing", async () => {
    await anvil.rpc("anvil_setCode", [DETERMINISTIC_DEPLOYER, "0x"]);
    await expect(ensureFactory({ publicClient, walletClient: relayer })).rejects.toThrow(DETERMINISTIC_DEPLOYER);
  });

  test("deploys the factory through the proxy at the precomputed address, once", async () => {
    expect(await publicClient.getCode({ address: factoryAddress })).toBeUndefined();

    expect(await ensureFactory({ publicClient, walletClient: relayer })).toBe(factoryAddress);
    expect(await publicClient.getCode({ address: factoryAddress })).toMatch(/^0x[0-9a-f]{100,}$/);
    const implementation = await publicClient.readContract({
      ...factoryCall,
      functionName: "IMPLEMENTATION",
    });
    expect(implementation).toBe(forwarderAddress);
    expect(await publicClient.getCode({ address: forwarderAddress })).toMatch(/^0x[0-9a-f]{100,}$/);

    const nonce = await publicClient.getTransactionCount({ address: relayer.account.address });
    expect(await ensureFactory({ publicClient, walletClient: relayer })).toBe(factoryAddress);
    expect(await publicClient.getTransactionCount({ address: relayer.account.address })).toBe(nonce);
  });

  test("the relayer deploys on a nonce from its manager, never one already handed to a transaction not yet sent", async () => {
    const nonces = createNonceManager(publicClient, relayer.account.address, async () => null);
    const held = await nonces.claim(); // signed and stored, about to be broadcast
    const signed = await relayer.signTransaction({
      account: relayer.account,
      chain: relayer.chain,
      to: relayer.account.address,
      value: 0n,
      nonce: held,
      gas: 21_000n,
      maxFeePerGas: parseGwei("10"),
      maxPriorityFeePerGas: parseGwei("1"),
    });

    const deploying = ensureFactory({ publicClient, walletClient: relayer, nonces });
    // The deployment is sent (queued behind the gap, or mined had it taken the held nonce) before the held one.
    await waitFor(
      async () => {
        const pool = await anvil.rpc<{ pending: Hex; queued: Hex }>("txpool_status");
        const sent = await publicClient.getTransactionCount({ address: relayer.account.address });
        return Number(pool.pending) + Number(pool.queued) > 0 || sent > held;
      },
      10_000,
      "the deployment to be sent",
    );
    const receipt = await mined(publicClient, publicClient.sendRawTransaction({ serializedTransaction: signed }));
    expect(receipt.status).toBe("success");
    expect(await deploying).toBe(factoryAddress);
    expect(await publicClient.getCode({ address: factoryAddress })).toMatch(/^0x[0-9a-f]{100,}$/);
    expect(await publicClient.getTransactionCount({ address: relayer.account.address })).toBe(held + 2);
    expect(await nonces.claim()).toBe(held + 2);
  });
});

describe("DepositFactory", () => {
  beforeAll(async () => {
    await ensureFactory({ publicClient, walletClient: relayer });
  });

  test("off-chain salt and deposit address match the factory's views", async () => {
    const cases = [
      params(),
      params({ feeBps: 0, feeRecipient: zeroAddress }),
      params({ feeBps: 10000 }),
      params({ feeBps: 1, token: randomAddress() }),
      params({ feeBps: 65535 }), // the view does not validate; settle does
      ...Array.from({ length: 5 }, () => params({ feeBps: Math.floor(Math.random() * 10001) })),
    ];
    const seen = new Set<Address>();
    for (const p of cases) {
      const args = depositArgs(p);
      const onChainSalt = await publicClient.readContract({ ...factoryCall, functionName: "salt", args });
      const onChain = await publicClient.readContract({ ...factoryCall, functionName: "depositAddress", args });
      expect(depositSalt(p)).toBe(onChainSalt);
      expect(depositAddress(p)).toBe(onChain);
      seen.add(onChain);
    }
    expect(seen.size).toBe(cases.length);
  });

  test("settle by any account sends net to payout and fee to the fee recipient", async () => {
    const cases: [amount: bigint, feeBps: number][] = [
      [1n, 100],
      [99n, 100],
      [7n, 30],
      [999_999n, 250],
      [1_000_001n, 1],
      [123_456_789n, 333],
      [10n ** 15n + 3n, 9999],
      [5_000_000n, 10000],
      [5_000_001n, 0],
    ];
    for (const [amount, feeBps] of cases) {
      const p = params({ feeBps, feeRecipient: feeBps === 0 ? zeroAddress : randomAddress() });
      const deposit = depositAddress(p);
      await mint(usdc, deposit, amount);

      const receipt = await settle(p);

      const fee = (amount * BigInt(feeBps)) / 10000n;
      const net = amount - fee;
      expect(await balanceOf(usdc, p.payout)).toBe(net);
      if (p.feeRecipient !== zeroAddress) expect(await balanceOf(usdc, p.feeRecipient)).toBe(fee);
      expect(await balanceOf(usdc, deposit)).toBe(0n);
      expect(net + fee).toBe(amount);

      const [settled] = parseEventLogs({ abi: depositFactoryAbi, eventName: "Settled", logs: receipt.logs });
      const { paymentId, payout } = p;
      expect(settled?.args).toEqual({ paymentId, depositAddress: deposit, token: usdc, payout, amount, fee });
    }
  });

  test("settling with other recipients or fee touches another, empty address", async () => {
    const p = params({ feeBps: 200 });
    await mint(usdc, depositAddress(p), 1_000_000n);
    const attacker = randomAddress();

    for (const forged of [
      { ...p, payout: attacker },
      { ...p, feeRecipient: attacker },
      { ...p, feeBps: 10000, feeRecipient: attacker },
      { ...p, feeBps: 0, feeRecipient: zeroAddress },
    ]) {
      expect(depositAddress(forged)).not.toBe(depositAddress(p));
      const receipt = await settle(forged);
      const [settled] = parseEventLogs({ abi: depositFactoryAbi, eventName: "Settled", logs: receipt.logs });
      expect(settled?.args.depositAddress).toBe(depositAddress(forged));
      expect(settled?.args.amount).toBe(0n);
    }
    expect(await balanceOf(usdc, attacker)).toBe(0n);
    expect(await balanceOf(usdc, depositAddress(p))).toBe(1_000_000n);

    await settle(p);
    expect(await balanceOf(usdc, p.payout)).toBe(980_000n);
    expect(await balanceOf(usdc, p.feeRecipient)).toBe(20_000n);
  });

  test("a late payment settles again through the already deployed clone", async () => {
    const p = params({ feeBps: 150 });
    const deposit = depositAddress(p);
    await mint(usdc, deposit, 10_000_000n);
    const first = await settle(p);
    await mint(usdc, deposit, 2_500_003n);
    const second = await settle(p);

    expect(await balanceOf(usdc, p.payout)).toBe(9_850_000n + 2_462_503n);
    expect(await balanceOf(usdc, p.feeRecipient)).toBe(150_000n + 37_500n);
    expect(await balanceOf(usdc, deposit)).toBe(0n);
    // Deploying the clone costs ~40k gas more than settling through it.
    expect(first.gasUsed).toBeLessThan(160_000n);
    expect(second.gasUsed).toBeLessThan(first.gasUsed - 30_000n);
    console.log(`gas: first settle (deploy + forward) ${first.gasUsed}, second settle ${second.gasUsed}`);
  });

  test("a blocked recipient reverts the settlement and the funds stay put until unblocked", async () => {
    const p = params({ feeBps: 100 });
    const deposit = depositAddress(p);
    await mint(usdc, deposit, 3_000_000n);

    for (const blocked of [p.payout, p.feeRecipient]) {
      await setBlocked(blocked, true);
      await expectRevert(simulateSettle(p), "TokenTransferFailed");
      // Mined anyway (explicit gas skips estimation): the whole transaction reverts.
      const hash = await stranger.writeContract({
        ...factoryCall,
        functionName: "settle",
        args: depositArgs(p),
        gas: 500_000n,
      });
      expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
      expect(await balanceOf(usdc, deposit)).toBe(3_000_000n);
      expect(await balanceOf(usdc, p.payout)).toBe(0n);
      expect(await balanceOf(usdc, p.feeRecipient)).toBe(0n);
      await setBlocked(blocked, false);
    }

    await settle(p);
    expect(await balanceOf(usdc, p.payout)).toBe(2_970_000n);
    expect(await balanceOf(usdc, p.feeRecipient)).toBe(30_000n);
    expect(await balanceOf(usdc, deposit)).toBe(0n);
  });

  test("recover sends other tokens and native coin to the payout address, without fee", async () => {
    const p = params({ feeBps: 500 });
    const deposit = depositAddress(p);
    const other = await deployTestToken(publicClient, relayer, { name: "Other", symbol: "OTH", decimals: 18 });
    const usdtLike = await deployTestToken(publicClient, relayer, { decimals: 6, returnsNothing: true });
    // All of it arrives before the clone exists.
    await mint(other, deposit, parseEther("12.5"));
    await mint(usdtLike, deposit, 777n);
    await mined(publicClient, relayer.sendTransaction({ to: deposit, value: parseEther("0.3") }));
    expect(await publicClient.getCode({ address: deposit })).toBeUndefined();

    await recover(p, zeroAddress);
    expect(await publicClient.getBalance({ address: p.payout })).toBe(parseEther("0.3"));
    expect(await publicClient.getBalance({ address: deposit })).toBe(0n);

    const receipt = await recover(p, other);
    expect(await balanceOf(other, p.payout)).toBe(parseEther("12.5"));
    expect(await balanceOf(other, deposit)).toBe(0n);
    const [recovered] = parseEventLogs({ abi: depositFactoryAbi, eventName: "Recovered", logs: receipt.logs });
    expect(recovered?.args).toEqual({
      paymentId: p.paymentId,
      depositAddress: deposit,
      token: other,
      payout: p.payout,
      amount: parseEther("12.5"),
    });

    await recover(p, usdtLike);
    expect(await balanceOf(usdtLike, p.payout)).toBe(777n);
    expect(await balanceOf(usdtLike, p.feeRecipient)).toBe(0n);
  });

  test("recover refuses the committed token, which must go through settle with its fee", async () => {
    const p = params({ feeBps: 100 });
    await mint(usdc, depositAddress(p), 1_000n);
    await expectRevert(
      publicClient.simulateContract({
        account: stranger.account,
        ...factoryCall,
        functionName: "recover",
        args: [...depositArgs(p), usdc],
      }),
      "CommittedToken",
    );
    expect(await balanceOf(usdc, depositAddress(p))).toBe(1_000n);
  });

  test("settles a token whose transfer returns nothing (USDT-style)", async () => {
    const usdtLike = await deployTestToken(publicClient, relayer, { decimals: 6, returnsNothing: true });
    const p = params({ token: usdtLike, feeBps: 100 });
    await mint(usdtLike, depositAddress(p), 1_000_050n);
    await settle(p);
    expect(await balanceOf(usdtLike, p.payout)).toBe(990_050n);
    expect(await balanceOf(usdtLike, p.feeRecipient)).toBe(10_000n);
  });

  test("the forwarder clone and implementation obey only the factory", async () => {
    const p = params();
    const deposit = depositAddress(p);
    await mint(usdc, deposit, 1_000n);
    await settle(p); // deploys the clone
    await mint(usdc, deposit, 5_000n);
    await mined(publicClient, relayer.sendTransaction({ to: deposit, value: 1_000n }));

    const thief = stranger.account.address;
    for (const target of [deposit, forwarderAddress]) {
      const call = { account: stranger.account, address: target, abi: forwarderAbi } as const;
      await expectRevert(
        publicClient.simulateContract({ ...call, functionName: "forward", args: [usdc, thief, thief, 0] }),
        "NotFactory",
      );
      await expectRevert(
        publicClient.simulateContract({ ...call, functionName: "sweep", args: [usdc, thief] }),
        "NotFactory",
      );
      await expectRevert(
        publicClient.simulateContract({ ...call, functionName: "sweepNative", args: [thief] }),
        "NotFactory",
      );
      const hash = await stranger.writeContract({ ...call, functionName: "sweep", args: [usdc, thief], gas: 200_000n });
      expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
    }
    expect(await balanceOf(usdc, deposit)).toBe(5_000n);
    expect(await publicClient.getBalance({ address: deposit })).toBe(1_000n);
    expect(await balanceOf(usdc, thief)).toBe(0n);
  });

  test("rejects invalid fee parameters and a zero payout", async () => {
    await expectRevert(simulateSettle(params({ feeBps: 10001 })), "FeeTooHigh");
    await expectRevert(simulateSettle(params({ feeBps: 65535 })), "FeeTooHigh");
    await expectRevert(simulateSettle(params({ feeBps: 1, feeRecipient: zeroAddress })), "MissingFeeRecipient");
    await expectRevert(simulateSettle(params({ payout: zeroAddress })), "MissingPayout");

    const p = params({ feeBps: 10001 });
    await mint(usdc, depositAddress(p), 1_000n);
    const hash = await stranger.writeContract({
      ...factoryCall,
      functionName: "settle",
      args: depositArgs(p),
      gas: 300_000n,
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe("reverted");
    expect(await balanceOf(usdc, depositAddress(p))).toBe(1_000n);
    expect(await publicClient.getCode({ address: depositAddress(p) })).toBeUndefined();
  });

  test("the artifact's deployed forwarder code is what runs at the implementation address", async () => {
    // Immutables (FACTORY) are zero placeholders in the artifact; everything else must match.
    const code = await publicClient.getCode({ address: forwarderAddress });
    const factoryWord = factoryAddress.slice(2).toLowerCase().padStart(64, "0");
    expect(code).toContain(factoryWord);
    expect(code?.replaceAll(factoryWord, "0".repeat(64))).toBe(artifacts.DepositForwarder.deployedBytecode);
  });
});
