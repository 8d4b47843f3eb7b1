/**
 * x402 at the facilitator and at a payment's x402_url, on local anvils:
 *
 *   bun bench/x402.ts [--seconds 10] [--clients 16] [--settles 200] [--runs 10]
 *     [--block-time 2] [--confirmations 2]
 *
 * 1. Throughput, on an automining anvil (a transaction is mined as it arrives, so the chain is not
 *    what is measured): `POST /api/v1/x402/verify` answers per second from --clients closed-loop
 *    clients for --seconds (each request a valid authorization: signature recovery, the token's
 *    domain, the floor, the nonce state, the payer's balance and a simulation against anvil), then
 *    --settles `POST /api/v1/x402/settle` of distinct payers to the account's payout address, sent
 *    by --clients at a time: settles per second over the whole batch, and each answer's latency
 *    (an answer waits for the relayer's transfer to be mined, as the official facilitator does).
 * 2. Time from signature to `confirmed`, with a block every --block-time seconds (interval mining):
 *    --runs payments paid one after another at their x402_url (the payer's authorization signed,
 *    then PAYMENT-SIGNATURE sent; `confirmed` when GET /api/v1/payments/{id} says so, read every
 *    100 ms), with --confirmations as STABLEGATE_CONFIRMATIONS (the payment's standard policy: the
 *    transfer's depth, then the settlement's); and --runs facilitator settlements to the payout
 *    address: signature to the /settle answer (once the transfer is mined), and to `confirmed` (the
 *    payment made of it, found in the list by its tx hash, confirmed once the transfer has the
 *    confirmations on top: the facilitator's follower looks every 2 s).
 *
 * The server is `bun src/main.ts serve`, a process of its own (test/support/stack.ts, SQLite), so
 * the load generator's CPU is not the server's. Each settle uses a payer of its own: the core's
 * per-client limit (10 an hour) would refuse more from one. Everything started is stopped at the end.
 */
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { type Stack, startStack } from "../test/support/stack.ts";
import { startChain, type TestChain, usdc } from "../test/support/test-chain.ts";
import { facilitatorRequest, signAuthorization } from "../test/support/x402.ts";
import { numberFlag, percentile, runLoad } from "./lib.ts";

const argv = process.argv.slice(2);
const SECONDS = numberFlag(argv, "seconds", 10);
const CLIENTS = numberFlag(argv, "clients", 16);
const SETTLES = numberFlag(argv, "settles", 200);
const RUNS = numberFlag(argv, "runs", 10);
const BLOCK_S = numberFlag(argv, "block-time", 2);
const CONFIRMATIONS = numberFlag(argv, "confirmations", 2);
const AMOUNT = usdc("0.50");

const stops: Array<() => Promise<void>> = [];
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

async function fundedPayers(chain: TestChain, n: number): Promise<PrivateKeyAccount[]> {
  const payers = Array.from({ length: n }, () => privateKeyToAccount(generatePrivateKey()));
  for (const p of payers) await chain.pay(p.address, usdc("5.00"));
  return payers;
}

