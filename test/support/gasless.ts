/**
 * A payer that holds USDC and no ETH, paying a payment by signature through the public gasless
 * endpoints (GET/POST /api/public/payments/{id}/authorization), as the checkout page does.
 */
import { type Address, erc20Abi, type Hex, isAddressEqual, parseEventLogs, parseGwei, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { atNode, mined, testTokenAbi, walletClientFor } from "./chain.ts";
import type { Stack } from "./stack.ts";
import { randomAddress, type TestChain } from "./test-chain.ts";

export interface Offer {
  available: boolean;
  reason: string | null;
  chain: string;
  chain_id: number;
  floor: string | null;
  typed_data: null | {
    domain: { name: string; version: string; chainId: number; verifyingContract: Address };
    types: Record<string, { name: string; type: string }[]>;
    primaryType: "TransferWithAuthorization";
    message: { to: Address; value: string; validAfter: string; validBefore: string };
  };
}

export interface Signed {
  authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
  signature: Hex;
}

export const randomNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)));

/** A fresh wallet with `units` micro-USDC minted to it and no ETH. */
export async function gaslessPayer(chain: TestChain, units: bigint) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  if (units > 0n)
    await mined(
      chain.publicClient,
      chain.deployer.writeContract({
        address: chain.usdc,
        abi: testTokenAbi,
        functionName: "mint",
        args: [account.address, units],
      }),
    );
  return { key, account, address: account.address };
}

/** Signs the offer's message (with `over` changed before signing, `domain` changes too) as `key`. */
export async function signOffer(
  offer: Offer,
  key: Hex,
  over: Partial<Signed["authorization"]> = {},
  domain: Partial<NonNullable<Offer["typed_data"]>["domain"]> = {},
): Promise<Signed> {
  const typed = offer.typed_data!;
  const signer = privateKeyToAccount(key);
  const authorization = { from: signer.address, ...typed.message, nonce: randomNonce(), ...over };
  const { EIP712Domain: _, ...types } = typed.types;
  const signature = await signer.signTypedData({
    domain: { ...typed.domain, ...domain },
    types,
    primaryType: "TransferWithAuthorization",
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return { authorization, signature };
}

/** The public gasless endpoints of a server at `url`; `client` is sent as X-Forwarded-For (with trusted proxies). */
export function gaslessApi(url: string, client?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (client) headers["x-forwarded-for"] = client;
  return {
    async offer(paymentId: string): Promise<Offer> {
      const res = await fetch(`${url}/api/public/payments/${paymentId}/authorization`, { headers });
      if (res.status !== 200) throw new Error(`GET authorization: ${res.status} ${await res.text()}`);
      return (await res.json()) as Offer;
    },
    async post(paymentId: string, body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
      const res = await fetch(`${url}/api/public/payments/${paymentId}/authorization`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      return { status: res.status, json: await res.json(), headers: res.headers };
    },
  };
}

/**
 * What the payment's mined settlement paid the payout address (micro-USDC), read from its receipt:
 * unlike the payout's balance, it holds whatever else the file's other tests paid the same address.
 */
export async function settledToPayout(
  stack: Pick<Stack, "chain" | "payout" | "sql">,
  paymentId: string,
): Promise<bigint> {
  const rows = await stack.sql<{ tx_hash: Hex }>(
    "SELECT tx_hash FROM settlements WHERE payment_id = ? AND state = 'mined'",
    paymentId,
  );
  let paid = 0n;
  for (const { tx_hash } of rows) {
    const receipt = await stack.chain.publicClient.getTransactionReceipt({ hash: tx_hash });
    for (const log of parseEventLogs({ abi: erc20Abi, eventName: "Transfer", logs: receipt.logs }))
      if (isAddressEqual(log.address, stack.chain.usdc) && isAddressEqual(log.args.to, stack.payout as Address))
        paid += log.args.value;
  }
  return paid;
}

/** The relayer's transaction for authorization `id`: once the submitter has stored it and the node holds it. */
export async function relayerTransaction(stack: Pick<Stack, "waitFor" | "sql">, chain: TestChain, id: string) {
  const hash = await stack.waitFor(async () => {
    const [row] = await stack.sql<{ tx_hash: Hex | null }>("SELECT tx_hash FROM authorizations WHERE id = ?", id);
    return row?.tx_hash;
  });
  await atNode(chain.publicClient, hash);
  return hash;
}

/**
 * Sends `units` of the USDC of `key` elsewhere with fees far above the relayer's, so that with
 * automine off the next block mines it before the relayer's pending transaction, which reverts.
 */
export function spendFirst(chain: TestChain, key: Hex, units: bigint): Promise<Hex> {
  return walletClientFor(chain.rpcUrl, key).writeContract({
    address: chain.usdc,
    abi: testTokenAbi,
    functionName: "transfer",
    args: [randomAddress(), units],
    gas: 100_000n,
    maxFeePerGas: parseGwei("500"),
    maxPriorityFeePerGas: parseGwei("400"),
  });
}
