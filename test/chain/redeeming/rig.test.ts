/**
 * The offline CCTP V2 rig: two anvils as two chains, the test transmitter and messenger at the
 * same addresses on both, and the local attestation service between them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  type Abi,
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  encodePacked,
  erc20Abi,
  type Hex,
  http,
  keccak256,
  maxUint256,
  type PublicClient,
  pad,
  parseEventLogs,
  toHex,
  zeroHash,
} from "viem";
import { generatePrivateKey, privateKeyToAccount, sign } from "viem/accounts";
import { foundry } from "viem/chains";
import { artifacts } from "../../../src/chain/contracts.ts";
import {
  type AttestationService,
  decodeCctpMessage,
  startAttestationService,
} from "../../../src/dev/attestation-service.ts";
import {
  CCTP_DEPLOYER_KEY,
  cctpAddresses,
  deployCctp,
  testMessageTransmitterV2Abi,
  testTokenMessengerV2Abi,
} from "../../../src/dev/cctp-rig.ts";
import { ANVIL_KEY_0, ANVIL_KEY_1, ANVIL_KEY_2, type Anvil, startAnvil } from "../../support/anvil.ts";
import { deployTestUsdc, mined, type TestWallet, testTokenAbi } from "../../support/chain.ts";
import { waitFor } from "../../support/wait.ts";

const SRC = 3; // the source chain plays Arbitrum's domain
const DST = 6; // the settlement chain plays Base's
const FAST_BPS = 1;

type Side = { anvil: Anvil; publicClient: PublicClient; wallet(key: Hex): TestWallet; usdc: Address };
let src: Side;
let dst: Side;
let service: AttestationService;
const attesterKey = generatePrivateKey();
const payer = privateKeyToAccount(ANVIL_KEY_1).address;
const recipient = privateKeyToAccount(generatePrivateKey()).address;
const attester = privateKeyToAccount(attesterKey).address;
const deployer = privateKeyToAccount(CCTP_DEPLOYER_KEY).address;
/** The deployer's transaction count on [src, dst] right after the rig was deployed (later tests send from it too). */
let deployedNonces: number[];

async function chainSide(chainId: number, usdcDeployerKey: Hex): Promise<Side> {
  const anvil = await startAnvil({ chainId });
  const chain = defineChain({ ...foundry, id: chainId });
  const publicClient = createPublicClient({ chain, transport: http(anvil.rpcUrl), pollingInterval: 20 });
  const wallet = (key: Hex) =>
    createWalletClient({ chain, transport: http(anvil.rpcUrl), account: privateKeyToAccount(key) });
  const usdc = await deployTestUsdc(publicClient, wallet(usdcDeployerKey));
  return { anvil, publicClient, wallet, usdc };
}

beforeAll(async () => {
  // Different USDC deployers, so the two USDC addresses differ and the token mapping matters.
  [src, dst] = await Promise.all([chainSide(31338, ANVIL_KEY_0), chainSide(31337, ANVIL_KEY_2)]);
  await Promise.all([rig(src, SRC, { [DST]: dst.usdc }), rig(dst, DST, { [SRC]: src.usdc })]);
  deployedNonces = await Promise.all(
    [src, dst].map((side) => side.publicClient.getTransactionCount({ address: deployer })),
  );
  service = startAttestationService({
    sources: { [SRC]: { rpcUrl: src.anvil.rpcUrl, transmitter: cctpAddresses.messageTransmitter } },
    destinations: { [DST]: { rpcUrl: dst.anvil.rpcUrl } },
    attesterKey,
    fees: { fast: FAST_BPS, standard: 0 },
  });
  const payerWallet = src.wallet(ANVIL_KEY_1);
  await mined(
    src.publicClient,
    payerWallet.writeContract({ address: src.usdc, abi: testTokenAbi, functionName: "mint", args: [payer, 10n ** 9n] }),
  );
  await mined(src.publicClient, approveMessenger());
}, 60_000);

afterAll(async () => {
  await service?.stop();
  await Promise.all([src?.anvil.stop(), dst?.anvil.stop()]);
});

