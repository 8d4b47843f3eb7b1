/**
 * The deposit contracts (see DESIGN.md §7): compiled artifacts, the factory's fixed address and
 * the off-chain computation of deposit addresses, which must agree with the factory's own
 * `depositAddress` view (checked against a real chain in test/chain/deposit-factory.test.ts).
 */
import {
  type Abi,
  type Account,
  type Address,
  bytesToHex,
  type Chain,
  concat,
  encodeAbiParameters,
  getContractAddress,
  type Hex,
  hexToBytes,
  keccak256,
  type PublicClient,
  parseAbi,
  parseAbiParameters,
  type Transport,
  type WalletClient,
  zeroHash,
} from "viem";
// JSON imports, so that `bun build --compile` embeds the artifacts in the binary.
import DepositFactoryJson from "../../contracts/artifacts/DepositFactory.json";
import DepositFactoryV2Json from "../../contracts/artifacts/DepositFactoryV2.json";
import DepositFactoryV3Json from "../../contracts/artifacts/DepositFactoryV3.json";
import DepositForwarderJson from "../../contracts/artifacts/DepositForwarder.json";
import DepositForwarderV2Json from "../../contracts/artifacts/DepositForwarderV2.json";
import DepositForwarderV3Json from "../../contracts/artifacts/DepositForwarderV3.json";
import TestMessageTransmitterV2Json from "../../contracts/artifacts/TestMessageTransmitterV2.json";
import TestTokenJson from "../../contracts/artifacts/TestToken.json";
import TestTokenMessengerV2Json from "../../contracts/artifacts/TestTokenMessengerV2.json";
import TestUSDCJson from "../../contracts/artifacts/TestUSDC.json";
import { abiParams } from "../lib/abi-params.ts";
import { checksummed, keccakBytes } from "../lib/keccak.ts";
import type { NonceManager } from "./nonces.ts";

/** What scripts/compile-contracts.ts writes to contracts/artifacts/<contractName>.json. */
export type Artifact = { contractName: string; abi: Abi; bytecode: Hex; deployedBytecode: Hex };

export const artifacts = {
  DepositFactory: DepositFactoryJson as Artifact,
  DepositFactoryV2: DepositFactoryV2Json as Artifact,
  DepositFactoryV3: DepositFactoryV3Json as Artifact,
  DepositForwarder: DepositForwarderJson as Artifact,
  DepositForwarderV2: DepositForwarderV2Json as Artifact,
  DepositForwarderV3: DepositForwarderV3Json as Artifact,
  TestMessageTransmitterV2: TestMessageTransmitterV2Json as Artifact,
  TestToken: TestTokenJson as Artifact,
  TestTokenMessengerV2: TestTokenMessengerV2Json as Artifact,
  TestUSDC: TestUSDCJson as Artifact,
};

/** The arguments that fix a deposit address, shared by the factory's functions. */
const depositKey = abiParams(
  "bytes32 paymentId",
  "address token",
  "address payout",
  "address feeRecipient",
  "uint16 feeBps",
);
/** What the factory's Settled and Recovered events say before their amounts. */
const movedFrom = abiParams(
  "bytes32 indexed paymentId",
  "address indexed depositAddress",
  "address token",
  "address payout",
);

/**
 * The factory ABI, typed for viem, plus the forwarder's errors: they bubble up through `settle`
 * and `recover`, so decoding a failed settlement needs them. Kept equal to the artifacts by
 * test/chain/artifacts.test.ts.
 */
export const depositFactoryAbi = parseAbi([
  "function IMPLEMENTATION() view returns (address)",
  `function salt(${depositKey}) pure returns (bytes32)`,
  `function depositAddress(${depositKey}) view returns (address)`,
  `function settle(${depositKey}) returns (address deposit, uint256 amount, uint256 fee)`,
  `function recover(${depositKey}, address otherToken) returns (uint256 amount)`,
  `event Settled(${movedFrom}, uint256 amount, uint256 fee)`,
  `event Recovered(${movedFrom}, uint256 amount)`,
  "error FeeTooHigh(uint16 feeBps)",
  "error MissingFeeRecipient()",
  "error MissingPayout()",
  "error CommittedToken()",
  "error DeployFailed()",
  "error NotFactory()",
  "error TokenTransferFailed(address token, address to, uint256 amount, bytes reason)",
  "error NativeTransferFailed(address to, uint256 amount, bytes reason)",
]);

/** Arachnid's deterministic deployment proxy: calldata = salt (32 bytes) ++ init code. */
export const DETERMINISTIC_DEPLOYER: Address = "0x4e59b44847b379578588920ca78fbf26c0b4956c";
export const FACTORY_SALT: Hex = zeroHash;

