/**
 * What the relayer pays, per paid payment and per dust transfer, for two builds in one run: an
 * older one ("before", the executable given) and this tree's (built here, "after"). Each build
 * runs as `stablegate serve` on the tests' rig (test/support/crosschain.ts): two anvils, the
 * settlement chain and a source chain with the local CCTP contracts and attestation service.
 *
 *   git worktree add /tmp/before 1256826 && (cd /tmp/before && bun install && bun run build)
 *   bun bench/relayer-cost.ts /tmp/before/dist/stablegate [--payments 3] [--dust 3]
 *
 * Measured: every transaction the relayer sent on either chain from the start of a case until
 * it has settled down (its nonces unchanged over several rounds of the settler and the bridger,
 * nothing of the case's payments in flight), read from the blocks' receipts: gas units, and gas
 * x effective gas price. Cases, one after another, each averaged over its payments:
 *   - direct: a payment of 10.00 paid on the settlement chain (settle);
 *   - any chain: a payment of 10.00 paid on the source chain (bridge there, receiveMessage and
 *     settle on the settlement chain);
 *   - dust: 0.000001 USDC sent to a confirmed payment's deposit address, on the settlement chain
 *     and on the source chain (nothing should be sent for it).
 * Loopback only; everything it starts is stopped however the run ends, within a time limit.
 */
import type { Address, PublicClient } from "viem";
import {
  loopsGoRound,
  mineBothUntil,
  payOnSource,
  relayerNonces,
  relayerOf,
  untilStatus,
} from "../test/support/bridging.ts";
import { type CrossChainStack, startCrossChainStack } from "../test/support/crosschain.ts";
import { builtBinary } from "../test/support/stack.ts";
import { usdc } from "../test/support/test-chain.ts";
import { numberFlag } from "./lib.ts";

const argv = process.argv.slice(2);
const beforeBinary = argv[0];
if (!beforeBinary || beforeBinary.startsWith("--")) {
  console.error(
    "usage: bun bench/relayer-cost.ts <path of the older build's dist/stablegate> [--payments 3] [--dust 3]",
  );
  process.exit(2);
}
const PAYMENTS = numberFlag(argv, "payments", 3);
const DUST = numberFlag(argv, "dust", 3);
const limitMs = 2 * (PAYMENTS * 2 + DUST * 2) * 60_000 + 300_000;
setTimeout(() => {
  console.error(`bench: time limit of ${limitMs / 1000} s reached; stopping`);
  process.exit(1);
}, limitMs).unref();

/** What the relayer sent during a case, on one chain. */
interface Spent {
  txs: number;
  gas: bigint;
  wei: bigint;
}

/** On the settlement chain and on the source chain. */
interface Both {
  settlement: Spent;
  source: Spent;
}

const CASES = [
  "direct payment (paid on the settlement chain)",
  "any-chain payment (paid on the source chain)",
  "dust 0.000001 USDC, settlement chain",
  "dust 0.000001 USDC, source chain",
] as const;
type Case = (typeof CASES)[number];

/** Sums the relayer's transactions in blocks (from, to] of one chain. */
async function relayerSpent(client: PublicClient, relayer: Address, from: bigint, to: bigint): Promise<Spent> {
  const spent: Spent = { txs: 0, gas: 0n, wei: 0n };
  for (let n = from + 1n; n <= to; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() !== relayer.toLowerCase()) continue;
      const receipt = await client.getTransactionReceipt({ hash: tx.hash });
      spent.txs++;
      spent.gas += receipt.gasUsed;
      spent.wei += receipt.gasUsed * receipt.effectiveGasPrice;
    }
  }
  return spent;
}

/** Whether anything of the payments is on its way: an unminted bridge, an unredeemed burn, an unmined settlement. */
async function inFlight(x: CrossChainStack, paymentIds: string[]): Promise<boolean> {
  const marks = paymentIds.map(() => "?").join(", ");
  const [row] = await x.stack.sql<{ n: number }>(
    `SELECT (SELECT count(*) FROM bridges
              WHERE payment_id IN (${marks}) AND state IN ('credited', 'burned', 'attested'))
          + (SELECT count(*) FROM crosschain_burns
              WHERE payment_id IN (${marks}) AND state IN ('attesting', 'redeeming'))
          + (SELECT count(*) FROM settlements WHERE payment_id IN (${marks}) AND state = 'submitted') AS n`,
    ...paymentIds,
    ...paymentIds,
    ...paymentIds,
  );
  return row!.n > 0;
}

/**
 * Runs `act` and waits until the relayer is done with what it started: nothing of `act`'s
 * payments in flight and the nonces unchanged over several rounds of the relayer's loops.
 * Returns what the relayer sent meanwhile, on both chains.
 */
async function measure(x: CrossChainStack, relayer: Address, act: () => Promise<string[]>): Promise<Both> {
  const from = {
    settlement: await x.chain.publicClient.getBlockNumber(),
    source: await x.source.publicClient.getBlockNumber(),
  };
  const paymentIds = await act();
  for (;;) {
    const nonces = await relayerNonces(x, relayer);
    await loopsGoRound(x, 5);
    await mineBothUntil(x, async () => !(await inFlight(x, paymentIds)), "the case's payments to settle down", 60_000);
    const after = await relayerNonces(x, relayer);
    if (after.settlement === nonces.settlement && after.source === nonces.source) break;
  }
  const settlementHead = await x.chain.publicClient.getBlockNumber();
  const sourceHead = await x.source.publicClient.getBlockNumber();
  return {
    settlement: await relayerSpent(x.chain.publicClient, relayer, from.settlement, settlementHead),
    source: await relayerSpent(x.source.publicClient, relayer, from.source, sourceHead),
  };
}

