import type { Account } from "../accounts/service.ts";
import type { EventStore } from "../events/store.ts";
import { type Clock, isoMillis } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { AttemptRow, DeliveryStore, ListedDelivery } from "./delivery-store.ts";
import type { WebhookStore } from "./store.ts";

export interface DeliveriesDeps {
  deliveries: DeliveryStore;
  endpoints: WebhookStore;
  events: EventStore;
  clock: Clock;
  ids: IdGenerator;
  /** Tells the delivery worker there is something to send now. */
  wake: () => void;
}

export type DeliveriesService = ReturnType<typeof createDeliveriesService>;

/** What a merchant can see and do about deliveries to one of their endpoints. */
export function createDeliveriesService(deps: DeliveriesDeps) {
  const { deliveries, endpoints, events, clock, ids } = deps;

  async function endpointOf(account: Account, endpointId: string) {
    const endpoint = await endpoints.findEndpoint(endpointId, account.id);
    if (!endpoint) throw new NotFoundError(`no webhook endpoint ${endpointId}`);
    return endpoint;
  }

  async function view(row: ListedDelivery) {
    const attempts = await deliveries.attempts(row.id);
    return {
      id: row.id,
      object: "webhook_delivery",
      endpoint_id: row.endpoint_id,
      event_id: row.event_id,
      event_type: row.event_type,
      payment_id: row.payment_id,
      status: row.state,
      attempt_count: row.attempts,
      next_attempt_at: row.state === "pending" ? isoMillis(row.next_attempt_at) : null,
      created_at: isoMillis(row.created_at),
      attempts: attempts.map((a: AttemptRow) => ({
        attempted_at: isoMillis(a.attempted_at),
        response_status: a.response_status,
        error: a.error,
        duration_ms: a.duration_ms,
        next_retry_at: isoMillis(a.next_retry_at),
      })),
    };
  }

  return {
    async list(account: Account, endpointId: string, startingAfter: string | null, limit: number) {
      await endpointOf(account, endpointId);
      const rows = await deliveries.list(endpointId, startingAfter, limit);
      if (rows === null) throw new ValidationError(`starting_after: no delivery ${startingAfter}`);
      const data = [];
      for (const row of rows.slice(0, limit)) data.push(await view(row));
      return { object: "list", data, has_more: rows.length > limit };
    },

    /**
     * Every delivery of a payment's events, oldest first, each with its attempts (newest first)
     * and the endpoint it goes to: what the dashboard's payment page shows.
     */
    async forPayment(account: Account, paymentId: string) {
      const shown = [];
      for (const row of await deliveries.listForPayment(paymentId, account.id))
        shown.push({ ...(await view(row)), endpoint_url: row.endpoint_url });
      return shown;
    },

    /**
     * Sends a delivery again now, whatever its state; its webhook-id stays the same. `admit`
     * runs once the request is known to be valid and may refuse it (the HTTP layer's limit).
     */
    async retry(
      account: Account,
      endpointId: string,
      deliveryId: string,
      admit: () => Promise<void> | void = () => {},
    ) {
      const endpoint = await endpointOf(account, endpointId);
      if (endpoint.disabled_at !== null)
        throw new ValidationError(
          "this endpoint was disabled after answering 410 Gone; register it again to receive webhooks",
        );
      const delivery = await deliveries.find(deliveryId, endpointId);
      if (!delivery) throw new NotFoundError(`no delivery ${deliveryId}`);
      await admit();
      // Purged meanwhile (it finished long ago): as unknown as if the purge had come first.
      if ((await deliveries.requeue(deliveryId, clock.now())) === 0)
        throw new NotFoundError(`no delivery ${deliveryId}`);
      // Read before the worker is woken: the answer shows the delivery as queued, not as the worker
      // may already have sent it.
      const queued = await view((await deliveries.find(deliveryId, endpointId))!);
      deps.wake();
      return queued;
    },

    /** A signed `test` event to this endpoint only, to check the receiver end to end; `admit` as for retry. */
    async sendTest(account: Account, endpointId: string, admit: () => Promise<void> | void = () => {}) {
      const endpoint = await endpointOf(account, endpointId);
      if (endpoint.disabled_at !== null)
        throw new ValidationError(
          "this endpoint was disabled after answering 410 Gone; register it again to receive webhooks",
        );
      await admit();
      const now = clock.now();
      const eventId = ids.prefixed("evt");
      const deliveryId = ids.prefixed("whd");
      const payload = JSON.stringify({
        id: eventId,
        object: "event",
        type: "test",
        created_at: isoMillis(now),
        data: { message: "A test event from Stablegate. If you can read this, your endpoint works." },
      });
      await endpoints.transaction(async () => {
        await events.insertUnrouted({
          id: eventId,
          account_id: account.id,
          type: "test",
          payment_id: null,
          payload,
          created_at: now,
        });
        await deliveries.insertOne({
          id: deliveryId,
          event_id: eventId,
          endpoint_id: endpointId,
          account_id: account.id,
          now,
        });
      });
      // Read before the worker is woken, as for retry.
      const queued = await view((await deliveries.find(deliveryId, endpointId))!);
      deps.wake();
      return { event_id: eventId, delivery: queued };
    },
  };
}