function rig(side: Side, domain: number, remoteUsdc: Record<number, Address>) {
  return deployCctp({
    publicClient: side.publicClient,
    walletClient: side.wallet(ANVIL_KEY_0),
    domain,
    usdc: side.usdc,
    remoteUsdc,
    attester,
  });
}

function approveMessenger(): Promise<Hex> {
  const args = [cctpAddresses.tokenMessenger, 2n ** 256n - 1n] as const;
  return src.wallet(ANVIL_KEY_1).writeContract({ address: src.usdc, abi: erc20Abi, functionName: "approve", args });
}

/** The payer burns on the source for `recipient` on the destination; returns the tx hash. */
function burn(amount: bigint, maxFee: bigint, minFinalityThreshold = 1000): Promise<Hex> {
  return src.wallet(ANVIL_KEY_1).writeContract({
    address: cctpAddresses.tokenMessenger,
    abi: testTokenMessengerV2Abi,
    functionName: "depositForBurn",
    args: [amount, DST, pad(recipient), src.usdc, zeroHash, maxFee, minFinalityThreshold],
  });
}

type ApiMessage = {
  message: Hex;
  eventNonce: Hex;
  attestation: Hex | "PENDING";
  status: string;
  decodedMessage: { decodedMessageBody: Record<string, string> } | null;
};

async function getMessages(
  txHash: Hex,
): Promise<{ status: number; body: { messages?: ApiMessage[]; error?: string } }> {
  const res = await fetch(`${service.url}/v2/messages/${SRC}?transactionHash=${txHash}`);
  return { status: res.status, body: (await res.json()) as never };
}

function attested(txHash: Hex): Promise<ApiMessage> {
  return waitFor(
    async () => {
      const { status, body } = await getMessages(txHash);
      return status === 200 && body.messages![0]!.status === "complete" ? body.messages![0]! : undefined;
    },
    10_000,
    `an attestation for ${txHash}`,
  );
}

function receive(message: Hex, attestation: Hex) {
  return dst.wallet(ANVIL_KEY_2).writeContract({
    address: cctpAddresses.messageTransmitter,
    abi: testMessageTransmitterV2Abi,
    functionName: "receiveMessage",
    args: [message, attestation],
  });
}

const balance = (side: Side, owner: Address) =>
  side.publicClient.readContract({ address: side.usdc, abi: testTokenAbi, functionName: "balanceOf", args: [owner] });

