import { type Address, type Hex, hexToBigInt, hexToNumber, pad, size, slice } from "viem";

/** A CCTP V2 message with its burn body, decoded (layout in shared chain data). */
export interface BurnMessage {
  sourceDomain: number;
  destinationDomain: number;
  nonce: Hex;
  sender: Hex;
  recipient: Hex;
  burnToken: Hex;
  mintRecipient: Hex;
  amount: bigint;
  /** Who burned: the payer's wallet, or the deposit address itself when it bridged its own funds. */
  messageSender: Hex;
  maxFee: bigint;
  feeExecuted: bigint;
  expirationBlock: bigint;
}

/** Decodes a message, or returns null when it is too short to be a burn message. */
export function decodeBurnMessage(message: Hex): BurnMessage | null {
  if (size(message) < 148 + BURN_BODY_SIZE) return null;
  return {
    sourceDomain: hexToNumber(slice(message, 4, 8)),
    destinationDomain: hexToNumber(slice(message, 8, 12)),
    nonce: slice(message, 12, 44),
    sender: slice(message, 44, 76),
    recipient: slice(message, 76, 108),
    ...decodeBurnBody(slice(message, 148))!,
  };
}

const BURN_BODY_SIZE = 228;

/** The burn body of a message (as MessageReceived carries it), or null when it is too short. */
export function decodeBurnBody(body: Hex) {
  if (size(body) < BURN_BODY_SIZE) return null;
  return {
    burnToken: slice(body, 4, 36),
    mintRecipient: slice(body, 36, 68),
    amount: hexToBigInt(slice(body, 68, 100)),
    messageSender: slice(body, 100, 132),
    maxFee: hexToBigInt(slice(body, 132, 164)),
    feeExecuted: hexToBigInt(slice(body, 164, 196)),
    expirationBlock: hexToBigInt(slice(body, 196, 228)),
  };
}

/** An address as CCTP's bytes32 (left-padded). */
export function addressToBytes32(address: Address): Hex {
  return pad(address, { size: 32 }).toLowerCase() as Hex;
}
