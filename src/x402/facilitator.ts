import { type Address, getAddress, type Hex, type TransactionReceipt } from "viem";
import type { Account } from "../accounts/service.ts";
import { movedIn } from "../chain/authorizations/token.ts";
import { counts, type Depth } from "../chain/watching/depth.ts";
import type { Clock } from "../lib/clock.ts";
import type { Logger } from "../lib/log.ts";
import type { Speed } from "../lib/speed.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentsService } from "../payments/service.ts";
import type { PaymentRow, PaymentStore } from "../payments/store.ts";
import type { AuthorizationRecord, AuthorizationsApi } from "./authorizations.ts";
import { askOf, type Served } from "./checks.ts";
import {
  caip2,
  type FacilitatorRequest,
  SCHEME_EXACT,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
  X402_VERSION,
} from "./protocol.ts";
import { REASON_OF, REASONS, type Refusal, refusalOf } from "./reasons.ts";
import type { X402SettlementRow, X402Store } from "./store.ts";

export interface FacilitatorDeps {
  authorizations: AuthorizationsApi;
  payments: Pick<PaymentsService, "createExact">;
  paymentStore: Pick<PaymentStore, "findIdByDepositAddress" | "findById">;
  lifecycle: Pick<Lifecycle, "paidDirectly" | "settledDirectly">;
  store: X402Store;
  /** The account as its key resolves it (payout address, fee, speed), for the payment made of a settlement. */
  accountOf: (accountId: string) => Promise<Account | null>;
  clock: Clock;
  log: Logger;
  served: Served;
  /** The server's fee where an account sets none (STABLEGATE_FEE_BPS). */
  defaultFeeBps: number;
  /** The relayer's address, which /supported lists as the signer. */
  relayer: () => Address | null;
  /**
   * The settlement chain as the follower reads it, outside any transaction: a transaction's
   * receipt (null when the node has none) and the chain's depth (src/chain/watching/depth.ts).
   */
  chain: { receipt: (hash: Hex) => Promise<TransactionReceipt | null>; depth: () => Promise<Depth> };
  /** How long settle waits for the transfer to be mined before answering what it is then. */
  settleWaitMs: number;
}

/** Where a payTo leads: the account's payout address, or a deposit address of one of its payments. */
type PayTo = { kind: "payout" } | { kind: "deposit"; payment: PaymentRow };

/**
 * Stablegate as the x402 facilitator of the merchant's own resources (v2 §7): verify, settle and
 * supported, for the payTo addresses of the key's account only. A settlement is the core's
 * EIP-3009 authorization, sent by the relayer; each is kept as a payment of the account.
 */
