import type { AccountsService } from "./accounts/service.ts";
import type { ChainApi } from "./chain/api.ts";
import type { Authorizations } from "./chain/authorizations/types.ts";
import type { ChainSide } from "./chain/index.ts";
import type { RecoveriesService } from "./chain/recovering/service.ts";
import type { CrossChainApi } from "./chain/redeeming/api.ts";
import type { Gasless } from "./checkout/gasless.ts";
import type { Checkout } from "./checkout/index.ts";
import type { Networks } from "./checkout/networks.ts";
import type { PublicExtras } from "./checkout/public-view.ts";
import type { Config } from "./config.ts";
import type { BusinessService } from "./documents/business.ts";
import type { Documents } from "./documents/index.ts";
import type { DocumentsService } from "./documents/service.ts";
import type { Email } from "./email/index.ts";
import type { EmailService } from "./email/service.ts";
import type { EventFeed } from "./events/feed.ts";
import type { Events } from "./events/index.ts";
import type { EventsService } from "./events/service.ts";
import type { Idempotency } from "./idempotency/index.ts";
import type { LeaseStatus } from "./leases/lease.ts";
import type { Clock } from "./lib/clock.ts";
import type { Logger } from "./lib/log.ts";
import type { Ops } from "./ops/index.ts";
import type { Metrics } from "./ops/metrics.ts";
import type { PaymentLinksService } from "./payment-links/service.ts";
import type { PaymentDetails } from "./payments/detail.ts";
import type { Payments } from "./payments/index.ts";
import type { PaymentSearch } from "./payments/search.ts";
import type { PaymentsService } from "./payments/service.ts";
import type { PaymentRow } from "./payments/store.ts";
import type { ViewContext } from "./payments/view.ts";
import type { RateLimit, RateLimiter, RateLimits } from "./rate-limits/index.ts";
import type { RefundsService } from "./refunds/service.ts";
import type { UsersService } from "./users/service.ts";
import type { DeliveriesService } from "./webhooks/deliveries.ts";
import type { WebhookEndpointsService } from "./webhooks/endpoints.ts";
import type { Webhooks } from "./webhooks/index.ts";
import type { X402 } from "./x402/index.ts";

/**
 * The assembled application as its routes see it: each capability's services, built once by
 * src/server.ts from the capabilities' factories and handed to createApp (src/app.ts). It lives
 * beside the assembly, not in src/http/: it names every capability, where HTTP plumbing names none.
 */
export interface AppContext {
  config: Config;
  log: Logger;
  clock: Clock;
  accounts: AccountsService;
  /** Dashboard users and their sign-in sessions. */
  users: UsersService;
  payments: PaymentsService;
  paymentLinks: PaymentLinksService;
  /** Refunds the merchant pays from their own wallet, and the payer's claim links. */
  refunds: RefundsService;
  /** Each payment's invoice and receipt, as data for the pages and PDFs. */
  documents: DocumentsService;
  /** The account's business details and logo, printed on its documents. */
  business: BusinessService;
  /** The dashboard's lists, searches, home figures and the CSV export. */
  paymentSearch: PaymentSearch;
  /** One payment with everything about it, for the dashboard's payment page. */
  paymentDetails: PaymentDetails;
  webhookEndpoints: WebhookEndpointsService;
  deliveries: DeliveriesService;
  events: EventsService;
  /** Wakes the open event streams when an event is written. */
  eventFeed: EventFeed;
  idempotency: Idempotency;
  view: ViewContext;
  /** The merchant payment object as JSON text (with its transfers), as webhooks carry it too. */
  renderPayment: (row: PaymentRow) => Promise<string>;
  /** GET /api/v1/payments/:id for an Authorization header: the key checked, then the payment's JSON. */
  retrievePayment: (authorization: string | null, id: string) => Promise<string>;
  /** The same for a payment created a moment ago, which has nothing on chain yet. */
  renderNewPayment: (row: PaymentRow) => string;
  /** What the public view adds to a payment row: merchant name, incoming transfers, burns. */
  publicExtras: (row: PaymentRow) => Promise<PublicExtras>;
  /** Where a payer may send USDC for this payment, the settlement chain first. */
  networks: (row: PaymentRow) => Networks;
  chain: ChainApi;
  crossChain: CrossChainApi;
  /** Gasless payments (EIP-3009 authorizations the relayer submits), for x402 and the facilitator. */
  authorizations: Authorizations;
  /** The checkout's "pay without gas": the offer and the posted authorization, per payment. */
  gasless: Gasless;
  /** Returns tokens or native coin sent to a deposit address by mistake. */
  recoveries: RecoveriesService;
  /** Per-payment limits on the public endpoints, per-endpoint ones on webhook test and retry. */
  rateLimiter: RateLimiter;
  webhookLimits: { test: RateLimit; retry: RateLimit };
  /** The Prometheus figures: HTTP counted by app.ts's hooks, the rest read at scrape time. */
  metrics: Metrics;
  /** The leases of work one replica at a time does, and whether this replica holds each (/readyz). */
  leases: () => LeaseStatus[];
  /** Email settings, health (/readyz, the settings page) and the test email. */
  email: EmailService;
  /** Every payment payable over x402, and the facilitator of the merchant's own x402 resources. */
  x402: Pick<X402, "pay" | "facilitator">;
}

/** The context drawn from the built capabilities, each part under the name the routes know it by. */
export function appContext(c: {
  config: Config;
  log: Logger;
  clock: Clock;
  accounts: AccountsService;
  users: UsersService;
  payments: Payments;
  paymentLinks: PaymentLinksService;
  refunds: RefundsService;
  documents: Documents;
  webhooks: Webhooks;
  events: Events;
  idempotency: Idempotency;
  checkout: Checkout;
  chainSide: ChainSide;
  rateLimits: RateLimits;
  email: Email;
  ops: Ops;
  x402: X402;
}): AppContext {
  const { payments, webhooks, chainSide } = c;
  return {
    config: c.config,
    log: c.log,
    clock: c.clock,
    accounts: c.accounts,
    users: c.users,
    payments: payments.service,
    paymentLinks: c.paymentLinks,
    refunds: c.refunds,
    documents: c.documents.documents,
    business: c.documents.business,
    paymentSearch: payments.search,
    paymentDetails: payments.details,
    webhookEndpoints: webhooks.endpoints,
    deliveries: webhooks.deliveries,
    events: c.events.service,
    eventFeed: c.events.feed,
    idempotency: c.idempotency,
    view: payments.view,
    renderPayment: payments.lifecycle.paymentJson,
    retrievePayment: payments.retrieve,
    renderNewPayment: payments.lifecycle.newPaymentJson,
    publicExtras: c.checkout.publicExtras,
    networks: c.checkout.networks,
    chain: chainSide.api,
    crossChain: chainSide.crossChainApi,
    recoveries: chainSide.recoveries,
    authorizations: chainSide.authorizations,
    gasless: c.checkout.gasless,
    rateLimiter: c.rateLimits.limiter,
    webhookLimits: webhooks.limits,
    metrics: c.ops.metrics,
    leases: chainSide.leases,
    email: c.email.service,
    x402: c.x402,
  };
}
