import type { Hex } from "viem";
import type { Db } from "../db/index.ts";
import { INT64_MAX } from "../db/int64.ts";
import type { Clock } from "../lib/clock.ts";
import { UnavailableError, UnprocessableError, ValidationError } from "../lib/errors.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { Logger } from "../lib/log.ts";
import { formatExact } from "../lib/money.ts";
import type { Lifecycle } from "../payments/lifecycle.ts";
import type { PaymentRow, PaymentStore } from "../payments/store.ts";
import type { ChainApi } from "./api.ts";
import { createOwnMints } from "./bridging/mints.ts";
import type { BridgeStore } from "./bridging/store.ts";
import { createChainClients } from "./client.ts";
import type { ChainSideConfig } from "./config.ts";
import { bridgesFromSources } from "./deposit-terms.ts";
import { createNonceManager } from "./nonces.ts";
import type { BurnStore } from "./redeeming/store.ts";
import { loadRelayerKey } from "./relayer.ts";
import { createRelayerGas } from "./relayer-gas.ts";
import { errorMessage } from "./rpc-errors.ts";
import { createSettler } from "./settling/settler.ts";
import { createSourceNetworks } from "./source-networks.ts";
import type { ChainStore } from "./store.ts";
import { createDepthReader } from "./watching/depth.ts";
import { createLedger } from "./watching/ledger.ts";
import { chainReadiness, type WatchedChain } from "./watching/readiness.ts";
import type { RefundPayouts } from "./watching/refund-matches.ts";
import { createSourceReadiness, type SourceReadiness } from "./watching/source-readiness.ts";
import { createWatcher, type Watcher } from "./watching/watcher.ts";

export interface ChainDeps {
  config: ChainSideConfig;
  db: Db;
  chainStore: ChainStore;
  payments: PaymentStore;
  lifecycle: Lifecycle;
  clock: Clock;
  log: Logger;
  /** Nonces the relayer signed elsewhere (cross-chain redemptions). */
  highestOtherNonce?: () => Promise<number | null>;
  /** The highest relayer nonce stored for a transaction on a source chain (see createSourceNetworks). */
  highestStoredOn?: (chainId: number) => Promise<number | null>;
  /** Bridges from source chains (when they are enabled): their mints are recognised, their funds gate settlement. */
  bridges?: BridgeStore;
  /** With `bridges`: burns posted to the public endpoint, which a mint of the address's own burn may answer. */
  burns?: BurnStore;
  ids: IdGenerator;
  /**
   * Runs a write only the chain lease's holder may make (a cursor move, a settlement recorded
   * before it is sent) in one transaction with the check that this replica still holds it.
   */
  fenced?: <T>(write: () => Promise<T>) => Promise<T>;
  /** Refunds, paid on the settlement chain: its watcher matches their transfers. */
  refunds?: RefundPayouts;
}

/**
 * The on-chain side: a watcher per enabled chain that credits deposits (the settlement chain's
 * and each source chain's, each on its own loop) and the settler that pays merchants.
 */
