/**
 * Version 3 of the deposit contracts (contracts/DepositFactoryV3.sol): version 2's one address on
 * every chain, plus a fee leg that cannot stop the payout (a failed fee transfer pays everything
 * to the payout and emits FeeSkipped) and a committed set of source domains `bridge` may ask
 * fast finality from. The off-chain computation here must agree with the factory's own
 * `depositAddress` view (checked against a real chain in test/chain/deposit-factory-v3.test.ts).
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
  zeroHash,
} from "viem";
import { abiParams } from "../lib/abi-params.ts";
import { keccakBytes } from "../lib/keccak.ts";
import { artifacts, cloneAddressFor, DETERMINISTIC_DEPLOYER, ensureDeterministic, FACTORY_SALT } from "./contracts.ts";
import { bridged, type DepositTerms, movedFrom } from "./deposit-v2.ts";

/** Everything a v3 deposit address commits to, in the order of the factory's `Terms` struct. */
export type DepositTermsV3 = DepositTerms & {
  /** Bit d set: `bridge` from CCTP domain d may ask for fast finality; standard is always allowed. */
  fastDomains: bigint;
};

/** Circle's finality thresholds: at or above standard is a finalized (standard) transfer. */
export const FINALITY_FAST = 1000;
export const FINALITY_STANDARD = 2000;

const terms = abiParams(
  "bytes32 paymentId",
  "address token",
  "address payout",
  "address feeRecipient",
  "uint16 feeBps",
  "uint32 settlementDomain",
  "address tokenMessenger",
  "uint16 maxBridgeFeeBps",
  "uint256 fastDomains",
);
const feeSkipped = abiParams(
  "bytes32 indexed paymentId",
  "address indexed depositAddress",
  "address feeRecipient",
  "uint256 fee",
);

// The same fields as the body of the Solidity struct.
const termsHead = "bytes32 paymentId; address token; address payout; address feeRecipient; uint16 feeBps;";
const termsTail = "uint32 settlementDomain; address tokenMessenger; uint16 maxBridgeFeeBps; uint256 fastDomains;";
const bridgeParams = abiParams("Terms t", "address burnToken", "uint256 maxFee", "uint32 minFinalityThreshold");

/**
 * The v3 factory ABI, typed for viem, plus the forwarder's errors (they bubble up through the
 * factory's calls). Kept equal to the artifacts by test/chain/artifacts.test.ts.
 */
export const depositFactoryV3Abi = parseAbi([
  `struct Terms { ${termsHead} ${termsTail} }`,
  "function IMPLEMENTATION() view returns (address)",
  "function FINALITY_STANDARD() view returns (uint32)",
  "function salt(Terms t) pure returns (bytes32)",
  "function depositAddress(Terms t) view returns (address)",
  "function settle(Terms t) returns (address deposit, uint256 amount, uint256 fee)",
  "function recover(Terms t, address otherToken) returns (uint256 amount)",
  `function bridge(${bridgeParams}) returns (address deposit, uint256 amount)`,
  `event Settled(${movedFrom}, uint256 amount, uint256 fee)`,
  `event FeeSkipped(${feeSkipped})`,
  `event Recovered(${movedFrom}, uint256 amount)`,
  `event Bridged(${bridged})`,
  "error FeeTooHigh(uint16 feeBps)",
  "error MissingFeeRecipient()",
  "error MissingPayout()",
  "error CommittedToken()",
  "error SettlementChain()",
  "error NoMessenger()",
  "error BridgeableToken(address token)",
  "error BridgeFeeTooHigh(uint256 maxFee, uint256 amount, uint16 maxBridgeFeeBps)",
  "error FinalityNotAllowed(uint32 domain, uint32 minFinalityThreshold)",
  "error DeployFailed()",
  "error NotFactory()",
  "error TokenTransferFailed(address token, address to, uint256 amount, bytes reason)",
  "error NativeTransferFailed(address to, uint256 amount, bytes reason)",
  "error FeeGasTooLow(uint256 gasLeft, uint256 needed)",
]);

