/**
 * The x402 encoding against the official packages (@x402/core 2.27, @x402/evm 2.27), with no
 * chain: our PAYMENT-REQUIRED header is what the official client decodes, and a PaymentPayload
 * the official exact EVM client signs passes our schema and becomes the core's question with
 * the very authorization that was signed (recovered here with viem over the token's domain).
 */
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { type Address, recoverTypedDataAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { askOf } from "../../src/x402/checks.ts";
import { decodeHeader, encodeHeader } from "../../src/x402/headers.ts";
import { type PaymentPayload, PaymentPayloadSchema, type PaymentRequired } from "../../src/x402/protocol.ts";
import { AUTHORIZATION_TYPES } from "../support/x402.ts";

const USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Address;
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" as Address;
const served = { chainId: 84532, chainName: "base-sepolia", usdc: USDC };
const payloadCheck = TypeCompiler.Compile(PaymentPayloadSchema);

const requirements = {
  scheme: "exact",
  network: "eip155:84532",
  amount: "10000",
  asset: USDC,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: "USDC", version: "2" },
};
const required: PaymentRequired = {
  x402Version: 2,
  error: "PAYMENT-SIGNATURE header is required",
  resource: { url: "https://stablegate.example/api/public/payments/0xab/x402", mimeType: "application/json" },
  accepts: [requirements],
};

async function signed(): Promise<{ payload: PaymentPayload; from: Address }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client().register("eip155:84532", new ExactEvmScheme(account));
  const payload = await client.createPaymentPayload(decodePaymentRequiredHeader(encodeHeader(required)));
  const decoded = decodeHeader(encodePaymentSignatureHeader(payload));
  if (!payloadCheck.Check(decoded)) throw new Error("the official client's payload fails our schema");
  return { payload: decoded, from: account.address };
}

describe("x402 headers against the official packages", () => {
  test("the official client decodes our PAYMENT-REQUIRED as we wrote it", () => {
    expect(decodePaymentRequiredHeader(encodeHeader(required))).toEqual(required as never);
  });

  test("and our PAYMENT-RESPONSE", () => {
    const response = { success: true, transaction: `0x${"ab".repeat(32)}`, network: "eip155:84532", payer: PAY_TO };
    expect(decodePaymentResponseHeader(encodeHeader(response))).toEqual(response as never);
  });

  test("a payload the official exact EVM client signed is the core's question, signed by its payer", async () => {
    const { payload, from } = await signed();
    const checked = askOf(served, payload, requirements);
    if (!checked.ok) throw new Error(checked.message);
    expect(checked.payer).toBe(from);
    expect(checked.ask.expect).toEqual({ to: PAY_TO, value: 10_000n });
    const a = checked.ask.authorization;
    expect([a.from, a.to, a.value]).toEqual([from, PAY_TO, 10_000n]);
    const recovered = await recoverTypedDataAddress({
      domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: USDC },
      types: AUTHORIZATION_TYPES,
      primaryType: "TransferWithAuthorization",
      message: a,
      signature: checked.ask.signature,
    });
    expect(recovered).toBe(from);
  });

  test("refusals that need no chain, each with the spec's reason", async () => {
    const { payload } = await signed();
    const reason = (p: PaymentPayload, r = requirements) => {
      const checked = askOf(served, p, r);
      return checked.ok ? "ok" : checked.reason;
    };
    expect(reason({ ...payload, x402Version: 1 })).toBe("invalid_x402_version");
    expect(reason(payload, { ...requirements, scheme: "upto" })).toBe("unsupported_scheme");
    expect(reason(payload, { ...requirements, network: "eip155:8453" })).toBe("invalid_network");
    expect(reason({ ...payload, accepted: { ...payload.accepted, network: "eip155:1" } })).toBe("invalid_network");
    expect(reason(payload, { ...requirements, asset: PAY_TO })).toBe("invalid_payment_requirements");
    expect(reason({ ...payload, payload: { signature: "0x12" } })).toBe("invalid_payload");
    expect(reason(payload)).toBe("ok");
  });

  test("a header that is not base64 of JSON decodes to nothing", () => {
    for (const junk of ["", "not base64!", "%%%", Buffer.from("{not json").toString("base64"), "A".repeat(9000)])
      expect(decodeHeader(junk)).toBeNull();
  });
});
