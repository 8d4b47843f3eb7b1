import { parseAbi } from "viem";
import { abiParams } from "../lib/abi-params.ts";

const depositForBurnParams = abiParams(
  "uint256 amount",
  "uint32 destinationDomain",
  "bytes32 mintRecipient",
  "address burnToken",
  "bytes32 destinationCaller",
  "uint256 maxFee",
  "uint32 minFinalityThreshold",
);

const depositForBurnEventParams = abiParams(
  "address indexed burnToken",
  "uint256 amount",
  "address indexed depositor",
  "bytes32 mintRecipient",
  "uint32 destinationDomain",
  "bytes32 destinationTokenMessenger",
  "bytes32 destinationCaller",
  "uint256 maxFee",
  "uint32 indexed minFinalityThreshold",
  "bytes hookData",
);

/** MessageTransmitterV2's MessageReceived, emitted with every message it receives (and mints for). */
export const messageReceivedParams = abiParams(
  "address indexed caller",
  "uint32 sourceDomain",
  "bytes32 indexed nonce",
  "bytes32 sender",
  "uint32 indexed finalityThresholdExecuted",
  "bytes messageBody",
);

/** The parts of Circle's CCTP V2 contracts Stablegate calls or reads. */
export const tokenMessengerAbi = parseAbi([
  `function depositForBurn(${depositForBurnParams})`,
  `event DepositForBurn(${depositForBurnEventParams})`,
]);

export const messageTransmitterAbi = parseAbi([
  "function receiveMessage(bytes message, bytes attestation) returns (bool)",
  "function usedNonces(bytes32 nonce) view returns (uint256)",
  `event MessageReceived(${messageReceivedParams})`,
]);
