import type { Account } from "../accounts/service.ts";
import { type Clock, isoMillis } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import type { IdGenerator } from "../lib/ids.ts";
import type { Logger } from "../lib/log.ts";
import type { WebhookEndpointRow, WebhookStore } from "./store.ts";
import { checkWebhookUrl, type Resolver } from "./url-guard.ts";

export const MAX_ENDPOINTS_PER_ACCOUNT = 16;
export const MAX_URL_LENGTH = 2048;
export const URL_RULE = `must be an https URL of at most ${MAX_URL_LENGTH} characters`;

export interface WebhookEndpointsDeps {
  store: WebhookStore;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  allowPrivate: boolean;
  resolve?: Resolver;
  /** Runs in the deleting transaction (the delivery queue cancels the endpoint's pending sends). */
  onDeleted?: (endpointId: string, now: number) => Promise<unknown>;
}

export type WebhookEndpointsService = ReturnType<typeof createWebhookEndpointsService>;

export function createWebhookEndpointsService(deps: WebhookEndpointsDeps) {
  const { store, clock, ids } = deps;
  return {
    /** Registers an endpoint after checking its URL; the secret is in this answer only. */
    async create(
      account: Account,
      rawUrl: string,
      inTransaction?: (created: CreatedEndpoint) => unknown,
    ): Promise<CreatedEndpoint> {
      // The API's schema refuses a longer one first; this holds for every other caller (the dashboard).
      if (rawUrl.length > MAX_URL_LENGTH) throw new ValidationError(`url ${URL_RULE}`);
      const { url } = await checkWebhookUrl(rawUrl, { resolve: deps.resolve, allowPrivate: deps.allowPrivate });
      const row = {
        id: ids.prefixed("we"),
        account_id: account.id,
        url: url.href,
        secret: ids.webhookSecret(),
        created_at: clock.now(),
      };
      const created = { ...publicEndpoint({ ...row, disabled_at: null, deleted_at: null }), secret: row.secret };
      // The URL was checked (DNS) before: a transaction holds no network call.
      await store.transaction(async () => {
        await store.lockAccount(account.id);
        if ((await store.countEndpoints(account.id)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
          throw new ValidationError(
            `an account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first`,
          );
        }
        await store.insertEndpoint(row);
        await inTransaction?.(created);
      });
      return created;
    },

    async list(account: Account) {
      return { object: "list", data: (await store.listEndpoints(account.id)).map(publicEndpoint), has_more: false };
    },

    /** One of the account's live endpoints (another account's is as unknown as a missing one). */
    async retrieve(account: Account, id: string) {
      const row = await store.findEndpoint(id, account.id);
      if (!row) throw new NotFoundError(`no webhook endpoint ${id}`);
      return publicEndpoint(row);
    },

    /** Deleting an endpoint cancels whatever was still to be sent to it. */
    async delete(account: Account, id: string) {
      const deleted = await store.transaction(async () => {
        const now = clock.now();
        if (!(await store.deleteEndpoint(id, account.id, now))) return false;
        await deps.onDeleted?.(id, now);
        return true;
      });
      if (!deleted) throw new NotFoundError(`no webhook endpoint ${id}`);
      return { id, object: "webhook_endpoint", deleted: true };
    },
  };
}

type CreatedEndpoint = ReturnType<typeof publicEndpoint> & { secret: string };

function publicEndpoint(row: WebhookEndpointRow) {
  return {
    id: row.id,
    object: "webhook_endpoint",
    url: row.url,
    status: row.disabled_at === null ? "enabled" : "disabled",
    created_at: isoMillis(row.created_at),
  };
}
