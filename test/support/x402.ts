/**
 * x402 clients for the tests: the official fetch wrapper with the official exact EVM client
 * scheme for a viem account, the official facilitator client pointed at a Stablegate, and
 * hand-signed EIP-3009 authorizations for the hostile cases the official client would never make.
 */
import { HTTPFacilitatorClient } from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { type Address, getAddress, type Hex, toHex } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";

export const AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** The TestUSDC's EIP-712 domain name and version (contracts/test/TestUSDC.sol), as on Base. */
export const TOKEN_NAME = "USD Coin";
export const TOKEN_VERSION = "2";

/** fetch that pays 402 answers from `account`'s USDC on `chainId` (up to 100 USDC each), as a program would. */
export function payingFetch(account: PrivateKeyAccount, chainId: number, usdc: Address) {
  const network = `eip155:${chainId}` as const;
  const client = new x402Client().register(network, new ExactEvmScheme(account));
  client.setSpendControls({ allowedAssets: [{ network, asset: usdc, maxAmountPerPayment: "100000000" }] });
  return wrapFetchWithPayment(fetch, client);
}

/** The official facilitator client for Stablegate's facilitator, with the merchant's API key on every call. */
export function stablegateFacilitator(baseUrl: string, apiKey: string) {
  const auth = { Authorization: `Bearer ${apiKey}` };
  return new HTTPFacilitatorClient({
    url: `${baseUrl}/api/v1/x402`,
    createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
  });
}

export interface Signed {
  authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex };
  signature: Hex;
}

/** An EIP-3009 authorization signed by `signer` (by default for itself), with overrides for hostile cases. */
export async function signAuthorization(a: {
  signer: PrivateKeyAccount;
  from?: Address;
  chainId: number;
  usdc: Address;
  to: Address;
  value: bigint;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
}): Promise<Signed> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: a.from ?? a.signer.address,
    to: getAddress(a.to),
    value: a.value,
    validAfter: a.validAfter ?? now - 600n,
    validBefore: a.validBefore ?? now + 300n,
    nonce: a.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const signature = await a.signer.signTypedData({
    domain: { name: TOKEN_NAME, version: TOKEN_VERSION, chainId: a.chainId, verifyingContract: a.usdc },
    types: AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization",
    message,
  });
  return {
    authorization: {
      ...message,
      value: message.value.toString(),
      validAfter: message.validAfter.toString(),
      validBefore: message.validBefore.toString(),
    },
    signature,
  };
}

/** A facilitator request (verify or settle) as the official resource server sends it. */
export function facilitatorRequest(a: {
  chainId: number;
  usdc: Address;
  payTo: Address;
  amount: bigint;
  signed: Signed;
  network?: string;
  resource?: string;
}) {
  const requirements = {
    scheme: "exact",
    network: a.network ?? `eip155:${a.chainId}`,
    amount: a.amount.toString(),
    asset: a.usdc,
    payTo: a.payTo,
    maxTimeoutSeconds: 300,
    extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
  };
  return {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      resource: { url: a.resource ?? "https://api.shop.test/report", description: "A report", mimeType: "" },
      accepted: requirements,
      payload: { signature: a.signed.signature, authorization: a.signed.authorization },
    },
    paymentRequirements: requirements,
  };
}