export function createFacilitator(deps: FacilitatorDeps) {
  const { authorizations, store, clock, served, log } = deps;
  const network = caip2(served.chainId);
  /** Why each settling settlement was last found unpaid on chain, so the log says it once, not every round. */
  const unpaid = new Map<string, string>();
  /**
   * The block each settling settlement's transfer was last seen in: its receipt is read again
   * only once that block would count, so a round costs no call per settlement still too young.
   */
  const seenIn = new Map<string, bigint>();

  /** The account's own payTo, or why it is not served. Fee refusal: see docs/decisions.md. */
  async function payToOf(account: Account, payTo: string): Promise<PayTo | Refusal> {
    const lower = payTo.toLowerCase();
    if (lower === account.payoutAddress.toLowerCase()) {
      if ((account.feeBps ?? deps.defaultFeeBps) > 0)
        return {
          reason: REASONS.payTo,
          message:
            "this account pays a platform fee, which a transfer straight to the payout address cannot split: " +
            "create a payment and use its deposit address as payTo",
        };
      return { kind: "payout" };
    }
    // Stored checksummed; askOf checked that payTo is an address.
    const id = await deps.paymentStore.findIdByDepositAddress(getAddress(payTo));
    const payment = id ? await deps.paymentStore.findById(id) : null;
    if (payment && payment.account_id === account.id && payment.chain_id === served.chainId)
      return { kind: "deposit", payment };
    return {
      reason: REASONS.payTo,
      message: "payTo must be this account's payout address or the deposit address of one of its payments",
    };
  }

  async function prepare(account: Account, request: FacilitatorRequest) {
    const checked = askOf(served, request.paymentPayload, request.paymentRequirements);
    if (!checked.ok) return checked;
    const payTo = await payToOf(account, request.paymentRequirements.payTo);
    if ("reason" in payTo) return { ok: false as const, payer: checked.payer, ...payTo };
    return { ...checked, payTo };
  }

  /**
   * Records a settlement whose authorization is final. A payout-address one's payment is made
   * now, received and settling: `confirmIfDeep` confirms it once its speed policy counts the block.
   */
  async function finish(row: X402SettlementRow, record: AuthorizationRecord): Promise<void> {
    if (record.status === "failed") {
      await store.finish(row.authorization_id, "failed", null, clock.now());
      return;
    }
    if (record.status !== "succeeded") return;
    if (row.payment_id !== null) {
      // A deposit address: the watcher credits the transfer to that payment as for any transfer.
      await store.finish(row.authorization_id, "recorded", row.payment_id, clock.now());
      return;
    }
    // Metadata holds strings of at most 500 characters (the API's rule);
    // the full resource URL stays in x402_settlements.
    const metadata = JSON.stringify({
      x402_resource: (row.resource ?? "").slice(0, 500),
      x402_payer: row.payer,
      x402_tx_hash: record.tx_hash ?? "",
      x402_network: network,
      x402_pay_to: row.pay_to,
    });
    const owner = await deps.accountOf(row.account_id);
    if (!owner) throw new Error(`account ${row.account_id} of an x402 settlement is gone`);
    await deps.payments
      .createExact(
        owner,
        row.amount,
        { description: (row.description ?? row.resource)?.slice(0, 500) ?? null, metadataText: metadata },
        async (payment) => {
          // Exactly one caller records it: another's insert rolls back with this throw.
          if (!(await store.finish(row.authorization_id, "settling", payment.id, clock.now(), record.tx_hash)))
            throw new AlreadyRecorded();
          await deps.lifecycle.paidDirectly(payment.id, row.amount);
        },
      )
      .catch((error) => {
        if (!(error instanceof AlreadyRecorded)) throw error;
      });
  }

  /** Whether `receipt` moved the settlement's amount from its payer to its payTo in USDC. */
  function paidBy(row: X402SettlementRow, receipt: TransactionReceipt | null): string | null {
    if (!receipt) return "its transaction has no receipt on the chain now (a reorg took its block?)";
    if (receipt.status !== "success") return "its transaction reverted";
    const moved = movedIn(receipt.logs, served.usdc, {
      from: row.payer as Address,
      to: row.pay_to as Address,
      value: row.amount,
    });
    return moved ? null : "its transaction moves no USDC from the payer to the payout address";
  }

  /**
   * Confirms a settling payout-address settlement's payment once the payment's speed policy
   * counts the block its transfer is in (docs/speed.md), as the settler does for a sweep. The
   * receipt is read before, outside the transaction; the write is guarded (settling ->
   * recorded), so two rounds or two replicas confirm it once. A transfer no longer on the chain
   * leaves the payment settling (said once in the log) until it is found again at depth.
   */
  async function confirmIfDeep(row: X402SettlementRow & { speed: Speed }, depth: Depth): Promise<boolean> {
    const id = row.authorization_id;
    const seen = seenIn.get(id);
    if (seen !== undefined && !counts(row.speed, seen, depth)) return false; // not deep enough yet
    // The core's record names the transaction now: a reorg can have it sent again on another nonce.
    const txHash = (await authorizations.find(id))?.tx_hash ?? row.tx_hash;
    const receipt = txHash ? await deps.chain.receipt(txHash as Hex) : null;
    const problem = paidBy(row, receipt);
    if (problem) {
      seenIn.delete(id);
      if (unpaid.get(id) !== problem)
        log.warn("x402 settlement not on the chain as paid; its payment stays settling", {
          authorization: id,
          payment_id: row.payment_id,
          tx_hash: txHash,
          problem,
        });
      unpaid.set(id, problem);
      return false;
    }
    if (unpaid.delete(id)) log.info("x402 settlement found on the chain again", { authorization: id });
    const block = receipt!.blockNumber;
    seenIn.set(id, block);
    if (!counts(row.speed, block, depth)) return false; // not deep enough yet
    const confirmed = await store.transaction(async () => {
      if (!(await store.confirm(id, clock.now()))) return false;
      await deps.lifecycle.settledDirectly(row.payment_id!, row.amount);
      return true;
    });
    seenIn.delete(id);
    if (confirmed) log.info("x402 settlement confirmed", { payment_id: row.payment_id, tx_hash: txHash, block });
    return confirmed;
  }

  const settleAnswer = (record: AuthorizationRecord, payer: string): SettleResponse => {
    if (record.status === "succeeded")
      return { success: true, payer, transaction: record.tx_hash ?? "", network, amount: record.value.toString() };
    if (record.status === "failed")
      return {
        success: false,
        errorReason: record.failure ? REASON_OF[record.failure.code] : REASONS.unexpectedSettle,
        errorMessage: record.failure?.message ?? "the transfer failed",
        payer,
        transaction: record.tx_hash ?? "",
        network,
      };
    return {
      success: false,
      errorReason: REASONS.pending,
      errorMessage: "the transfer was sent and is not mined yet: settle again with the same payload for its outcome",
      payer,
      transaction: record.tx_hash ?? "",
      network,
    };
  };

  return {
    supported(): SupportedResponse {
      const relayer = deps.relayer();
      return {
        kinds: [{ x402Version: X402_VERSION, scheme: SCHEME_EXACT, network }],
        extensions: [],
        signers: relayer ? { "eip155:*": [relayer] } : {},
      };
    },

    async verify(account: Account, request: FacilitatorRequest): Promise<VerifyResponse> {
      const prepared = await prepare(account, request);
      if (!prepared.ok)
        return {
          isValid: false,
          invalidReason: prepared.reason,
          invalidMessage: prepared.message,
          payer: prepared.payer,
        };
      const verdict = await authorizations.verify(prepared.ask);
      if (!verdict.ok)
        return {
          isValid: false,
          invalidReason: REASON_OF[verdict.code],
          invalidMessage: verdict.message,
          payer: prepared.payer,
        };
      return { isValid: true, payer: verdict.payer };
    },

    /** Settle twice with one payload: the core answers the same record, and money moves once. */
    async settle(account: Account, request: FacilitatorRequest): Promise<SettleResponse> {
      const prepared = await prepare(account, request);
      const failed = (r: Refusal, payer?: string): SettleResponse => ({
        success: false,
        errorReason: r.reason,
        errorMessage: r.message,
        payer,
        transaction: "",
        network,
      });
      if (!prepared.ok) return failed(prepared, prepared.payer);
      const resource = request.paymentPayload.resource;
      let record: AuthorizationRecord;
      try {
        record = await authorizations.accept({
          ...prepared.ask,
          paymentId: prepared.payTo.kind === "deposit" ? prepared.payTo.payment.id : null,
          accountId: account.id,
          source: "facilitator",
          client: prepared.payer,
          resource: resource?.url,
        });
      } catch (error) {
        const refusal = refusalOf(error);
        if (!refusal) throw error;
        return failed(refusal, prepared.payer);
      }
      const now = clock.now();
      await store.insertOnce({
        authorization_id: record.id,
        account_id: account.id,
        payment_id: prepared.payTo.kind === "deposit" ? prepared.payTo.payment.id : null,
        pay_to: prepared.ask.expect.to,
        payer: prepared.payer,
        amount: prepared.ask.authorization.value,
        tx_hash: null,
        resource: resource?.url?.slice(0, 2048) ?? null,
        description: resource?.description ? resource.description.slice(0, 500) : null,
        state: "pending",
        created_at: now,
        updated_at: now,
      });
      const outcome = await authorizations.outcome(record.id, clock.now() + deps.settleWaitMs);
      const row = await store.find(record.id);
      if (row?.state === "pending") {
        try {
          await finish(row, outcome);
        } catch (error) {
          // The follower records it on its next round; the answer is the transfer's.
          log.warn("x402 settlement not recorded yet", { authorization: record.id, error: String(error) });
        }
      }
      return settleAnswer(outcome, prepared.payer);
    },

    /**
     * One round of the follower: settlements whose answer did not wait for their outcome, then
     * payout-address payments settling until their transfer is deep enough (one depth read).
     */
    async followPending(limit = 100): Promise<number> {
      let finished = 0;
      for (const row of await store.pending(limit)) {
        const record = await authorizations.find(row.authorization_id);
        if (!record || (record.status !== "succeeded" && record.status !== "failed")) continue;
        await finish(row, record);
        finished++;
      }
      const settling = await store.settling(SETTLING_PER_ROUND);
      // Confirmed meanwhile (by another replica): nothing left to remember about those.
      const open = new Set(settling.map((r) => r.authorization_id));
      for (const known of [unpaid, seenIn]) for (const id of known.keys()) if (!open.has(id)) known.delete(id);
      if (settling.length === 0) return finished;
      const depth = await deps.chain.depth();
      for (const row of settling) if (await confirmIfDeep(row, depth)) finished++;
      return finished;
    },
  };
}

/**
 * Settling settlements a follower round looks at: those in flight are the last few blocks'
 * (the confirmations' worth), and one still too young costs no call to the chain.
 */
const SETTLING_PER_ROUND = 1000;

class AlreadyRecorded extends Error {}

export type Facilitator = ReturnType<typeof createFacilitator>;
