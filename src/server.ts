import { createAccounts } from "./accounts/index.ts";
import { createApp } from "./app.ts";
import { createChainSide, openChainRecords } from "./chain/index.ts";
import { createCheckout } from "./checkout/index.ts";
import type { Config } from "./config.ts";
import { appContext } from "./context.ts";
import { createGroupCommit } from "./db/group-commit.ts";
import type { Db } from "./db/index.ts";
import { describeStore, openServeStore } from "./db/open.ts";
import { createDocuments } from "./documents/index.ts";
import { createEmail, type EmailOptions } from "./email/index.ts";
import { createEvents, type EventOptions } from "./events/index.ts";
import { createIdempotency } from "./idempotency/index.ts";
import { systemClock } from "./lib/clock.ts";
import { withinDeadline } from "./lib/deadline.ts";
import { randomIds } from "./lib/ids.ts";
import { hostPort, listenError } from "./lib/listen.ts";
import { createLogger } from "./lib/log.ts";
import type { Plumbing } from "./lib/plumbing.ts";
import { replicaName } from "./lib/replica.ts";
import { createOps, type Ops } from "./ops/index.ts";
import { createPaymentLinks } from "./payment-links/index.ts";
import { createPayments } from "./payments/index.ts";
import { createRateLimits } from "./rate-limits/index.ts";
import { createRefunds } from "./refunds/index.ts";
import { createUsers } from "./users/index.ts";
import { createWebhooks, type WebhookOptions } from "./webhooks/index.ts";
import { createX402 } from "./x402/index.ts";

/** What tests change; `stablegate serve` takes the defaults. */
export type ServerOptions = WebhookOptions &
  EventOptions &
  EmailOptions &
  Partial<Pick<Plumbing, "clock" | "ids" | "log">>;

/** SIGTERM to exit, at most: Docker kills after 10 s, systemd after 90. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

export interface RunningServer {
  url: string;
  db: Db;
  /** Every registered route, so tests can check their tables of routes are complete. */
  routes: Array<{ method: string; path: string }>;
  /** Rounds the time-driven loops have completed (and webhook sends in flight): tests wait on these, not on sleeps. */
  activity(): {
    expiryRounds: number;
    webhookRounds: number;
    webhookSending: number;
    redeemerRounds: number;
    /** Rounds of the settlement chain's watcher. */
    watcherRounds: number;
    /** Event streams open now (GET /api/v1/events/stream). */
    eventStreams: number;
    recovererRounds: number;
    /** Rounds of the email worker, and emails being sent now. */
    emailRounds: number;
    emailSending: number;
    /** Rounds of the x402 facilitator's follower. */
    x402Rounds: number;
  };
  stop(): Promise<void>;
}

/**
 * Every capability, each built by its own factory (its folder's index.ts) from the shared
 * plumbing, the validated config (each takes its slice) and the capabilities it uses, in the
 * order they need each other. Nothing else is built here.
 */
