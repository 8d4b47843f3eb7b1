/**
 * Any chain in, end to end: the time from a payer's plain USDC transfer on a source chain to
 * the payment's `confirmed` (the payout has the funds on the settlement chain), over payments
 * made one after another, against the aim of a median under 5 s.
 *
 *   bun bench/any-chain.ts [--payments 20] [--block-ms 500] [--poll-ms 250] [--attest-ms 200]
 *
 * The local rig of the tests (test/support/crosschain.ts): two anvils, each mining a block
 * every --block-ms (automine off, so a transaction waits for its block as on a real chain), the
 * CCTP contracts on both and the local attestation service, which signs a fast burn
 * --attest-ms after it sees it. The server runs in this process with 1 confirmation and a
 * --poll-ms watcher poll on both chains. Each step is timed from the same clock: transfer
 * sent, credited on the source chain, bridge burned, minted, confirmed.
 */
import { createWalletClient, erc20Abi, getAddress, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { ANVIL_KEY_1 } from "../test/support/anvil.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../test/support/crosschain.ts";
import { numberFlag, percentile } from "./lib.ts";

const argv = process.argv.slice(2);
const payments = numberFlag(argv, "payments", 20);
const blockMs = numberFlag(argv, "block-ms", 500);
const pollMs = numberFlag(argv, "poll-ms", 250);
const attestMs = numberFlag(argv, "attest-ms", 200);

const STEPS = ["credited", "burned", "minted", "confirmed"] as const;
type Step = (typeof STEPS)[number];

/** Mines a block on both chains every `blockMs` until stopped. */
function mineEvery(x: CrossChainStack): () => void {
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const next = Bun.sleep(blockMs);
      await Promise.all([x.chain.anvil.rpc("evm_mine", []), x.local.source.rpc("evm_mine", [])]);
      await next;
    }
  })();
  return () => void (stopped = true);
}

/** Where the payment is: the steps it has reached. */
async function reached(x: CrossChainStack, paymentId: string): Promise<Set<Step>> {
  const done = new Set<Step>();
  const [transfer] = await x.stack.sql<{ credited_at: number | null }>(
    "SELECT credited_at FROM transfers WHERE payment_id = ?",
    paymentId,
  );
  if (transfer?.credited_at != null) done.add("credited");
  const [bridge] = await x.stack.sql<{ state: string }>("SELECT state FROM bridges WHERE payment_id = ?", paymentId);
  if (bridge && bridge.state !== "credited") done.add("burned");
  if (bridge && ["minted", "settled"].includes(bridge.state)) done.add("minted");
  if ((await x.stack.getPayment(paymentId)).status === "confirmed") done.add("confirmed");
  return done;
}

async function main(): Promise<void> {
  const x = await startCrossChainStack({
    attestationDelayMs: attestMs,
    source: { confirmations: 1, pollIntervalMs: pollMs },
  });
  let stopMining = () => {};
  try {
    await x.stack.restart({ STABLEGATE_CONFIRMATIONS: "1", STABLEGATE_POLL_INTERVAL_MS: String(pollMs) });
    await Promise.all([x.chain.anvil.rpc("evm_setAutomine", [false]), x.local.source.rpc("evm_setAutomine", [false])]);
    stopMining = mineEvery(x);
    // The payer of the tests' rig (funded on the source chain), sending as a wallet would.
    const payer = createWalletClient({
      chain: { ...foundry, id: LOCAL_SOURCE.chainId },
      transport: http(x.local.source.rpcUrl),
      account: privateKeyToAccount(ANVIL_KEY_1),
    });

    const times: Record<Step, number[]> = { credited: [], burned: [], minted: [], confirmed: [] };
    for (let i = 0; i < payments; i++) {
      const payment = await x.stack.createPayment({ amount: "12.34" });
      const started = performance.now();
      await payer.writeContract({
        address: x.source.usdc,
        abi: erc20Abi,
        functionName: "transfer",
        args: [getAddress(payment.deposit_address), 12_340_000n],
      });
      const seen = new Set<Step>();
      const deadline = started + 60_000;
      while (seen.size < STEPS.length) {
        if (performance.now() > deadline) throw new Error(`payment ${i + 1} not confirmed after 60 s`);
        for (const step of await reached(x, payment.id)) {
          if (!seen.has(step)) times[step].push(performance.now() - started);
          seen.add(step);
        }
        await Bun.sleep(20);
      }
      process.stdout.write(`payment ${i + 1}: confirmed after ${(times.confirmed.at(-1)! / 1000).toFixed(2)} s\n`);
    }

    console.log(
      `\n${payments} payments, ${blockMs} ms blocks on both chains, 1 confirmation, ${pollMs} ms polls, ` +
        `attestation after ${attestMs} ms`,
    );
    console.log(`${"since the transfer was sent".padEnd(28)}  ${"median s".padStart(8)}  ${"p99 s".padStart(8)}`);
    for (const step of STEPS) {
      const sorted = [...times[step]].sort((a, b) => a - b);
      const row = `${step.padEnd(28)}  ${(percentile(sorted, 0.5) / 1000).toFixed(2).padStart(8)}`;
      console.log(`${row}  ${(percentile(sorted, 0.99) / 1000).toFixed(2).padStart(8)}`);
    }
  } finally {
    stopMining();
    await x.stop();
  }
}

await main();
