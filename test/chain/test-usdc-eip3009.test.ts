/**
 * TestUSDC's EIP-3009, signed with viem's signTypedData as a wallet would, against the behaviour
 * of Circle's FiatToken v2.2 (contracts/v2/EIP3009.sol in circlefin/stablecoin-evm): the domain
 * ("USD Coin", "2", the chain id, the token), strict validity window, nonces used once,
 * `receiveWithAuthorization` only by the payee, cancellation, the blacklist and FiatToken's
 * revert strings.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Address,
  domainSeparator,
  type Hex,
  hexToSignature,
  keccak256,
  parseAbi,
  parseEventLogs,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { mined, testTokenAbi, walletClientFor } from "../support/chain.ts";
import { expectRevert } from "../support/contract-chains.ts";
import { randomAddress, startChain, type TestChain } from "../support/test-chain.ts";

const abi = parseAbi([
  "function version() view returns (string)",
  "function name() view returns (string)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function TRANSFER_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function RECEIVE_WITH_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function CANCEL_AUTHORIZATION_TYPEHASH() view returns (bytes32)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)",
  "function blacklist(address account)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

const fields = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

let chain: TestChain;
const payerKey = generatePrivateKey();
const payer = privateKeyToAccount(payerKey);
const randomNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)));

beforeAll(async () => {
  chain = await startChain({ factory: false });
  await mined(
    chain.publicClient,
    chain.deployer.writeContract({
      address: chain.usdc,
      abi: testTokenAbi,
      functionName: "mint",
      args: [payer.address, 100_000_000n],
    }),
  );
});
afterAll(() => chain?.stop());

const domain = () => ({ name: "USD Coin", version: "2", chainId: chain.anvil.chainId, verifyingContract: chain.usdc });

async function now(): Promise<bigint> {
  return (await chain.publicClient.getBlock()).timestamp;
}

type Message = { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex };

async function message(over: Partial<Message> = {}): Promise<Message> {
  const t = await now();
  return {
    from: payer.address,
    to: randomAddress(),
    value: 1_000_000n,
    validAfter: t - 60n,
    validBefore: t + 3600n,
    nonce: randomNonce(),
    ...over,
  };
}

function sign(
  m: Message,
  opts: { key?: Hex; primaryType?: "TransferWithAuthorization" | "ReceiveWithAuthorization"; chainId?: number } = {},
) {
  const account = privateKeyToAccount(opts.key ?? payerKey);
  const primaryType = opts.primaryType ?? "TransferWithAuthorization";
  return account.signTypedData({
    domain: { ...domain(), ...(opts.chainId ? { chainId: opts.chainId } : {}) },
    types: { [primaryType]: fields },
    primaryType,
    message: m,
  } as Parameters<typeof account.signTypedData>[0]);
}

const args = (m: Message, signature: Hex) =>
  [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, signature] as const;

function simulateTransfer(m: Message, signature: Hex) {
  return chain.publicClient.simulateContract({
    account: chain.deployer.account,
    address: chain.usdc,
    abi,
    functionName: "transferWithAuthorization",
    args: args(m, signature),
  });
}

async function submit(m: Message, signature: Hex) {
  return mined(
    chain.publicClient,
    chain.deployer.writeContract({
      address: chain.usdc,
      abi,
      functionName: "transferWithAuthorization",
      args: args(m, signature),
    }),
  );
}

describe("TestUSDC EIP-3009", () => {
  test("the domain is USD Coin, version 2, this chain and this token; the type hashes are EIP-3009's", async () => {
    const read = <F extends "version" | "name" | "DOMAIN_SEPARATOR">(functionName: F) =>
      chain.publicClient.readContract({ address: chain.usdc, abi, functionName });
    expect(await read("name")).toBe("USD Coin");
    expect(await read("version")).toBe("2");
    expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain: domain() }));
    const typeHash = (
      f:
        | "TRANSFER_WITH_AUTHORIZATION_TYPEHASH"
        | "RECEIVE_WITH_AUTHORIZATION_TYPEHASH"
        | "CANCEL_AUTHORIZATION_TYPEHASH",
    ) => chain.publicClient.readContract({ address: chain.usdc, abi, functionName: f });
    // The constants Circle's EIP3009.sol spells out.
    expect(await typeHash("TRANSFER_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267",
    );
    expect(await typeHash("RECEIVE_WITH_AUTHORIZATION_TYPEHASH")).toBe(
      "0xd099cc98ef71107a616c4f0f941f04c322d8e254fe26b3c6668db87aae413de8",
    );
    expect(await typeHash("CANCEL_AUTHORIZATION_TYPEHASH")).toBe(
      keccak256(toHex("CancelAuthorization(address authorizer,bytes32 nonce)")),
    );
  });

  test("a signed transfer moves the funds once, paid for by whoever submits it; a replay reverts", async () => {
    const m = await message();
    const signature = await sign(m);
    const before = await chain.usdcBalance(payer.address);
    expect(await chain.publicClient.getBalance({ address: payer.address })).toBe(0n);
    const receipt = await submit(m, signature);
    expect(await chain.usdcBalance(m.to)).toBe(m.value);
    expect(await chain.usdcBalance(payer.address)).toBe(before - m.value);
    const used = parseEventLogs({ abi, logs: receipt.logs, eventName: "AuthorizationUsed" });
    expect(used.map((l) => l.args)).toEqual([{ authorizer: payer.address, nonce: m.nonce }]);
    expect(
      await chain.publicClient.readContract({
        address: chain.usdc,
        abi,
        functionName: "authorizationState",
        args: [payer.address, m.nonce],
      }),
    ).toBe(true);
    await expectRevert(simulateTransfer(m, signature), { reason: "FiatTokenV2: authorization is used or canceled" });
  });

  test("the v, r, s overload takes the same signature split", async () => {
    const m = await message();
    const { v, r, s } = hexToSignature(await sign(m));
    await mined(
      chain.publicClient,
      chain.deployer.writeContract({
        address: chain.usdc,
        abi,
        functionName: "transferWithAuthorization",
        args: [m.from, m.to, m.value, m.validAfter, m.validBefore, m.nonce, Number(v), r, s],
      }),
    );
    expect(await chain.usdcBalance(m.to)).toBe(m.value);
  });

  test("outside its window it reverts: expired, or not yet valid", async () => {
    const t = await now();
    const expired = await message({ validAfter: 0n, validBefore: t });
    await expectRevert(simulateTransfer(expired, await sign(expired)), {
      reason: "FiatTokenV2: authorization is expired",
    });
    const early = await message({ validAfter: t + 3600n, validBefore: t + 7200n });
    await expectRevert(simulateTransfer(early, await sign(early)), {
      reason: "FiatTokenV2: authorization is not yet valid",
    });
  });

  test("a signature by someone else, for another chain, or for other terms is invalid", async () => {
    const m = await message();
    await expectRevert(simulateTransfer(m, await sign(m, { key: generatePrivateKey() })), {
      reason: "FiatTokenV2: invalid signature",
    });
    await expectRevert(simulateTransfer(m, await sign(m, { chainId: 1 })), {
      reason: "FiatTokenV2: invalid signature",
    });
    const signature = await sign(m);
    await expectRevert(simulateTransfer({ ...m, value: m.value + 1n }, signature), {
      reason: "FiatTokenV2: invalid signature",
    });
    await expectRevert(simulateTransfer({ ...m, to: randomAddress() }, signature), {
      reason: "FiatTokenV2: invalid signature",
    });
    // A ReceiveWithAuthorization signature does not pass for a transfer.
    await expectRevert(simulateTransfer(m, await sign(m, { primaryType: "ReceiveWithAuthorization" })), {
      reason: "FiatTokenV2: invalid signature",
    });
  });

  test("more than the balance reverts with FiatTokenV1's message", async () => {
    const m = await message({ value: 10n ** 12n });
    await expectRevert(simulateTransfer(m, await sign(m)), { reason: "ERC20: transfer amount exceeds balance" });
  });

  test("receiveWithAuthorization is the payee's alone", async () => {
    const payeeKey = await chain.fundedKey();
    const payee = privateKeyToAccount(payeeKey);
    const m = await message({ to: payee.address });
    const signature = await sign(m, { primaryType: "ReceiveWithAuthorization" });
    await expectRevert(
      chain.publicClient.simulateContract({
        account: chain.deployer.account,
        address: chain.usdc,
        abi,
        functionName: "receiveWithAuthorization",
        args: args(m, signature),
      }),
      { reason: "FiatTokenV2: caller must be the payee" },
    );
    const { request } = await chain.publicClient.simulateContract({
      account: payee,
      address: chain.usdc,
      abi,
      functionName: "receiveWithAuthorization",
      args: args(m, signature),
    });
    await mined(chain.publicClient, walletClientFor(chain.rpcUrl, payeeKey).writeContract(request));
    expect(await chain.usdcBalance(payee.address)).toBe(m.value);
  });

  test("a canceled authorization cannot be used, and cannot be canceled twice", async () => {
    const m = await message();
    const cancel = await payer.signTypedData({
      domain: domain(),
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" },
        ],
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: payer.address, nonce: m.nonce },
    });
    const receipt = await mined(
      chain.publicClient,
      chain.deployer.writeContract({
        address: chain.usdc,
        abi,
        functionName: "cancelAuthorization",
        args: [payer.address, m.nonce, cancel],
      }),
    );
    expect(parseEventLogs({ abi, logs: receipt.logs, eventName: "AuthorizationCanceled" }).map((l) => l.args)).toEqual([
      { authorizer: payer.address, nonce: m.nonce },
    ]);
    await expectRevert(simulateTransfer(m, await sign(m)), {
      reason: "FiatTokenV2: authorization is used or canceled",
    });
    await expectRevert(
      chain.publicClient.simulateContract({
        account: chain.deployer.account,
        address: chain.usdc,
        abi,
        functionName: "cancelAuthorization",
        args: [payer.address, m.nonce, cancel],
      }),
      { reason: "FiatTokenV2: authorization is used or canceled" },
    );
  });

  test("a blacklisted payer or payee cannot transfer by authorization", async () => {
    const m = await message();
    await mined(
      chain.publicClient,
      chain.deployer.writeContract({ address: chain.usdc, abi, functionName: "blacklist", args: [m.to] }),
    );
    await expectRevert(simulateTransfer(m, await sign(m)), { reason: "Blacklistable: account is blacklisted" });
  });
});