async function createCapabilities(config: Config, plumbing: Plumbing, options: ServerOptions) {
  const accounts = await createAccounts({ ...plumbing, config });
  const events = createEvents({ ...plumbing, config, options });
  // The metrics read every capability, so they come last; a failed send is counted once they exist.
  const onFailedAttempt = (endpointId: string) => ops.metrics.webhookFailed(endpointId);
  // Email comes after the chain side (it reads the relayer's gas); what it queues on a new payment
  // or a disabled endpoint is handed over once it exists, as the metrics are.
  const onEndpointDisabled: Parameters<typeof createWebhooks>[0]["onEndpointDisabled"] = (endpoint, now) =>
    email.endpointDisabled(endpoint, now);
  const webhooks = createWebhooks({ ...plumbing, config, events, options, onFailedAttempt, onEndpointDisabled });
  const records = openChainRecords(plumbing.db, config);
  const onCreated: Parameters<typeof createPayments>[0]["onCreated"] = {
    applies: (row) => email.sendsOnCreate(row),
    run: (row) => email.paymentCreated(row),
  };
  const payments = createPayments({
    ...plumbing,
    config,
    events,
    records,
    accounts,
    deliveries: webhooks.deliveries,
    onCreated,
  });
  const { store, lifecycle, service, view } = payments;
  const refunds = await createRefunds({ ...plumbing, config, events, payments: store, chain: records.stores.chain });
  const documents = createDocuments({
    ...plumbing,
    config,
    accounts,
    payments: store,
    lifecycle,
    events: events.store,
  });
  const stores = { ...records.stores, payments: store };
  const chainSide = createChainSide({ ...plumbing, config, stores, lifecycle, payments: service, refunds });
  const burnsOf = records.crossChain?.burnsOf;
  const email = createEmail({
    ...plumbing,
    config,
    events,
    accounts,
    options,
    payment: async (id) => (await store.findById(id)) ?? null,
    chains: () => chainSide.api.chains(),
    documents: documents.forEmail,
  });
  const checkout = createCheckout({
    accounts,
    legalName: documents.business.legalName,
    lifecycle,
    chain: chainSide.chain,
    burnsOf,
    authorizations: chainSide.authorizations,
    clock: plumbing.clock,
    view,
  });
  const idempotency = createIdempotency(plumbing.db, plumbing.clock);
  const rateLimits = createRateLimits({ ...plumbing, config });
  const paymentLinks = await createPaymentLinks({ ...plumbing, payments: service, accounts, idempotency });
  const users = createUsers({ ...plumbing, accounts });
  const ops = createOps({ ...plumbing, config, payments, webhooks, chainSide, events, idempotency, rateLimits });
  const x402 = createX402({
    ...plumbing,
    config,
    authorizations: chainSide.authorizations,
    payments,
    accountOf: (id) => accounts.findAccount(id),
    relayer: () => chainSide.chain.clients.account.address,
    chain: { client: chainSide.chain.clients.publicClient, depth: chainSide.chain.depth },
  });
  return {
    accounts,
    users,
    payments,
    paymentLinks,
    refunds,
    documents,
    webhooks,
    events,
    idempotency,
    checkout,
    chainSide,
    rateLimits,
    email,
    ops,
    x402,
  };
}

/** Opens the store, assembles the capabilities and the app, listens, and starts the loops side by side. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  const { db, release } = await openServeStore(config);
  let built: Awaited<ReturnType<typeof createCapabilities>>;
  let app: ReturnType<typeof createApp>;
  let metricsServer: ReturnType<Ops["listen"]>;
  try {
    const { clock = systemClock, ids = randomIds } = options;
    const plumbing = { db, clock, ids, log, groupCommit: createGroupCommit(db), replica: replicaName(config.dataDir) };
    built = await createCapabilities(config, plumbing, options);
    app = createApp(appContext({ ...plumbing, config, ...built }), db);
    try {
      app.listen({ hostname: config.host, port: config.port });
    } catch (error) {
      throw listenError(error, config.host, config.port, { host: "STABLEGATE_HOST", port: "STABLEGATE_PORT" });
    }
    try {
      metricsServer = built.ops.listen();
    } catch (error) {
      await app.stop();
      throw error;
    }
  } catch (error) {
    // What a failed start-up must undo, so the next attempt finds the directory free.
    await db.close();
    release();
    throw error;
  }
  const server = app.server!;
  log.info("listening", {
    address: hostPort(config.host, server.port!),
    base_url: config.baseUrl,
    chain: config.chain.name,
    data_dir: config.dataDir,
    store: describeStore(config),
  });
  built.ops.announce();
  const { chainSide, payments, ops, webhooks, events, email, x402 } = built;
  // Each capability's loops, side by side; all stop when `abort` fires.
  const abort = new AbortController();
  const loops = Promise.all(
    [chainSide, payments, ops, webhooks, events, email, x402].map((part) => part.run(abort.signal)),
  );

  return {
    // Where this process can reach itself; the log names what is bound.
    url: `http://${server.hostname === "0.0.0.0" ? "127.0.0.1" : server.hostname}:${server.port}`,
    db,
    routes: app.routes.map(({ method, path }) => ({ method, path })),
    activity: () => ({
      ...payments.activity(),
      ...webhooks.activity(),
      ...chainSide.activity(),
      ...events.activity(),
      ...email.activity(),
      ...x402.activity(),
    }),
    async stop() {
      abort.abort();
      // Scrapes end first: they read the database the shutdown is about to close.
      await metricsServer?.stop(true);
      // Open event streams would hold app.stop() until the deadline: they end now, cleanly.
      events.feed.closeAll();
      const outcome = await withinDeadline(Promise.all([app.stop(), loops]), SHUTDOWN_DEADLINE_MS);
      // A loop still stuck past the deadline (in an RPC call, say) then fails on the closed database;
      // aborted, it ends there.
      if (outcome === "late")
        log.warn("shutdown deadline reached; stopping with work still in flight", {
          deadline_ms: SHUTDOWN_DEADLINE_MS,
        });
      await db.close();
      release();
    },
  };
}