describe("CCTP rig", () => {
  test("the contracts have the same addresses on both chains, and deploying again changes nothing", async () => {
    // On each chain: two deployments, the remote messenger, the USDC link and its burn limit.
    expect(deployedNonces).toEqual([5, 5]);
    for (const [side, domain] of [
      [src, SRC],
      [dst, DST],
    ] as const) {
      const before = await side.publicClient.getTransactionCount({ address: deployer });
      expect(await rig(side, domain, {})).toEqual({ domain, ...cctpAddresses });
      const transmitter = { address: cctpAddresses.messageTransmitter, abi: testMessageTransmitterV2Abi } as const;
      expect(await side.publicClient.readContract({ ...transmitter, functionName: "localDomain" })).toBe(domain);
      expect(await side.publicClient.getTransactionCount({ address: deployer })).toBe(before);
    }
    expect(cctpAddresses).toEqual({
      messageTransmitter: "0x700b6A60ce7EaaEA56F065753d8dcB9653dbAD35" as Address,
      tokenMessenger: "0xA15BB66138824a1c7167f5E85b957d04Dd34E468" as Address,
    });
  });

  test("the typed ABIs match the artifacts", () => {
    expect(canonical(testMessageTransmitterV2Abi)).toEqual(canonical(artifacts.TestMessageTransmitterV2.abi));
    expect(canonical(testTokenMessengerV2Abi)).toEqual(canonical(artifacts.TestTokenMessengerV2.abi));
  });

  test("fees and fast allowance answer in Circle's shapes", async () => {
    const fees = await (await fetch(`${service.url}/v2/burn/USDC/fees/${SRC}/${DST}`)).json();
    expect(fees).toEqual([
      { finalityThreshold: 1000, minimumFee: FAST_BPS },
      { finalityThreshold: 2000, minimumFee: 0 },
    ]);
    const allowance = (await (await fetch(`${service.url}/v2/fastBurn/USDC/allowance`)).json()) as {
      allowance: number;
      lastUpdated: string;
    };
    expect(allowance.allowance).toBe(1_000_000);
    expect(Number.isNaN(Date.parse(allowance.lastUpdated))).toBe(false);
  });

  test("a fast burn is found once mined, attested after the delay, and mints amount minus fee once", async () => {
    service.setDelay(300);
    const amount = 10_000_001n; // fast fee = ceil(1000.0001) = 1001
    await src.anvil.rpc("evm_setAutomine", [false]);
    const [recipientBefore, feesBefore] = await Promise.all([balance(dst, recipient), balance(dst, deployer)]);
    const txHash = await burn(amount, 5_000n);
    expect((await getMessages(txHash)).status).toBe(404); // not mined yet
    await src.anvil.rpc("evm_mine");
    await src.anvil.rpc("evm_setAutomine", [true]);
    const receipt = await src.publicClient.waitForTransactionReceipt({ hash: txHash });
    const [sent] = parseEventLogs({ abi: testMessageTransmitterV2Abi, eventName: "MessageSent", logs: receipt.logs });

    const first = await getMessages(txHash);
    expect(first.status).toBe(200);
    expect(first.body.messages![0]).toMatchObject({ status: "pending_confirmations", attestation: "PENDING" });

    const { message, attestation, eventNonce, decodedMessage } = await attested(txHash);
    service.setDelay(0);
    const logged = decodeCctpMessage(sent!.args.message);
    const signed = decodeCctpMessage(message);
    expect(logged.nonce).toBe(zeroHash);
    expect(signed).toEqual({
      ...logged,
      nonce: eventNonce,
      finalityThresholdExecuted: 1000,
      messageBody: signed.messageBody,
      body: { ...logged.body, feeExecuted: 1001n },
    });
    expect(decodedMessage!.decodedMessageBody).toMatchObject({
      amount: "10000001",
      feeExecuted: "1001",
      expirationBlock: "0",
    });

    const relayed = await mined(dst.publicClient, receive(message, attestation as Hex));
    const [received] = parseEventLogs({
      abi: testMessageTransmitterV2Abi,
      eventName: "MessageReceived",
      logs: relayed.logs,
    });
    expect(received!.args).toMatchObject({ sourceDomain: SRC, nonce: eventNonce, finalityThresholdExecuted: 1000 });
    expect(await balance(dst, recipient)).toBe(recipientBefore + amount - 1001n);
    expect(await balance(dst, deployer)).toBe(feesBefore + 1001n); // the fee recipient
    const transmitter = { address: cctpAddresses.messageTransmitter, abi: testMessageTransmitterV2Abi } as const;
    expect(
      await dst.publicClient.readContract({ ...transmitter, functionName: "usedNonces", args: [eventNonce] }),
    ).toBe(1n);
    await expect(receive(message, attestation as Hex)).rejects.toThrow("Nonce already used");
  });

  test("a mined transaction without a burn, or an unknown one, stays 404", async () => {
    const approve = await mined(src.publicClient, approveMessenger());
    for (const hash of [approve.transactionHash, `0x${"ab".repeat(32)}` as Hex]) {
      expect(await getMessages(hash)).toEqual({ status: 404, body: { error: "Message hash not found" } });
    }
  });

  test("a burn whose maxFee is below the fast fee is attested as standard, without fee", async () => {
    const before = await balance(dst, recipient);
    const { message, attestation } = await attested(await burn(50_000_000n, 0n));
    expect(decodeCctpMessage(message)).toMatchObject({ finalityThresholdExecuted: 2000, body: { feeExecuted: 0n } });
    await mined(dst.publicClient, receive(message, attestation as Hex));
    expect(await balance(dst, recipient)).toBe(before + 50_000_000n);
    await expect(burn(1_000n, 1_000n)).rejects.toThrow("Max fee must be less than amount");
  });

  test("a wrong signer, a tampered message or a short attestation is refused", async () => {
    const { message, attestation } = await attested(await burn(2_000_000n, 1_000n));
    const forged = await sign({ hash: keccak256(message), privateKey: generatePrivateKey(), to: "hex" });
    await expect(receive(message, forged)).rejects.toThrow("Invalid signature: not attester");
    const tampered = `${message.slice(0, -2)}ff` as Hex; // last byte of expirationBlock
    await expect(receive(tampered, attestation as Hex)).rejects.toThrow("Invalid signature: not attester");
    await expect(receive(message, attestation.slice(0, -2) as Hex)).rejects.toThrow("Invalid attestation length");
    await mined(dst.publicClient, receive(message, attestation as Hex)); // the genuine one still works
  });

  test("an expired message is refused until re-attested", async () => {
    service.expireNextMessages(1);
    const before = await balance(dst, recipient);
    const txHash = await burn(3_000_000n, 1_000n);
    const expired = await attested(txHash);
    expect(Number(expired.decodedMessage!.decodedMessageBody.expirationBlock)).toBeGreaterThan(0);
    await expect(receive(expired.message, expired.attestation as Hex)).rejects.toThrow(
      "Message expired and must be re-signed",
    );

    const res = await fetch(`${service.url}/v2/reattest/${expired.eventNonce}`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { message: string }).message).toBe(
      `Re-attestation successfully requested for nonce ${expired.eventNonce}`,
    );
    expect(service.reattestCount).toBe(1);

    const fresh = await attested(txHash);
    const byNonce = await fetch(`${service.url}/v2/messages/${SRC}?nonce=${expired.eventNonce}`);
    expect(((await byNonce.json()) as { messages: ApiMessage[] }).messages).toEqual([fresh]);
    expect(fresh.eventNonce).toBe(expired.eventNonce);
    expect(fresh.message).not.toBe(expired.message);
    expect(fresh.decodedMessage!.decodedMessageBody.expirationBlock).toBe("0");
    await mined(dst.publicClient, receive(fresh.message, fresh.attestation as Hex));
    expect(await balance(dst, recipient)).toBe(before + 3_000_000n - 300n);
  });

  test("with a threshold of two, signatures by both attesters in address order are accepted", async () => {
    const secondKey = generatePrivateKey();
    const owner = dst.wallet(CCTP_DEPLOYER_KEY);
    const transmitter = { address: cctpAddresses.messageTransmitter, abi: testMessageTransmitterV2Abi } as const;
    await mined(
      dst.publicClient,
      owner.writeContract({
        ...transmitter,
        functionName: "enableAttester",
        args: [privateKeyToAccount(secondKey).address],
      }),
    );
    await mined(
      dst.publicClient,
      owner.writeContract({ ...transmitter, functionName: "setSignatureThreshold", args: [2n] }),
    );
    const both = startAttestationService({
      sources: { [SRC]: { rpcUrl: src.anvil.rpcUrl, transmitter: cctpAddresses.messageTransmitter } },
      destinations: {},
      attesterKey: [secondKey, attesterKey],
    });
    try {
      const txHash = await burn(4_000_000n, 1_000n);
      const single = await attested(txHash); // one signature is now too few
      await expect(receive(single.message, single.attestation as Hex)).rejects.toThrow("Invalid attestation length");
      const res = await fetch(`${both.url}/v2/messages/${SRC}?transactionHash=${txHash}`);
      const { message, attestation } = ((await res.json()) as { messages: ApiMessage[] }).messages[0]!;
      expect(attestation.length).toBe(2 + 2 * 130);
      const swapped = `0x${attestation.slice(132)}${attestation.slice(2, 132)}` as Hex;
      await expect(receive(message, swapped)).rejects.toThrow("Invalid signature order or dupe");
      await mined(dst.publicClient, receive(message, attestation as Hex));
    } finally {
      await both.stop();
      await mined(
        dst.publicClient,
        owner.writeContract({ ...transmitter, functionName: "setSignatureThreshold", args: [1n] }),
      );
    }
  });

  test("down answers 503 and ratelimit 429 with Retry-After, to every path", async () => {
    const paths = [
      `/v2/messages/${SRC}?transactionHash=${zeroHash}`,
      `/v2/burn/USDC/fees/${SRC}/${DST}`,
      "/v2/fastBurn/USDC/allowance",
    ];
    try {
      service.setMode("down");
      for (const path of paths) expect((await fetch(service.url + path)).status).toBe(503);
      service.setMode("ratelimit", { retryAfterSeconds: 7 });
      for (const path of paths) {
        const res = await fetch(service.url + path);
        expect([res.status, res.headers.get("retry-after")]).toEqual([429, "7"]);
      }
    } finally {
      service.setMode("normal");
    }
    expect((await fetch(`${service.url}/v2/fastBurn/USDC/allowance`)).status).toBe(200);
  });
});