export function createChain(deps: ChainDeps) {
  const { config, chainStore, payments, lifecycle, clock, log } = deps;
  const relayerKey = loadRelayerKey(config.dataDir, config.relayerKey);
  const clients = createChainClients(config.chain, relayerKey);
  const sources = createSourceNetworks(
    config.crossChain?.sources ?? [],
    relayerKey,
    deps.highestStoredOn ?? (async () => null),
  );
  const crossChain = config.crossChain;
  /** Each source chain's deposit factories and Circle's contracts there, as last seen, by chain id. */
  const readiness = new Map<number, SourceReadiness>(
    [...sources.values()].map((network) => [
      network.source.chainId,
      createSourceReadiness({
        network,
        settlement: { name: config.chain.name, domain: crossChain!.domain, usdc: config.chain.usdc },
        tokenMessenger: crossChain!.tokenMessenger,
        maxBridgeFeeBps: crossChain!.maxBridgeFeeBps,
        clock,
        log,
      }),
    ]),
  );
  const ledger = createLedger({ chain: chainStore, payments, lifecycle, clock, log });
  const nonces = createNonceManager(clients.publicClient, clients.account.address, async () => {
    const stored = [await chainStore.maxNonce(), (await deps.highestOtherNonce?.()) ?? null].filter(
      (n): n is number => n !== null,
    );
    return stored.length ? Math.max(...stored) : null;
  });
  const stuckAfterMs = Math.max(30_000, config.chain.pollIntervalMs * 10);
  const depthOn = (name: string, client: typeof clients.publicClient, confirmations: number) =>
    createDepthReader({ client, confirmations, finalTag: config.finalTag, log, name });
  // One reader for the settlement chain: its watcher and the settler see the same head.
  const depth = depthOn(config.chain.name, clients.publicClient, config.chain.confirmations);
  const { bridges } = deps;
  const ownMints =
    bridges && config.crossChain
      ? createOwnMints({
          client: clients.publicClient,
          messageTransmitter: config.crossChain.messageTransmitter,
          bridges,
          burns: deps.burns!,
          payments,
          lifecycle,
          clock,
          ids: deps.ids,
          log,
          chainOfDomain: (domain) => config.crossChain?.sources.find((s) => s.domain === domain)?.chainId ?? null,
        })
      : undefined;
  const settler = createSettler({
    client: clients.publicClient,
    wallet: clients.walletClient,
    account: clients.account,
    nonces,
    // Every transaction the settler makes records what it sends or saw sent: the holder's alone.
    chain: deps.fenced ? { ...chainStore, transaction: deps.fenced } : chainStore,
    payments,
    lifecycle,
    clock,
    log,
    chainId: config.chain.chainId,
    confirmations: config.chain.confirmations,
    depth,
    stuckAfterMs,
    sweepFloor: config.chain.sweepFloor,
    factoryV2: config.crossChain !== null,
    bridged: bridges && {
      newestMint: bridges.newestMint,
      swept: (paymentId, block) => bridges.markSettled(paymentId, block, clock.now()),
    },
  });
  const watcherDeps = { chain: chainStore, payments, ledger, clock, log, fenced: deps.fenced };
  const watcher = createWatcher({
    ...watcherDeps,
    client: clients.publicClient,
    name: config.chain.name,
    chainId: config.chain.chainId,
    usdc: config.chain.usdc,
    confirmations: config.chain.confirmations,
    depth,
    pollIntervalMs: config.chain.pollIntervalMs,
    onCredited: () => settler.wake(),
    onNewHead: () => settler.wake(),
    ownMints,
    refunds: deps.refunds,
  });
  const gasOn = (name: string, client: typeof clients.publicClient, pollIntervalMs: number) =>
    createRelayerGas({ client, name, relayer: clients.account.address, clock, log, pollIntervalMs });
  const sourceCredited = new Set<(chainId: number) => void>();
  /** Every chain's watcher and relayer gas, the settlement chain's first. */
  const watched: WatchedChain[] = [
    {
      role: "settlement",
      name: config.chain.name,
      watcher,
      gas: gasOn(config.chain.name, clients.publicClient, config.chain.pollIntervalMs),
    },
  ];
  for (const { source, clients: sourceClients } of sources.values()) {
    const ready = readiness.get(source.chainId)!;
    const onSource = createWatcher({
      ...watcherDeps,
      client: sourceClients.publicClient,
      name: source.name,
      chainId: source.chainId,
      usdc: source.usdc,
      confirmations: source.confirmations,
      depth: depthOn(source.name, sourceClients.publicClient, source.confirmations),
      pollIntervalMs: source.pollIntervalMs,
      onCredited: () => {
        for (const listener of sourceCredited) listener(source.chainId);
      },
      ready: ready.isReady,
    });
    const gas = gasOn(source.name, sourceClients.publicClient, source.pollIntervalMs);
    watched.push({ role: "source", name: source.name, watcher: onSource, gas, readiness: ready });
  }
  const watchers = new Map(watched.map((w) => [w.name, w.watcher]));
  const watchedOn = (chainId: number) => watched.find((w) => w.watcher.chainId === chainId);
  const watcherOn = (chainId: number) => watchedOn(chainId)?.watcher;
  log.info("relayer", { address: clients.account.address });

  /** The watcher of the chain a payer names; the settlement chain's when none is named. */
  function watcherNamed(name: string | undefined): Watcher {
    const found = watchers.get(name ?? config.chain.name);
    if (!found) throw new ValidationError(`chain must be one of ${[...watchers.keys()].join(", ")}`);
    return found;
  }

  const api: ChainApi = {
    async sync(row: PaymentRow, txHash: Hex, chainName?: string) {
      const on = watcherNamed(chainName);
      if (on !== watcher && !bridgesFromSources(row))
        throw new UnprocessableError(
          `this payment's deposit address is valid only on ${config.chain.name}; ` +
            `funds sent to it on ${chainName} are not credited`,
        );
      const notReady = on === watcher ? null : readiness.get(on.chainId)!.problem();
      if (notReady) {
        log.info("sync: source chain not ready", { chain: chainName, reason: notReady });
        throw new UnavailableError(
          `the deposit contracts are not on ${chainName} yet, so transfers there are not credited yet; ` +
            "they are once the contracts are there",
          60,
        );
      }
      let outcome: Awaited<ReturnType<typeof watcher.syncTransaction>>;
      try {
        outcome = await on.syncTransaction(row.deposit_address, txHash);
      } catch (error) {
        log.warn("sync: chain unreachable", { chain: chainName ?? config.chain.name, error: errorMessage(error) });
        throw new UnavailableError("the chain cannot be reached right now; try again shortly", 5);
      }
      switch (outcome) {
        case "recorded":
        case "pending":
          return outcome;
        // A hash the node has not seen may still reach it (a payer's wallet can report the hash
        // before its node relays the transaction): accepted, and the watcher credits it if mined.
        case "not_found":
          return "pending";
        case "reverted":
          throw new UnprocessableError(`transaction ${txHash} reverted; no funds moved`);
        case "no_transfer":
          throw new UnprocessableError(`transaction ${txHash} has no USDC transfer to this payment's deposit address`);
        case "too_large":
          throw new UnprocessableError(
            `transaction ${txHash} transfers more than this server can account for ` +
              `(at most ${formatExact(INT64_MAX)} in total per payment); it is not credited`,
          );
      }
    },
    async relayerGas(timeoutMs: number) {
      const address = clients.account.address;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
      try {
        const balanceWei = await Promise.race([clients.publicClient.getBalance({ address }), late]);
        return { address, balanceWei };
      } catch (error) {
        log.debug("relayer balance: chain unreachable", { error: errorMessage(error) });
        return { address, balanceWei: null };
      } finally {
        clearTimeout(timer);
      }
    },
    async readiness() {
      const status = watcher.status();
      const lag = status.head !== null && status.cursor !== null ? Number(status.head - status.cursor) : null;
      return {
        ok: status.lastError === null && status.head !== null,
        chain: config.chain.name,
        chain_id: config.chain.chainId,
        head: status.head?.toString() ?? null,
        scanned_to: status.cursor?.toString() ?? null,
        lag_blocks: lag,
        confirmations: config.chain.confirmations,
        last_error: status.lastError,
        settlement: settler.status(),
      };
    },
    chains: () => watched.map(chainReadiness),
  };

  return {
    api,
    watcher,
    settler,
    clients,
    nonces,
    /** The settlement chain's depth reader, which its watcher and the settler share (docs/speed.md). */
    depth,
    /** The enabled source chains, by chain id: where version 2 deposit addresses are valid too. */
    sources,
    /**
     * Each enabled source chain's readiness, by chain id: `isReady()` while its deposit factories
     * are there (the chain is then offered, watched and bridged from), `problem()` why not, and
     * `recheck()` to look again at once.
     */
    sourceReadiness: readiness as ReadonlyMap<number, SourceReadiness>,
    /** The source chains offered to payers now: those whose deposit factories are there. */
    offeredSources: () => (crossChain?.sources ?? []).filter((s) => readiness.get(s.chainId)?.isReady()),
    /** Every chain's watcher by chain name, the settlement chain's first. */
    watchers: watchers as ReadonlyMap<string, Watcher>,
    /**
     * Why the relayer cannot send on `chainId` now (no gas as last read, or its balance never
     * read), or null: the bridger leaves that chain's bridges waiting with this as last_error.
     */
    gasProblem(chainId: number): string | null {
      // Not `problem() ?? ...`: a null problem (gas is there) must stay null.
      const on = watchedOn(chainId);
      return on ? on.gas.problem() : `chain ${chainId} is not an enabled chain`;
    },
    /** Whether the relayer's last known balance on `chainId` is above zero. */
    gasOk: (chainId: number): boolean => watchedOn(chainId)?.gas.ok() ?? false,
    /** Calls `listener` with the chain id after a source chain's watcher credited transfers (to wake the bridger). */
    onSourceCredited(listener: (chainId: number) => void): void {
      sourceCredited.add(listener);
    },
    /** A relayer transaction unmined for this long is replaced with higher fees. */
    stuckAfterMs,
    /**
     * Starts the loops only the chain lease's holder runs (scanning, settling) from fresh
     * nonces: another replica may have sent from the relayer since this one last did. They stop
     * when `signal` aborts.
     */
    start(signal: AbortSignal): Promise<unknown> {
      nonces.reset();
      for (const { nonces: onSource } of sources.values()) onSource.reset();
      // Now the holder: a missing deposit factory is deployed at the next look, which is now.
      for (const ready of readiness.values()) ready.recheck();
      // Each chain's loop on its own: a source chain's dead RPC never holds up the settlement chain.
      return Promise.all([
        ...watched.map((w) => w.watcher.run(signal)),
        settler.run(signal, config.chain.pollIntervalMs),
      ]);
    },
    /**
     * Starts the loops every replica runs: relayer gas, each source chain's readiness (whose
     * missing factories only the lease's holder deploys), and, while `holding` says this replica
     * does not hold the lease, following each chain's head and the holder's cursor.
     */
    observe(signal: AbortSignal, holding: () => boolean): Promise<unknown> {
      return Promise.all([
        ...watched.flatMap((w) => [w.gas.run(signal), w.watcher.follow(signal, holding)]),
        ...[...readiness.values()].map((r) => r.run(signal, holding)),
      ]);
    },
    /** Blocks on top of a transfer (credited or still waiting) on its own chain, for the payer's page. */
    confirmationsOf(chainId: number, blockNumber: number): number {
      const head = watcherOn(chainId)?.status().head ?? null;
      return head === null ? 0 : Math.max(0, Number(head) - blockNumber);
    },
  };
}
