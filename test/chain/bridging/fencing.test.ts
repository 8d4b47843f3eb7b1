/**
 * A replica that lost the chain lease (paused past it, say) must not bridge: what the bridger
 * signs is saved under the lease, in the transaction that checks it still holds it, and only
 * then broadcast. Here a second bridger, beside the running server on its database and the real
 * source chain, plays the replica whose lease the server holds now: it reaches a credited bridge,
 * and its relayer's nonce on the source chain must not move.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Address, getAddress, type Hex, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createBridger } from "../../../src/chain/bridging/bridger.ts";
import { createBridgeStore } from "../../../src/chain/bridging/store.ts";
import { ensureFactoryFor } from "../../../src/chain/deposit-terms.ts";
import { createBurnStore } from "../../../src/chain/redeeming/store.ts";
import { createSourceNetworks } from "../../../src/chain/source-networks.ts";
import { createChainStore } from "../../../src/chain/store.ts";
import { openDb } from "../../../src/db/index.ts";
import { createEventStore } from "../../../src/events/store.ts";
import { CHAIN_LEASE, LeaseLostError } from "../../../src/leases/lease.ts";
import { createLeaseStore } from "../../../src/leases/store.ts";
import { systemClock } from "../../../src/lib/clock.ts";
import { randomIds } from "../../../src/lib/ids.ts";
import { silentLogger } from "../../../src/lib/log.ts";
import { createLifecycle } from "../../../src/payments/lifecycle.ts";
import { createPaymentStore } from "../../../src/payments/store.ts";
import { bridgedOnSource } from "../../support/bridging.ts";
import { type CrossChainStack, LOCAL_SOURCE, startCrossChainStack } from "../../support/crosschain.ts";
import { usdc } from "../../support/test-chain.ts";

let x: CrossChainStack;

beforeAll(async () => {
  // The server's own bridger never reaches the source chain: only the stale one below acts there.
  x = await startCrossChainStack({ attestationDelayMs: 0, source: { rpcUrl: "http://127.0.0.1:9" } });
}, 60_000);

afterAll(() => x?.stop());

/** The relayer key of the stale replica: its own, funded on the source chain. */
const staleKey: Hex = generatePrivateKey();

/** A bridger on the server's database, signing with `staleKey`, whose writes go through `transaction`. */
function bridgerBeside(transaction: <T>(fn: () => Promise<T>) => Promise<T>, db: ReturnType<typeof openDb>) {
  const source = { ...x.stack.config.crossChain!.sources[0]!, rpcUrl: x.local.source.rpcUrl };
  const network = createSourceNetworks([source], staleKey, async () => null).get(LOCAL_SOURCE.chainId)!;
  const payments = createPaymentStore(db);
  const chain = createChainStore(db);
  const lifecycle = createLifecycle({
    payments,
    chain,
    events: createEventStore(db, randomIds),
    clock: systemClock,
    ids: randomIds,
    view: { baseUrl: x.stack.url, chainName: x.stack.config.chain.name, sourceChainNames: new Map() },
  });
  const bridger = createBridger({
    network,
    bridges: createBridgeStore(db),
    burns: createBurnStore(db),
    payments,
    lifecycle,
    transaction,
    fastFeeBps: async () => 1,
    clock: systemClock,
    ids: randomIds,
    log: silentLogger,
    stuckAfterMs: 60_000,
    onBurned: () => {},
    gasProblem: () => null,
    // The test deploys the factory itself (deployFactory, below) before any tick: the chain is ready.
    readiness: { problem: () => null, recheck: () => {} },
  });
  const nonce = () =>
    network.clients.publicClient.getTransactionCount({ address: network.clients.account.address, blockTag: "pending" });
  const { publicClient, walletClient } = network.clients;
  const deployFactory = () => ensureFactoryFor(3, { publicClient, walletClient, nonces: network.nonces });
  return { bridger, nonce, deployFactory };
}

test("a bridger whose lease is gone saves nothing and broadcasts nothing; holding it, the same bridger bridges", async () => {
  const payment = await x.stack.createPayment({ amount: "5.00" });
  const deposit = getAddress(payment.deposit_address) as Address;
  const txHash = await x.sourceTransfer(deposit, usdc("5.00"));
  const receipt = await x.source.publicClient.getTransactionReceipt({ hash: txHash });
  await x.source.publicClient.request({
    method: "anvil_setBalance" as never,
    params: [privateKeyToAccount(staleKey).address, toHex(10n ** 18n)] as never,
  });
  const db = openDb(x.stack.dataDir);
  try {
    // What the server's watcher would have recorded: the transfer credited, a bridge open for it.
    const log = receipt.logs.find((l) => l.address.toLowerCase() === x.source.usdc.toLowerCase())!;
    await createChainStore(db).insertTransfer({
      chain_id: LOCAL_SOURCE.chainId,
      tx_hash: txHash,
      log_index: log.logIndex!,
      payment_id: payment.id,
      from_address: x.source.payer,
      amount: usdc("5.00"),
      block_number: Number(receipt.blockNumber),
      block_hash: receipt.blockHash,
      credited_at: Date.now(),
      created_at: Date.now(),
    });
    const bridge = await createBridgeStore(db).create({
      id: randomIds.prefixed("brg"),
      payment_id: payment.id,
      chain_id: LOCAL_SOURCE.chainId,
      now: Date.now(),
    });

    // The server holds the chain lease; this replica's term (token 1 as "stale") is over.
    const leases = createLeaseStore(db);
    const stale = bridgerBeside(
      (fn) =>
        db.transaction(async () => {
          if (!(await leases.holds(CHAIN_LEASE, "stale-replica", 1))) throw new LeaseLostError(CHAIN_LEASE);
          return fn();
        }),
      db,
    );
    // The server never reached this chain: the payment's factory is made sure of first, so no deployment
    // moves the nonce read next.
    await stale.deployFactory();
    const before = await stale.nonce();
    await expect(stale.bridger.tick()).rejects.toBeInstanceOf(LeaseLostError);
    expect(await stale.nonce()).toBe(before);
    expect(await bridgedOnSource(x, payment.id)).toEqual([]);
    const [row] = await x.stack.sql<{ tx_hash: string | null; state: string }>(
      "SELECT tx_hash, state FROM bridges WHERE id = ?",
      bridge.id,
    );
    expect(row).toEqual({ tx_hash: null, state: "credited" });

    // The control: the same rig with its writes allowed does send, so the silence above is the fence's.
    const holder = bridgerBeside((fn) => db.transaction(fn), db);
    await holder.bridger.tick();
    expect(await holder.nonce()).toBe(before + 1);
  } finally {
    await db.close();
  }
}, 60_000);
