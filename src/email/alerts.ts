import type { Clock } from "../lib/clock.ts";
import type { EmailQueue } from "./queue.ts";
import type { EmailStore } from "./store.ts";
import { dailySummary, relayerGasNotice } from "./templates.ts";

/** A chain's relayer gas as /readyz shows it (src/chain/watching/readiness.ts). */
export interface ChainGas {
  name: string;
  relayer_gas: { relayer: string; balance_wei: string | null; low: boolean };
}

export interface EmailAlertsDeps {
  store: EmailStore;
  queue: EmailQueue;
  clock: Clock;
  baseUrl: string;
  /** Every watched chain's relayer gas as last read (no RPC call). */
  chains: () => ChainGas[] | Promise<ChainGas[]>;
  /** The native coin's symbol and decimals on a chain, to show a balance. */
  nativeOf: (chain: string) => { symbol: string; decimals: number };
}

const DAY_MS = 86_400_000;
/** How long a sent or given-up email stays in the outbox: the 30 days events are kept. */
export const EMAIL_RETENTION_MS = 30 * DAY_MS;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * What is sent on a schedule rather than on an event, checked every minute on every replica (the
 * dedupe keys hold each to once): yesterday's summary to the users who chose it, and the
 * relayer's low gas on a chain, at most once a day per chain and user.
 */
export function createEmailAlerts(deps: EmailAlertsDeps) {
  const { store, queue, clock, baseUrl } = deps;

  async function summaries(now: number): Promise<void> {
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const day = dayOf(today - DAY_MS);
    const byAccount = new Map<string, Awaited<ReturnType<EmailStore["confirmedBetween"]>>>();
    for (const user of await store.allUsers()) {
      if ((await store.paymentNotices(user.id)) !== "daily") continue;
      let payments = byAccount.get(user.account_id);
      if (!payments)
        byAccount.set(
          user.account_id,
          (payments = await store.confirmedBetween(user.account_id, today - DAY_MS, today)),
        );
      // A day with nothing confirmed sends nothing: a summary of nothing is noise.
      if (payments.length === 0) continue;
      const email = dailySummary(baseUrl, day, payments);
      await queue.put(
        `summary:${day}`,
        user.email,
        "daily_summary",
        { account: user.account_id, payment: null },
        email,
        now,
        true,
      );
    }
  }

  async function relayerGas(now: number): Promise<void> {
    const day = dayOf(now);
    for (const chain of await deps.chains()) {
      const gas = chain.relayer_gas;
      if (!gas.low || gas.balance_wei === null) continue;
      const native = deps.nativeOf(chain.name);
      const balance = `${formatUnits(BigInt(gas.balance_wei), native.decimals)} ${native.symbol}`;
      const email = relayerGasNotice(baseUrl, chain.name, gas.relayer, balance);
      for (const user of await store.allUsers())
        await queue.put(
          `relayer_gas:${chain.name}:${day}`,
          user.email,
          "relayer_gas",
          { account: user.account_id, payment: null },
          email,
          now,
          true,
        );
    }
  }

  return {
    /** One round: queues what is due now (idempotent: the dedupe keys). */
    async check(): Promise<void> {
      const now = clock.now();
      await summaries(now);
      await relayerGas(now);
      // Emails hold customers' addresses and names: kept as long as events are (docs/data-retention.md).
      await store.purgeOlderThan(now - EMAIL_RETENTION_MS, 500);
    },
  };
}

/** 0.000123 ETH: six decimals, rounded down, are plenty to judge a gas balance by. */
function formatUnits(wei: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const whole = wei / scale;
  const fraction = (wei % scale).toString().padStart(decimals, "0").slice(0, 6).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}
