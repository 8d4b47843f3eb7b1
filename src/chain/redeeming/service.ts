import type { Address, Hex } from "viem";
import { type Clock, isoMillis } from "../../lib/clock.ts";
import {
  ConflictError,
  RetryableError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
} from "../../lib/errors.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import { formatExact } from "../../lib/money.ts";
import { AWAITING_FUNDS } from "../../payments/states.ts";
import type { PaymentRow } from "../../payments/store.ts";
import { amountDue } from "../../payments/view.ts";
import type { CctpSource, CrossChainConfig } from "../cross-chain-config.ts";
import { errorMessage } from "../rpc-errors.ts";
import type { CrossChainApi } from "./api.ts";
import type { AttestationApi } from "./attestation-api.ts";
import { burnCalls, burnFor, FINALITY } from "./quote.ts";
import type { SourceBurn, SourceBurns } from "./source-burn.ts";
import type { BurnRow, BurnStore } from "./store.ts";

const MAX_UNCHECKED_BURNS = 20;

/** Statuses in which more funds are not needed; a quote then says so instead of offering calls. */
const SETTLED_OR_SETTLING = new Set(["settling", "overpaid", "confirmed"]);

/**
 * Whether a payer's burn of `amount` for the payment is worth redeeming at the relayer's cost:
 * at least the settlement chain's sweep floor, or everything the payment still needs. A smaller
 * burn is not lost: its attested message can be relayed by anyone, the payer included.
 */
export function worthRedeeming(row: PaymentRow, amount: bigint, floor: bigint): boolean {
  return amount >= floor || (amount > 0n && amount >= amountDue(row));
}

export interface CrossChainDeps {
  config: CrossChainConfig;
  burns: BurnStore;
  api: AttestationApi;
  sourceBurns: SourceBurns;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Tells the redeemer a new burn is waiting. */
  wake: () => void;
}

/** A burn as the payer and the merchant see it. */
export function burnView(row: BurnRow) {
  return {
    id: row.id,
    chain: row.source_chain,
    tx_hash: row.tx_hash,
    state: row.state,
    amount: row.amount === null ? null : formatExact(row.amount),
    redeem_tx_hash: row.redeem_tx_hash,
    error: row.state === "failed" ? row.error : null,
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
  };
}

/** The three public cross-chain operations (interface spec §4.4). */
export function createCrossChainService(deps: CrossChainDeps): CrossChainApi {
  const { config, burns, api, sourceBurns, clock, ids, log } = deps;

  function source(name: string): CctpSource {
    const found = config.sources.find((s) => s.name === name);
    if (!found) {
      throw new ValidationError(
        `unknown source chain "${name}"; configured: ${config.sources.map((s) => s.name).join(", ")}`,
      );
    }
    return found;
  }

  return {
    sources: () => ({
      object: "list",
      data: config.sources.map((s) => ({
        name: s.name,
        chain_id: s.chainId,
        domain: s.domain,
        fast_seconds: s.fastSeconds,
        standard_seconds: s.standardSeconds,
      })),
    }),

    async quote(row: PaymentRow, chain: string) {
      const from = source(chain);
      const due = amountDue(row);
      const base = {
        chain: from.name,
        chain_id: from.chainId,
        domain: from.domain,
        destination_domain: config.domain,
        amount_due: formatExact(due),
      };
      if (due === 0n || SETTLED_OR_SETTLING.has(row.status)) {
        return { ...base, needed: false, message: "This payment needs nothing more." };
      }
      let fees: { fast: number; standard: number };
      try {
        fees = await api.fees(from.domain, config.domain);
      } catch (error) {
        if (error instanceof RetryableError)
          throw new UnavailableError("cross-chain fees are unavailable right now; try again shortly", 10);
        throw error;
      }
      const option = (kind: keyof typeof FINALITY, feeBps: number, seconds: number | null) => {
        if (seconds === null) return { available: false };
        const { burn, maxFee } = burnFor(due, feeBps);
        return {
          available: true,
          fee_bps: feeBps,
          burn_amount: formatExact(burn),
          max_fee: formatExact(maxFee),
          min_finality_threshold: FINALITY[kind],
          estimated_seconds: seconds,
          calls: burnCalls({
            sourceUsdc: from.usdc,
            tokenMessenger: config.tokenMessenger,
            destinationDomain: config.domain,
            depositAddress: row.deposit_address as Address,
            burn,
            maxFee,
            finality: FINALITY[kind],
          }),
        };
      };
      return {
        ...base,
        needed: true,
        fast: option("fast", fees.fast, from.fastSeconds),
        standard: option("standard", fees.standard, from.standardSeconds),
      };
    },

    /**
     * Records a burn for this payment once (a repeat answers with the same record) and wakes
     * the redeemer. A burn belongs to the payment whose deposit address it mints to: when the
     * source chain already shows it minting elsewhere it is refused and nothing is recorded.
     * Records are per payment, so a post for the wrong payment never blocks the right one.
     */
    async record(row: PaymentRow, chain: string, txHash: Hex) {
      const from = source(chain);
      const hash = txHash.toLowerCase() as Hex;
      const known = await burns.find(from.domain, hash, row.id);
      if (known) return burnView(known);
      // Only a payment waiting for funds has a payer's burn redeemed for it.
      if (!AWAITING_FUNDS.includes(row.status))
        throw new ConflictError(`this payment is ${row.status} and waits for no funds; burns for it are not redeemed`);
      let onSource: SourceBurn = null;
      try {
        onSource = await sourceBurns.read(from.name, hash, row.deposit_address as Address);
      } catch (error) {
        // Not mined yet or the source RPC is down: the redeemer checks it later, exactly the same.
        log.debug("cross-chain burn: source chain not readable now", { error: errorMessage(error) });
      }
      if (onSource !== null && "failure" in onSource)
        throw new UnprocessableError(`transaction ${hash}: ${onSource.failure}`);
      if (onSource !== null && !worthRedeeming(row, onSource.amount, config.redeemFloor))
        throw new UnprocessableError(
          `transaction ${hash} burns ${formatExact(onSource.amount)} USDC; this server redeems burns of at least ` +
            `${formatExact(config.redeemFloor)} USDC, or of everything the payment still needs ` +
            `(${formatExact(amountDue(row))} USDC)`,
        );
      // Hashes nothing can check yet are capped, as past a handful they are noise; a mined burn
      // to this deposit address is money and always recorded, so that noise never blocks it.
      if (onSource === null && (await burns.countUnchecked(row.id)) >= MAX_UNCHECKED_BURNS) {
        throw new ConflictError(
          `this payment already has ${MAX_UNCHECKED_BURNS} cross-chain transfers waiting for their source chain; ` +
            "post this one again once it is mined",
        );
      }
      const burn = await burns.record({
        id: ids.prefixed("burn"),
        payment_id: row.id,
        source_chain: from.name,
        source_domain: from.domain,
        tx_hash: hash,
        amount: onSource?.amount ?? null,
        now: clock.now(),
      });
      deps.wake();
      return burnView(burn);
    },
  };
}
