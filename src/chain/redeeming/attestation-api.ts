import type { Hex } from "viem";
import { assertOutsideTransaction } from "../../db/transaction-scope.ts";
import { RetryableError } from "../../lib/errors.ts";
import { MAX_FEE_BPS } from "./quote.ts";

export interface AttestedMessage {
  message: Hex;
  attestation: Hex | null;
  status: string;
  eventNonce: string | null;
}

export type AttestationApi = ReturnType<typeof createAttestationApi>;

/**
 * Circle's attestation service (Iris) or anything speaking its paths. 404 on messages means
 * "not seen yet"; 429 and 5xx are RetryableError so callers back off.
 */
export function createAttestationApi(baseUrl: string, timeoutMs = 10_000) {
  async function get(path: string, init?: RequestInit): Promise<Response> {
    assertOutsideTransaction("a request to the attestation service");
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      });
    } catch (error) {
      throw new RetryableError(`attestation service unreachable: ${(error as Error).message}`);
    }
    if (response.status === 429 || response.status >= 500) {
      const retryAfter = Number(response.headers.get("retry-after"));
      throw Object.assign(new RetryableError(`attestation service answered ${response.status}`), {
        retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null,
      });
    }
    return response;
  }

  return {
    /** Fees in basis points (possibly fractional) for fast (1000) and standard (2000) finality. */
    async fees(sourceDomain: number, destinationDomain: number): Promise<{ fast: number; standard: number }> {
      const response = await get(`/v2/burn/USDC/fees/${sourceDomain}/${destinationDomain}`);
      if (!response.ok) throw new RetryableError(`fee endpoint answered ${response.status}`);
      const rows = (await response.json().catch(() => null)) as Array<{
        finalityThreshold?: unknown;
        minimumFee?: unknown;
      }> | null;
      const fee = (threshold: number) => {
        const value = Array.isArray(rows)
          ? rows.find((r) => r?.finalityThreshold === threshold)?.minimumFee
          : undefined;
        if (typeof value !== "number" || !(value >= 0) || value >= MAX_FEE_BPS)
          throw new RetryableError("fee endpoint gave no usable fee");
        return value;
      };
      return { fast: fee(1000), standard: fee(2000) };
    },

    /** The messages of a burn transaction; empty while the service has not seen it. */
    async messages(sourceDomain: number, txHash: Hex): Promise<AttestedMessage[]> {
      const response = await get(`/v2/messages/${sourceDomain}?transactionHash=${txHash}`);
      if (response.status === 404) return [];
      if (!response.ok) throw new RetryableError(`messages endpoint answered ${response.status}`);
      const body = (await response.json()) as { messages?: Array<Record<string, unknown>> };
      return (body.messages ?? []).map((m) => ({
        message: m.message as Hex,
        attestation:
          typeof m.attestation === "string" && m.attestation.startsWith("0x") ? (m.attestation as Hex) : null,
        status: String(m.status ?? ""),
        eventNonce: typeof m.eventNonce === "string" ? m.eventNonce : null,
      }));
    },

    /** Asks for a fresh attestation of an expired message. */
    async reattest(nonce: string): Promise<void> {
      const response = await get(`/v2/reattest/${nonce}`, { method: "POST" });
      if (!response.ok) throw new RetryableError(`re-attestation answered ${response.status}`);
    },
  };
}
