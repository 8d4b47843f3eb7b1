/**
 * Version 2 of the deposit contracts (contracts/DepositFactoryV2.sol): one deposit address on
 * every chain, whose USDC on a CCTP source chain can only be burned to that same address on the
 * settlement chain. The off-chain computation here must agree with the factory's own
 * `depositAddress` view (checked against a real chain in test/chain/deposit-factory-v2.test.ts).
 */
import {
  type Address,
  bytesToHex,
  encodeAbiParameters,
  getContractAddress,
  type Hex,
  hexToBytes,
  parseAbi,
  parseAbiParameters,
} from "viem";
import { abiParams } from "../lib/abi-params.ts";
import { keccakBytes } from "../lib/keccak.ts";
import {
  artifacts,
  cloneAddressFor,
  DETERMINISTIC_DEPLOYER,
  type DepositParams,
  ensureDeterministic,
  FACTORY_SALT,
} from "./contracts.ts";

/** Everything a v2 deposit address commits to, in the order of the factory's `Terms` struct. */
export type DepositTerms = DepositParams & {
  /** CCTP domain of the settlement chain. */
  settlementDomain: number;
  /** CCTP V2 TokenMessengerV2. */
  tokenMessenger: Address;
  /** Bound on a bridge's maxFee, in basis points of the amount burned. */
  maxBridgeFeeBps: number;
};

const terms = abiParams(
  "bytes32 paymentId",
  "address token",
  "address payout",
  "address feeRecipient",
  "uint16 feeBps",
  "uint32 settlementDomain",
  "address tokenMessenger",
  "uint16 maxBridgeFeeBps",
);
/** The indexed head of the Settled and Recovered events, the same in every factory version. */
export const movedFrom = abiParams(
  "bytes32 indexed paymentId",
  "address indexed depositAddress",
  "address token",
  "address payout",
);
/** The Bridged event's parameters, the same in every factory version that bridges. */
export const bridged = abiParams(
  "bytes32 indexed paymentId",
  "address indexed depositAddress",
  "address burnToken",
  "uint256 amount",
  "uint32 destinationDomain",
  "uint256 maxFee",
  "uint32 minFinalityThreshold",
);

// The same fields as the body of the Solidity struct.
const termsHead = "bytes32 paymentId; address token; address payout; address feeRecipient; uint16 feeBps;";
const termsTail = "uint32 settlementDomain; address tokenMessenger; uint16 maxBridgeFeeBps;";
const bridgeParams = abiParams("Terms t", "address burnToken", "uint256 maxFee", "uint32 minFinalityThreshold");

/**
 * The v2 factory ABI, typed for viem, plus the forwarder's errors (they bubble up through the
 * factory's calls). Kept equal to the artifacts by test/chain/artifacts.test.ts.
 */
export const depositFactoryV2Abi = parseAbi([
  `struct Terms { ${termsHead} ${termsTail} }`,
  "function IMPLEMENTATION() view returns (address)",
  "function salt(Terms t) pure returns (bytes32)",
  "function depositAddress(Terms t) view returns (address)",
  "function settle(Terms t) returns (address deposit, uint256 amount, uint256 fee)",
  "function recover(Terms t, address otherToken) returns (uint256 amount)",
  `function bridge(${bridgeParams}) returns (address deposit, uint256 amount)`,
  `event Settled(${movedFrom}, uint256 amount, uint256 fee)`,
  `event Recovered(${movedFrom}, uint256 amount)`,
  `event Bridged(${bridged})`,
  "error FeeTooHigh(uint16 feeBps)",
  "error MissingFeeRecipient()",
  "error MissingPayout()",
  "error CommittedToken()",
  "error SettlementChain()",
  "error BridgeableToken(address token)",
  "error BridgeFeeTooHigh(uint256 maxFee, uint256 amount, uint16 maxBridgeFeeBps)",
  "error DeployFailed()",
  "error NotFactory()",
  "error TokenTransferFailed(address token, address to, uint256 amount, bytes reason)",
  "error NativeTransferFailed(address to, uint256 amount, bytes reason)",
]);

/** Same on every chain: it depends only on the deployer, the salt and the factory bytecode. */
export const factoryV2Address: Address = getContractAddress({
  opcode: "CREATE2",
  from: DETERMINISTIC_DEPLOYER,
  salt: FACTORY_SALT,
  bytecode: artifacts.DepositFactoryV2.bytecode,
});

/** The forwarder implementation: the factory's first CREATE (contract nonces start at 1). */
export const forwarderV2Address: Address = getContractAddress({ from: factoryV2Address, nonce: 1n });

const cloneAddress = cloneAddressFor(factoryV2Address, forwarderV2Address);

/** The factory's `Terms` argument, as viem encodes a struct. */
export function depositTermsArg(t: DepositTerms) {
  return {
    paymentId: t.paymentId,
    token: t.token,
    payout: t.payout,
    feeRecipient: t.feeRecipient,
    feeBps: t.feeBps,
    settlementDomain: t.settlementDomain,
    tokenMessenger: t.tokenMessenger,
    maxBridgeFeeBps: t.maxBridgeFeeBps,
  } as const;
}

/** keccak256(abi.encode(terms)), as the factory's `salt`. */
export function depositSaltV2(t: DepositTerms): Hex {
  return bytesToHex(saltBytes(t));
}

// abi.encode of a struct of static fields is the encoding of its fields in order.
const saltParameters = parseAbiParameters(terms);

function saltBytes(t: DepositTerms): Uint8Array {
  const { paymentId, token, payout, feeRecipient, feeBps, settlementDomain, tokenMessenger, maxBridgeFeeBps } = t;
  const fields = [
    paymentId,
    token,
    payout,
    feeRecipient,
    feeBps,
    settlementDomain,
    tokenMessenger,
    maxBridgeFeeBps,
  ] as const;
  return keccakBytes(hexToBytes(encodeAbiParameters(saltParameters, fields)));
}

/** The deposit address for the terms, on every chain, as the factory's `depositAddress` view returns it. */
export function depositAddressV2(t: DepositTerms): Address {
  return cloneAddress(saltBytes(t));
}

/** Deploys the v2 factory through the deterministic deployment proxy unless it is already there. */
export function ensureFactoryV2(args: Parameters<typeof ensureDeterministic>[0]): Promise<Address> {
  return ensureDeterministic(args, artifacts.DepositFactoryV2, factoryV2Address);
}