/** A payment of 10.00 paid on the settlement chain and confirmed (before any measurement). */
async function confirmedPayment(x: CrossChainStack) {
  const payment = await x.stack.createPayment({ amount: "10.00" });
  await x.stack.pay(payment.deposit_address, usdc("10.00"));
  await untilStatus(x, payment.id, "confirmed");
  return payment as { id: string; deposit_address: Address };
}

/** Mines both chains until the payment has `received` credited. */
function untilReceived(x: CrossChainStack, paymentId: string, received: string) {
  return mineBothUntil(
    x,
    async () => (await x.stack.getPayment(paymentId)).amount_received === received,
    `${received} USDC credited`,
  );
}

/** Every case on one build; per payment or per dust transfer. */
async function run(label: string, binary: string): Promise<Map<Case, Both>> {
  const x = await startCrossChainStack({
    subprocess: true,
    binary,
    attestationDelayMs: 0,
    source: { confirmations: 1, pollIntervalMs: 200 },
  });
  const results = new Map<Case, Both>();
  const mean = (spent: Spent, n: number): Spent => ({
    txs: spent.txs / n,
    gas: spent.gas / BigInt(n),
    wei: spent.wei / BigInt(n),
  });
  const per = (both: Both, n: number): Both => ({
    settlement: mean(both.settlement, n),
    source: mean(both.source, n),
  });
  try {
    const relayer = await relayerOf(x);
    console.log(`${label}: ${binary}, relayer ${relayer}`);
    // One payment settled first, so the cases do not carry the first use of a cold payout balance.
    await measure(x, relayer, async () => [(await confirmedPayment(x)).id]);

    const direct = await measure(x, relayer, async () => {
      const ids: string[] = [];
      for (let i = 0; i < PAYMENTS; i++) ids.push((await confirmedPayment(x)).id);
      return ids;
    });
    results.set(CASES[0], per(direct, PAYMENTS));

    const anyChain = await measure(x, relayer, async () => {
      const ids: string[] = [];
      for (let i = 0; i < PAYMENTS; i++) {
        const payment = await x.stack.createPayment({ amount: "10.00" });
        await payOnSource(x, payment.deposit_address, usdc("10.00"));
        await untilStatus(x, payment.id, "confirmed");
        ids.push(payment.id);
      }
      return ids;
    });
    results.set(CASES[1], per(anyChain, PAYMENTS));

    for (const [name, send] of [
      [CASES[2], (to: Address) => x.stack.pay(to, 1n)],
      [CASES[3], (to: Address) => x.sourceTransfer(to, 1n)],
    ] as const) {
      const confirmed: Array<{ id: string; deposit_address: Address }> = [];
      for (let i = 0; i < DUST; i++) confirmed.push(await confirmedPayment(x));
      await measure(x, relayer, async () => confirmed.map((p) => p.id));
      const dust = await measure(x, relayer, async () => {
        for (const payment of confirmed) {
          await send(payment.deposit_address);
          await untilReceived(x, payment.id, "10.000001");
        }
        return confirmed.map((p) => p.id);
      });
      results.set(name, per(dust, DUST));
    }
  } finally {
    await x.stop();
  }
  return results;
}

const builds: Array<[string, string]> = [
  ["before", beforeBinary],
  ["after", await builtBinary()],
];
const measured: Array<Map<Case, Both>> = [];
for (const [label, binary] of builds) measured.push(await run(label, binary));

const nameWidth = Math.max(...CASES.map((c) => c.length));
const gwei = (wei: bigint) => (Number(wei) / 1e9).toFixed(0);
/** Transactions on each chain, gas on each chain, and what all of it cost. */
const cell = ({ settlement, source }: Both) =>
  `${`${settlement.txs}+${source.txs}`.padStart(7)}  ${settlement.gas.toString().padStart(10)}  ` +
  `${source.gas.toString().padStart(10)}  ${gwei(settlement.wei + source.wei).padStart(11)}`;
const width = cell({ settlement: { txs: 0, gas: 0n, wei: 0n }, source: { txs: 0, gas: 0n, wei: 0n } }).length;
console.log(
  `\nRelayer gas per paid payment (mean of ${PAYMENTS}) or dust transfer (mean of ${DUST}); ` +
    "txs: on the settlement chain + on the source chain",
);
console.log(`${" ".repeat(nameWidth)}  ${builds.map(([label]) => label.padEnd(width)).join("  ")}`.trimEnd());
const header =
  `${"txs".padStart(7)}  ${"gas settl.".padStart(10)}  ` +
  `${"gas source".padStart(10)}  ${"cost (gwei)".padStart(11)}`;
console.log(`${"case".padEnd(nameWidth)}  ${builds.map(() => header).join("  ")}`);
for (const name of CASES)
  console.log(`${name.padEnd(nameWidth)}  ${measured.map((m) => cell(m.get(name)!)).join("  ")}`);
