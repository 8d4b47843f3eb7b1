import { refunds } from "./refunds.ts";
import { deliveries, events, paymentLinks, payments, webhookEndpoints } from "./resources.ts";
import { type ClientOptions, Transport } from "./transport.ts";

/**
 * The Stablegate merchant API:
 *
 *   const stablegate = new Stablegate({ apiKey: process.env.STABLEGATE_KEY!, baseUrl: "https://pay.example.com" });
 *   const payment = await stablegate.payments.create({ amount: "25.00" }, { idempotencyKey: "order-1042" });
 */
export class Stablegate {
  readonly payments: ReturnType<typeof payments>;
  readonly refunds: ReturnType<typeof refunds>;
  readonly paymentLinks: ReturnType<typeof paymentLinks>;
  readonly webhookEndpoints: ReturnType<typeof webhookEndpoints>;
  readonly deliveries: ReturnType<typeof deliveries>;
  readonly events: ReturnType<typeof events>;

  constructor(options: ClientOptions) {
    const http = new Transport(options);
    this.payments = payments(http);
    this.refunds = refunds(http);
    this.paymentLinks = paymentLinks(http);
    this.webhookEndpoints = webhookEndpoints(http);
    this.deliveries = deliveries(http);
    this.events = events(http);
  }
}