const post = (stack: Stack, op: string, body: unknown) =>
  fetch(`${stack.url}/api/v1/x402/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function settleRequest(stack: Stack, payer: PrivateKeyAccount, payTo: `0x${string}`) {
  const chainId = stack.config.chain.chainId;
  const usdcAddress = stack.chain.usdc;
  const signed = await signAuthorization({ signer: payer, chainId, usdc: usdcAddress, to: payTo, value: AMOUNT });
  return facilitatorRequest({ chainId, usdc: usdcAddress, payTo, amount: AMOUNT, signed });
}

async function throughput() {
  const chain = await startChain();
  stops.push(() => chain.stop());
  const stack = await startStack({ chain, subprocess: true });
  stops.push(() => stack.stop());

  const verifiers = await fundedPayers(chain, CLIENTS);
  const bodies = await Promise.all(verifiers.map((p) => settleRequest(stack, p, stack.payout)));
  const verify = await runLoad({
    name: "verify",
    clients: CLIENTS,
    seconds: SECONDS,
    warmupSeconds: 2,
    request: (client) => post(stack, "verify", bodies[client]),
    onBody: (body) => {
      if (!JSON.parse(body).isValid) throw new Error(`verify refused: ${body}`);
    },
  });

  const payers = await fundedPayers(chain, SETTLES);
  const requests = await Promise.all(payers.map((p) => settleRequest(stack, p, stack.payout)));
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < requests.length) {
        const body = requests[next++]!;
        const t0 = performance.now();
        const answer = (await (await post(stack, "settle", body)).json()) as { success: boolean };
        if (answer.success) latencies.push(performance.now() - t0);
        else failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    verify: {
      perSecond: round(verify.perSecond),
      p50Ms: round(verify.p50Ms),
      p99Ms: round(verify.p99Ms),
      errors: verify.errors,
    },
    settle: {
      settled: latencies.length,
      failed,
      perSecond: round(latencies.length / seconds),
      p50Ms: round(percentile(latencies, 0.5)),
      p99Ms: round(percentile(latencies, 0.99)),
    },
  };
}

async function timeToConfirmed() {
  const chain = await startChain({ blockTime: BLOCK_S });
  stops.push(() => chain.stop());
  const stack = await startStack({ chain, subprocess: true, confirmations: CONFIRMATIONS });
  stops.push(() => stack.stop());
  const payers = await fundedPayers(chain, 2 * RUNS);
  const chainId = stack.config.chain.chainId;

  const viaEndpoint: number[] = [];
  for (const payer of payers.slice(0, RUNS)) {
    const payment = await stack.createPayment({ amount: "0.50" });
    const t0 = performance.now();
    const signed = await signAuthorization({
      signer: payer,
      chainId,
      usdc: chain.usdc,
      to: payment.deposit_address,
      value: AMOUNT,
    });
    const { paymentPayload } = facilitatorRequest({
      chainId,
      usdc: chain.usdc,
      payTo: payment.deposit_address,
      amount: AMOUNT,
      signed,
    });
    const res = await fetch(`${stack.url}/api/public/payments/${payment.id}/x402`, {
      headers: { "PAYMENT-SIGNATURE": Buffer.from(JSON.stringify(paymentPayload)).toString("base64") },
    });
    if (res.status !== 200 && res.status !== 202) throw new Error(`x402 endpoint answered ${res.status}`);
    await stack.waitFor(async () => (await stack.getPayment(payment.id)).status === "confirmed", 120_000, "confirmed");
    viaEndpoint.push((performance.now() - t0) / 1000);
  }

  const answered: number[] = [];
  const viaFacilitator: number[] = [];
  for (const payer of payers.slice(RUNS)) {
    const t0 = performance.now();
    const body = await settleRequest(stack, payer, stack.payout);
    const answer = (await (await post(stack, "settle", body)).json()) as {
      success: boolean;
      errorReason?: string;
      transaction: string;
    };
    if (!answer.success) throw new Error(`settle refused: ${answer.errorReason}`);
    answered.push((performance.now() - t0) / 1000);
    await stack.waitFor(
      async () =>
        (await stack.request("/api/v1/payments?limit=5")).json.data.some(
          (p: { status: string; metadata: Record<string, string> | null }) =>
            p.metadata?.x402_tx_hash === answer.transaction && p.status === "confirmed",
        ),
      120_000,
      "the settlement's payment confirmed",
    );
    viaFacilitator.push((performance.now() - t0) / 1000);
  }
  const summary = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return {
      n: xs.length,
      medianS: round(percentile(sorted, 0.5), 2),
      minS: round(sorted[0]!, 2),
      maxS: round(sorted.at(-1)!, 2),
    };
  };
  return {
    endpoint: summary(viaEndpoint),
    facilitatorToPayoutAnswered: summary(answered),
    facilitatorToPayout: summary(viaFacilitator),
  };
}

try {
  const at = new Date().toISOString();
  const t = await throughput();
  console.log(JSON.stringify({ at, clients: CLIENTS, seconds: SECONDS, ...t }, null, 2));
  const c = await timeToConfirmed();
  console.log(JSON.stringify({ blockTimeS: BLOCK_S, confirmations: CONFIRMATIONS, ...c }, null, 2));
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
}
