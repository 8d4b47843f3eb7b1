import { createAccountStore } from "./accounts/store.ts";
import { createAccountsService } from "./accounts/service.ts";
import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { noCrossChain } from "./crosschain/disabled.ts";
import { type Db, openDb } from "./db/index.ts";
import type { ChainApi } from "./http/context.ts";
import { createIdempotency } from "./idempotency/index.ts";
import { type Clock, systemClock } from "./lib/clock.ts";
import { HttpError } from "./lib/errors.ts";
import { type IdGenerator, randomIds } from "./lib/ids.ts";
import { type Logger, createLogger } from "./lib/log.ts";
import { createPaymentsService } from "./payments/service.ts";
import { createPaymentStore } from "./payments/store.ts";
import { createWebhookEndpointsService } from "./webhooks/endpoints.ts";
import { createWebhookStore } from "./webhooks/store.ts";
import type { Resolver } from "./webhooks/url-guard.ts";

export interface ServerOptions {
  clock?: Clock;
  ids?: IdGenerator;
  log?: Logger;
  /** DNS for webhook URL checks; tests inject one. */
  resolve?: Resolver;
}

export interface RunningServer {
  url: string;
  db: Db;
  stop(): Promise<void>;
}

/** Wires the store, services, loops and HTTP app from one validated config, then listens. */
export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const log = options.log ?? createLogger(config.logLevel);
  const db = openDb(config.dataDir);

  const accountStore = createAccountStore(db);
  if (!config.feeRecipient && accountStore.countAccountsWithFee() > 0) {
    db.close();
    throw new Error("STABLEGATE_FEE_RECIPIENT: required because some accounts charge a fee");
  }
  if (config.webhookAllowPrivate) {
    log.warn("STABLEGATE_WEBHOOK_ALLOW_PRIVATE is on: webhook URLs may be http and point at private addresses; never use this in production");
  }

  const accounts = createAccountsService({ store: accountStore, clock, ids });
  const payments = createPaymentsService({
    store: createPaymentStore(db),
    clock,
    ids,
    chainId: config.chain.chainId,
    usdc: config.chain.usdc,
    defaultFeeBps: config.feeBps,
    feeRecipient: config.feeRecipient,
    paymentWindowMs: config.paymentWindowMs,
  });
  const chain: ChainApi = {
    sync: async () => {
      throw new HttpError(503, "the chain watcher is not running");
    },
    readiness: async () => ({ ok: false, state: "not started" }),
  };

  const app = createApp(
    {
      config,
      log,
      clock,
      accounts,
      payments,
      webhookEndpoints: createWebhookEndpointsService({
        store: createWebhookStore(db),
        clock,
        ids,
        log,
        allowPrivate: config.webhookAllowPrivate,
        resolve: options.resolve,
      }),
      idempotency: createIdempotency(db, clock),
      view: { baseUrl: config.baseUrl, chainName: config.chain.name },
      publicExtras: (row) => ({ merchantName: accounts.findAccount(row.account_id)?.name ?? "", incoming: [], crossChain: [] }),
      chain,
      crossChain: noCrossChain,
    },
    db,
  );
  app.listen({ hostname: config.host, port: config.port });
  const server = app.server!;
  const url = `http://${server.hostname === "0.0.0.0" ? "127.0.0.1" : server.hostname}:${server.port}`;
  log.info("listening", { url, base_url: config.baseUrl, chain: config.chain.name, data_dir: config.dataDir });

  return {
    url,
    db,
    async stop() {
      await app.stop();
      db.close();
    },
  };
}
