import { type Address, type Hex, isAddressEqual, type Log, parseAbi, parseEventLogs } from "viem";
import type { TokenDomain, TransferAuthorization } from "./types.ts";

/** What the relayer calls and reads of an EIP-3009 token (USDC's FiatToken v2.2; contracts/test/TestUSDC.sol). */
export const eip3009Abi = parseAbi([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
] as const);

const uint256 = (name: string) => ({ name, type: "uint256" }) as const;

/** FiatToken v2.2's `bytes signature` overload of transferWithAuthorization (the v, r, s one does the same). */
export const transferWithAuthorizationAbi = [
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    inputs: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      uint256("value"),
      uint256("validAfter"),
      uint256("validBefore"),
      { name: "nonce", type: "bytes32" },
      { name: "signature", type: "bytes" },
    ],
    outputs: [],
  },
] as const;

/** EIP-3009's struct, as a wallet signs it with eth_signTypedData_v4. */
export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/** The domain's own type, which eth_signTypedData_v4 wants listed beside the struct's. */
export const EIP712_DOMAIN_TYPE = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
] as const;

/** The typed data of one authorization, for viem's signTypedData and recoverTypedDataAddress. */
export function typedDataOf(domain: TokenDomain, authorization: TransferAuthorization) {
  return {
    domain,
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: "TransferWithAuthorization" as const,
    message: authorization,
  };
}

/** The call the relayer makes, with the signature as the `bytes` overload takes it. */
export function transferCall(token: Address, a: TransferAuthorization, signature: Hex) {
  return {
    address: token,
    abi: transferWithAuthorizationAbi,
    functionName: "transferWithAuthorization" as const,
    args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature] as const,
  };
}

/** Whether `logs` (a receipt's) hold a Transfer of `token` that moved exactly `value` from `from` to `to`. */
export function movedIn(logs: Log[], token: Address, t: { from: Address; to: Address; value: bigint }): boolean {
  return parseEventLogs({ abi: eip3009Abi, eventName: "Transfer", logs }).some(
    (e) =>
      isAddressEqual(e.address, token) &&
      isAddressEqual(e.args.from, t.from) &&
      isAddressEqual(e.args.to, t.to) &&
      e.args.value === t.value,
  );
}