/** A CCTP V2 message in Circle's layout (MessageV2), as an attester would sign it for `dst`. */
function cctpMessage(m: {
  version?: number;
  destinationDomain?: number;
  nonce?: Hex;
  sender?: Hex;
  finalityThresholdExecuted?: number;
  body: Hex;
}): Hex {
  const messenger = pad(cctpAddresses.tokenMessenger);
  return encodePacked(
    ["uint32", "uint32", "uint32", "bytes32", "bytes32", "bytes32", "bytes32", "uint32", "uint32", "bytes"],
    [
      m.version ?? 1,
      SRC,
      m.destinationDomain ?? DST,
      m.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
      m.sender ?? messenger,
      messenger,
      zeroHash,
      1000,
      m.finalityThresholdExecuted ?? 2000,
      m.body,
    ],
  );
}

/** A burn message body in Circle's layout (BurnMessageV2): `amount` of SRC's USDC for `recipient`. */
function burnBody(b: { amount: bigint; maxFee?: bigint; feeExecuted?: bigint }): Hex {
  return encodePacked(
    ["uint32", "bytes32", "bytes32", "uint256", "bytes32", "uint256", "uint256", "uint256"],
    [1, pad(src.usdc), pad(recipient), b.amount, pad(payer), b.maxFee ?? 0n, b.feeExecuted ?? 0n, 0n],
  );
}