/** Same on every chain: it depends only on the deployer, the salt and the factory bytecode. */
export const factoryV3Address: Address = getContractAddress({
  opcode: "CREATE2",
  from: DETERMINISTIC_DEPLOYER,
  salt: FACTORY_SALT,
  bytecode: artifacts.DepositFactoryV3.bytecode,
});

/** The forwarder implementation: the factory's first CREATE (contract nonces start at 1). */
export const forwarderV3Address: Address = getContractAddress({ from: factoryV3Address, nonce: 1n });

const cloneAddress = cloneAddressFor(factoryV3Address, forwarderV3Address);

/** The bitmap of `domains` for `fastDomains`; domains of 256 and above cannot be in it. */
export function fastDomainsOf(domains: Iterable<number>): bigint {
  let bits = 0n;
  for (const domain of domains) {
    if (!Number.isInteger(domain) || domain < 0 || domain > 255)
      throw new Error(`CCTP domain ${domain} cannot be a fast domain (0 to 255)`);
    bits |= 1n << BigInt(domain);
  }
  return bits;
}

/** Whether terms with `fastDomains` let `bridge` on the chain of `domain` ask for fast finality. */
export const fastAllowed = (fastDomains: bigint, domain: number): boolean =>
  domain >= 0 && domain < 256 && ((fastDomains >> BigInt(domain)) & 1n) === 1n;

/** The factory's `Terms` argument, as viem encodes a struct. */
export function depositTermsV3Arg(t: DepositTermsV3) {
  return {
    paymentId: t.paymentId,
    token: t.token,
    payout: t.payout,
    feeRecipient: t.feeRecipient,
    feeBps: t.feeBps,
    settlementDomain: t.settlementDomain,
    tokenMessenger: t.tokenMessenger,
    maxBridgeFeeBps: t.maxBridgeFeeBps,
    fastDomains: t.fastDomains,
  } as const;
}

/** keccak256(abi.encode(terms)), as the factory's `salt`. */
export function depositSaltV3(t: DepositTermsV3): Hex {
  return bytesToHex(saltBytes(t));
}

// abi.encode of a struct of static fields is the encoding of its fields in order, one 32-byte word
// each, the payment id first. Everything after it is the same for every payment of an account
// under one configuration, so its encoding is kept, and each payment adds only its id.
const saltParameters = parseAbiParameters(terms);
const encodedTerms = new Map<string, Uint8Array>();

function saltBytes(t: DepositTermsV3): Uint8Array {
  const fields = [
    zeroHash,
    t.token,
    t.payout,
    t.feeRecipient,
    t.feeBps,
    t.settlementDomain,
    t.tokenMessenger,
    t.maxBridgeFeeBps,
    t.fastDomains,
  ] as const;
  const key = fields.join("|");
  let encoded = encodedTerms.get(key);
  if (!encoded) {
    encoded = hexToBytes(encodeAbiParameters(saltParameters, fields));
    if (encodedTerms.size >= 1_000) encodedTerms.clear();
    encodedTerms.set(key, encoded);
  }
  const preimage = encoded.slice();
  preimage.set(paymentIdBytes(t.paymentId), 0);
  return keccakBytes(preimage);
}

/**
 * A payment id's 32 bytes: Buffer's decoder, ~10x viem's, for the 64 digits every id has; anything
 * else goes through viem, which refuses or pads it as before.
 */
function paymentIdBytes(id: Hex): Uint8Array {
  const bytes = Buffer.from(id.slice(2), "hex");
  return id.length === 66 && bytes.length === 32 ? bytes : hexToBytes(id, { size: 32 });
}

/** The deposit address for the terms, on every chain, as the factory's `depositAddress` view returns it. */
export function depositAddressV3(t: DepositTermsV3): Address {
  return cloneAddress(saltBytes(t));
}

/** Deploys the v3 factory through the deterministic deployment proxy unless it is already there. */
export function ensureFactoryV3(args: Parameters<typeof ensureDeterministic>[0]): Promise<Address> {
  return ensureDeterministic(args, artifacts.DepositFactoryV3, factoryV3Address);
}
