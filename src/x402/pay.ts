import type { Clock } from "../lib/clock.ts";
import type { PaymentRow } from "../payments/store.ts";
import { amountDue } from "../payments/view.ts";
import type { AuthorizationRecord, AuthorizationsApi } from "./authorizations.ts";
import { askOf, type Served } from "./checks.ts";
import {
  caip2,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  SCHEME_EXACT,
  type SettleResponse,
  X402_VERSION,
} from "./protocol.ts";
import { REASON_OF, REASONS, type Refusal, refusalOf } from "./reasons.ts";

export interface PayDeps {
  authorizations: Pick<AuthorizationsApi, "domain" | "accept" | "outcome" | "forPayment">;
  /** The hashes of the payment's transfers the watcher has credited (src/payments/lifecycle.ts transfersView). */
  creditedTransfers: (row: PaymentRow) => Promise<Set<string>>;
  clock: Clock;
  served: Served;
  /** What the payer has to sign within: x402's maxTimeoutSeconds. */
  maxTimeoutSeconds: number;
  /** How long a paying request waits for the transfer to be mined before answering 202. */
  waitMs: number;
}

/** What a paying request ends in: paid (200), refused (402 with the reason), or still on its way (202). */
export type PayOutcome =
  | { kind: "paid"; response: SettleResponse }
  | { kind: "refused"; required: PaymentRequired; response: SettleResponse | null }
  | { kind: "waiting"; record: AuthorizationRecord };

/**
 * Every payment is payable over x402 (v2, scheme `exact`): its requirements are the amount due,
 * to its deposit address, in the USDC of its chain, with the token's EIP-712 domain read from the
 * token itself. A payment is an x402 resource of its own: paying it is the whole purchase.
 */
export function createPayByX402(deps: PayDeps) {
  const { authorizations, served } = deps;

  async function requirementsOf(row: PaymentRow): Promise<PaymentRequirements> {
    const domain = await authorizations.domain(row.chain_id);
    return {
      scheme: SCHEME_EXACT,
      network: caip2(row.chain_id),
      amount: amountDue(row).toString(),
      asset: row.token_address,
      payTo: row.deposit_address,
      maxTimeoutSeconds: deps.maxTimeoutSeconds,
      extra: { name: domain.name, version: domain.version },
    };
  }

  async function required(row: PaymentRow, url: string, error: string): Promise<PaymentRequired> {
    return {
      x402Version: X402_VERSION,
      error,
      resource: {
        url,
        description: row.description ? `Payment ${row.id}: ${row.description}` : `Payment ${row.id}`,
        mimeType: "application/json",
      },
      accepts: [await requirementsOf(row)],
    };
  }

  return {
    required,

    /**
     * Whether an authorization for this payment is on its way: accepted and not mined, or mined
     * and not credited yet. Its amount is not in amount_received, so a 402 for what looks due
     * would have the payer pay twice; the endpoint answers 202 with the public view instead.
     */
    async inFlight(row: PaymentRow): Promise<boolean> {
      const records = await authorizations.forPayment(row.id);
      if (records.every((r) => r.status === "failed")) return false;
      const credited = await deps.creditedTransfers(row);
      return records.some(
        (r) =>
          r.status === "pending" ||
          r.status === "submitted" ||
          (r.status === "succeeded" && (r.tx_hash === null || !credited.has(r.tx_hash.toLowerCase()))),
      );
    },

    /** Verifies and submits `payload` for what `row` has due, and waits (bounded) for the transfer. */
    async pay(row: PaymentRow, url: string, payload: PaymentPayload): Promise<PayOutcome> {
      const network = caip2(row.chain_id);
      const refused = async (r: Refusal, payer?: string): Promise<PayOutcome> => ({
        kind: "refused",
        required: await required(row, url, r.message),
        response: { success: false, errorReason: r.reason, errorMessage: r.message, payer, transaction: "", network },
      });
      // Checked against what is due now, not against what the client says it accepted: the core
      // compares the signed `to` and `value` with this payment's deposit address and amount due.
      const checked = askOf(served, payload, await requirementsOf(row));
      if (!checked.ok) return refused(checked, checked.payer);
      let record: AuthorizationRecord;
      try {
        record = await authorizations.accept({
          ...checked.ask,
          paymentId: row.id,
          accountId: row.account_id,
          source: "x402",
          client: checked.payer,
          resource: url,
        });
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        return refused(refusal, checked.payer);
      }
      const outcome = await authorizations.outcome(record.id, deps.clock.now() + deps.waitMs);
      if (outcome.status === "succeeded")
        return {
          kind: "paid",
          response: {
            success: true,
            payer: checked.payer,
            transaction: outcome.tx_hash ?? "",
            network,
            amount: outcome.value.toString(),
          },
        };
      if (outcome.status === "failed") {
        const reason = outcome.failure ? REASON_OF[outcome.failure.code] : REASONS.unexpectedSettle;
        return refused({ reason, message: outcome.failure?.message ?? "the transfer failed" }, checked.payer);
      }
      return { kind: "waiting", record: outcome };
    },
  };
}

export type PayByX402 = ReturnType<typeof createPayByX402>;