/** Signs `message` as the enabled attester and submits it on `dst`. */
async function receiveSigned(message: Hex) {
  return receive(message, await sign({ hash: keccak256(message), privateKey: attesterKey, to: "hex" }));
}

/** Runs `body` with an owner setting of the source messenger changed, then puts it back. */
async function withSourceMessenger(
  change: { functionName: "setMaxBurnAmountPerMessage" | "setMinFee"; args: readonly unknown[] },
  restore: typeof change,
  body: () => Promise<void>,
) {
  const owner = src.wallet(CCTP_DEPLOYER_KEY);
  const messenger = { address: cctpAddresses.tokenMessenger, abi: testTokenMessengerV2Abi } as const;
  const write = (c: typeof change) => mined(src.publicClient, owner.writeContract({ ...messenger, ...c } as never));
  await write(change);
  try {
    await body();
  } finally {
    await write(restore);
  }
}

describe("CCTP rig, checked against Circle's V2 contracts", () => {
  test("message and body versions read through Circle's getters", async () => {
    for (const side of [src, dst]) {
      const read = (address: Address, abi: Abi, functionName: string) =>
        side.publicClient.readContract({ address, abi, functionName } as never);
      expect(await read(cctpAddresses.messageTransmitter, testMessageTransmitterV2Abi, "version")).toBe(1);
      expect(await read(cctpAddresses.tokenMessenger, testTokenMessengerV2Abi, "messageBodyVersion")).toBe(1);
    }
  });

  test("a burn to a domain without a registered messenger is refused", async () => {
    await expect(
      src.wallet(ANVIL_KEY_1).writeContract({
        address: cctpAddresses.tokenMessenger,
        abi: testTokenMessengerV2Abi,
        functionName: "depositForBurn",
        args: [1_000_000n, 7, pad(recipient), src.usdc, zeroHash, 0n, 2000],
      }),
    ).rejects.toThrow("No TokenMessenger for domain");
  });

  test("a burn above the per-message burn limit is refused, one at the limit goes", async () => {
    const limit = 1_000_000n;
    await withSourceMessenger(
      { functionName: "setMaxBurnAmountPerMessage", args: [src.usdc, limit] },
      { functionName: "setMaxBurnAmountPerMessage", args: [src.usdc, maxUint256] },
      async () => {
        await expect(burn(limit + 1n, 0n)).rejects.toThrow("Burn amount exceeds per tx limit");
        expect((await mined(src.publicClient, burn(limit, 0n))).status).toBe("success");
      },
    );
  });

  test("with a minimum fee (V2.1), a burn offering less is refused", async () => {
    await withSourceMessenger(
      { functionName: "setMinFee", args: [1_000n] }, // 1 bp, in 1/1000 bp
      { functionName: "setMinFee", args: [0n] },
      async () => {
        const messenger = { address: cctpAddresses.tokenMessenger, abi: testTokenMessengerV2Abi } as const;
        const min = await src.publicClient.readContract({
          ...messenger,
          functionName: "getMinFeeAmount",
          args: [10_000_000n],
        });
        expect(min).toBe(1_000n);
        await expect(burn(10_000_000n, min - 1n, 2000)).rejects.toThrow("Insufficient max fee");
        expect((await mined(src.publicClient, burn(10_000_000n, min, 2000))).status).toBe("success");
      },
    );
  });

  test("an unfinalized message executed at 500 mints; below 500 it is refused", async () => {
    const before = await balance(dst, recipient);
    const body = burnBody({ amount: 700n });
    await expect(receiveSigned(cctpMessage({ finalityThresholdExecuted: 499, body }))).rejects.toThrow(
      "Unsupported finality threshold",
    );
    await mined(dst.publicClient, receiveSigned(cctpMessage({ finalityThresholdExecuted: 500, body })));
    expect(await balance(dst, recipient)).toBe(before + 700n);
  });

  test("received messages are checked in Circle's order, and the empty nonce is never received", async () => {
    // Fee at the amount and above the max fee: the amount check comes first.
    const greedy = burnBody({ amount: 500n, maxFee: 100n, feeExecuted: 500n });
    await expect(receiveSigned(cctpMessage({ body: greedy }))).rejects.toThrow("Fee equals or exceeds amount");
    // Another domain and another version: the domain check comes first.
    const body = burnBody({ amount: 500n });
    await expect(receiveSigned(cctpMessage({ destinationDomain: SRC, version: 2, body }))).rejects.toThrow(
      "Invalid destination domain",
    );
    await expect(receiveSigned(cctpMessage({ body: body.slice(0, -2) as Hex }))).rejects.toThrow(
      "Invalid burn message: too short",
    );
    // The logged messages carry the empty nonce: one relayed as logged is refused.
    await expect(receiveSigned(cctpMessage({ nonce: zeroHash, body }))).rejects.toThrow("Nonce already used");
  });

  test("anyone may send a message, but only the registered messenger's burns mint", async () => {
    const body = burnBody({ amount: 900n });
    const sent = await mined(
      src.publicClient,
      src.wallet(ANVIL_KEY_2).writeContract({
        address: cctpAddresses.messageTransmitter,
        abi: testMessageTransmitterV2Abi,
        functionName: "sendMessage",
        args: [DST, pad(cctpAddresses.tokenMessenger), zeroHash, 2000, body],
      }),
    );
    const [logged] = parseEventLogs({ abi: testMessageTransmitterV2Abi, eventName: "MessageSent", logs: sent.logs });
    const stranger = pad(privateKeyToAccount(ANVIL_KEY_2).address).toLowerCase();
    expect(decodeCctpMessage(logged!.args.message).sender).toBe(stranger as Hex);
    const before = await balance(dst, recipient);
    await expect(receiveSigned(cctpMessage({ sender: stranger as Hex, body }))).rejects.toThrow(
      "Remote TokenMessenger unsupported",
    );
    expect(await balance(dst, recipient)).toBe(before);
  });
});

/** ABI items compared without what parseAbi leaves out (internalType, empty names, false flags). */
function canonical(abi: Abi): string[] {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value !== "object" || value === null) return value;
    const entries = Object.entries(value)
      .filter(([key, v]) => key !== "internalType" && v !== false && !(key === "name" && v === ""))
      .sort(([a], [b]) => a.localeCompare(b));
    return Object.fromEntries(entries.map(([key, v]) => [key, strip(v)]));
  };
  return abi.map((item) => JSON.stringify(strip(item))).sort();
}