/** Same on every chain: it depends only on the deployer, the salt and the factory bytecode. */
export const factoryAddress: Address = getContractAddress({
  opcode: "CREATE2",
  from: DETERMINISTIC_DEPLOYER,
  salt: FACTORY_SALT,
  bytecode: artifacts.DepositFactory.bytecode,
});

/** The forwarder implementation: the factory's first CREATE (contract nonces start at 1). */
export const forwarderAddress: Address = getContractAddress({ from: factoryAddress, nonce: 1n });

/**
 * The CREATE2 address of a clone of `forwarder` deployed by `factory` with `salt`, as the
 * factories' `depositAddress` views compute it (viem's getContractAddress, with the faster hash:
 * this runs for every payment created).
 */
export function cloneAddressFor(factory: Address, forwarder: Address): (salt: Uint8Array) => Address {
  // EIP-1167 minimal proxy init code for a clone of the forwarder, as the factory builds it.
  const initCode = concat([
    "0x3d602d80600a3d3981f3363d3d373d3d3d363d73",
    forwarder,
    "0x5af43d82803e903d91602b57fd5bf3",
  ]);
  // The constant part of every deposit address's CREATE2 preimage: 0xff ++ factory ++ salt ++ init code hash.
  const prefix = hexToBytes(concat(["0xff", factory]));
  const initCodeHash = hexToBytes(keccak256(initCode));
  return (salt) => {
    const preimage = new Uint8Array(prefix.length + 64);
    preimage.set(prefix);
    preimage.set(salt, prefix.length);
    preimage.set(initCodeHash, prefix.length + 32);
    return checksummed(`0x${Buffer.from(keccakBytes(preimage).subarray(12)).toString("hex")}`) as Address;
  };
}

const cloneAddress = cloneAddressFor(factoryAddress, forwarderAddress);

/** Everything a deposit address commits to. */
export type DepositParams = {
  paymentId: Hex;
  token: Address;
  payout: Address;
  feeRecipient: Address;
  feeBps: number;
};

const saltParameters = parseAbiParameters(
  "bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps",
);

/** keccak256(abi.encode(paymentId, token, payout, feeRecipient, feeBps)), as the factory's `salt`. */
export function depositSalt(p: DepositParams): Hex {
  return bytesToHex(saltBytes(p));
}

function saltBytes(p: DepositParams): Uint8Array {
  return keccakBytes(
    hexToBytes(encodeAbiParameters(saltParameters, [p.paymentId, p.token, p.payout, p.feeRecipient, p.feeBps])),
  );
}

/** The deposit address for the parameters, as the factory's `depositAddress` view returns it. */
export function depositAddress(p: DepositParams): Address {
  return cloneAddress(saltBytes(p));
}

/** The factory's arguments for `settle` (and, with the other token appended, `recover`). */
export function depositArgs(p: DepositParams): readonly [Hex, Address, Address, Address, number] {
  return [p.paymentId, p.token, p.payout, p.feeRecipient, p.feeBps];
}

/**
 * Deploys the factory through the deterministic deployment proxy unless it is already there.
 * Returns the factory address. Safe to race: whoever loses just finds the code in place.
 */
export function ensureFactory(args: DeployerClients): Promise<Address> {
  return ensureDeterministic(args, artifacts.DepositFactory, factoryAddress);
}

type DeployerClients = {
  publicClient: PublicClient;
  walletClient: WalletClient<Transport, Chain | undefined, Account>;
  /** The relayer's nonces on the chain, when the relayer deploys: its other transactions use them too. */
  nonces?: NonceManager;
};

/**
 * Deploys `artifact` (no constructor arguments) through the deterministic deployment proxy with
 * FACTORY_SALT unless `address`, where that lands, already has code. Returns `address`.
 */
export async function ensureDeterministic(
  args: DeployerClients,
  artifact: Artifact,
  address: Address,
): Promise<Address> {
  const { publicClient, walletClient } = args;
  if (await hasCode(publicClient, address)) return address;
  if (!(await hasCode(publicClient, DETERMINISTIC_DEPLOYER))) {
    throw new Error(
      `cannot deploy the ${artifact.contractName}: the deterministic deployment proxy ` +
        `${DETERMINISTIC_DEPLOYER} is not deployed on this chain`,
    );
  }
  const nonce = await args.nonces?.claim();
  const hash = await walletClient
    .sendTransaction({
      account: walletClient.account,
      chain: walletClient.chain ?? null,
      to: DETERMINISTIC_DEPLOYER,
      data: concat([FACTORY_SALT, artifact.bytecode]),
      nonce,
    })
    .catch((error) => {
      args.nonces?.reset();
      throw error;
    });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (!(await hasCode(publicClient, address))) {
    throw new Error(`${artifact.contractName} deployment tx ${hash} (${receipt.status}) left no code at ${address}`);
  }
  return address;
}

async function hasCode(client: PublicClient, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== "0x";
}
