import type { Account } from "../accounts/service.ts";
import type { AppContext } from "../context.ts";
import { statusOf } from "../http/errors.ts";
import { ConflictError, DomainError, NotFoundError, ValidationError } from "../lib/errors.ts";
import { prefixedIdPattern, randomBase62 } from "../lib/ids.ts";
import { MAX_ENDPOINTS_PER_ACCOUNT } from "../webhooks/endpoints.ts";
import { webhookThrottle } from "../webhooks/routes.ts";
import type { Notice } from "./admin-page.ts";
import { keysBody } from "./keys-page.ts";
import {
  type ActionInput,
  type DashboardRoute,
  type DashboardSession,
  type NavKey,
  type PageInput,
  seeOther,
} from "./kit.ts";
import { dashboardPage, notFoundPage as notFound } from "./layout.ts";
import { endpointBody, webhooksBody } from "./webhooks-page.ts";

/** Deliveries per page of an endpoint's log. */
const DELIVERIES_PER_PAGE = 20;
/** A form's one-time token: a double submit of the same form is answered once (see idempotencyKey). */
const FORM_TOKEN = /^[0-9A-Za-z]{32}$/;

/** The dashboard's webhooks and API keys pages, scoped to the signed-in user's account. */
export function adminRoutes(ctx: AppContext): DashboardRoute[] {
  return [...webhookRoutes(ctx), ...keyRoutes(ctx)];
}

function webhookRoutes(ctx: AppContext): DashboardRoute[] {
  const { webhookEndpoints, deliveries, idempotency } = ctx;
  const back = { href: "/dashboard/webhooks", label: "Back to webhooks" };

  const listPage = async (
    session: DashboardSession,
    account: Account,
    extra: Partial<Parameters<typeof webhooksBody>[0]>,
    status = 200,
  ) =>
    dashboardPage({
      title: "Webhooks",
      session,
      nav: "webhooks",
      status,
      body: webhooksBody({
        session,
        endpoints: (await webhookEndpoints.list(account)).data,
        maxEndpoints: MAX_ENDPOINTS_PER_ACCOUNT,
        formToken: randomBase62(32),
        ...extra,
      }),
    });

  /** One endpoint with a page of its delivery log; throws NotFoundError for another account's id. */
  const endpointPage = async (input: PageInput, account: Account, notice?: Notice, status = 200) => {
    const endpoint = await webhookEndpoints.retrieve(account, input.params.id!);
    const after = input.query.get("starting_after");
    const log = await deliveries.list(account, endpoint.id, after, DELIVERIES_PER_PAGE);
    const last = log.data.at(-1);
    return dashboardPage({
      title: endpoint.url,
      session: input.session,
      nav: "webhooks",
      status,
      body: endpointBody({
        session: input.session,
        endpoint,
        deliveries: log.data,
        olderHref: log.has_more && last ? `/dashboard/webhooks/${endpoint.id}?starting_after=${last.id}` : null,
        paged: after !== null,
        notice: notice ?? sentNotice(input.query),
      }),
    });
  };

  /** Runs a send or a delete on the endpoint, answering a refusal on the endpoint's own page. */
  const onEndpoint =
    (act: (input: ActionInput, account: Account) => Promise<Response>) =>
    async (input: ActionInput): Promise<Response> => {
      const account = await ctx.accounts.findAccount(input.session.accountId);
      if (!account) return notFoundPage(input.session, "webhooks", back);
      try {
        return await act(input, account);
      } catch (error) {
        const refused = refusal(error);
        if (!refused) return notFoundPage(input.session, "webhooks", back);
        const response = await endpointPage(
          { ...input, query: new URLSearchParams() },
          account,
          refused.notice,
          refused.status,
        );
        if (refused.retryAfter) response.headers.set("retry-after", refused.retryAfter);
        return response;
      }
    };

  return [
    {
      method: "GET",
      path: "/dashboard/webhooks",
      handle: async ({ session, query }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "webhooks", back);
        const notice: Notice | undefined = query.has("deleted")
          ? { tone: "ok", text: "Endpoint deleted. Nothing more is sent to it." }
          : undefined;
        return listPage(session, account, { notice });
      },
    },
    {
      method: "POST",
      path: "/dashboard/webhooks",
      handle: async ({ session, form }) => {
        const account = await ctx.accounts.findAccount(session.accountId);
        if (!account) return notFoundPage(session, "webhooks", back);
        const url = (form.get("url") ?? "").trim();
        if (!url)
          return listPage(
            session,
            account,
            { notice: { tone: "bad", text: "url: enter the https URL of your receiver" } },
            400,
          );
        try {
          const result = await idempotency.run(account.id, idempotencyKey("webhook", form), { url }, async (commit) => {
            const created = await webhookEndpoints.create(account, url, (endpoint) =>
              commit(201, JSON.stringify(endpoint)),
            );
            return { status: 201, body: JSON.stringify(created) };
          });
          return await listPage(session, account, { created: JSON.parse(result.body) });
        } catch (error) {
          const refused = refusal(error);
          if (!refused) throw error;
          return listPage(session, account, { notice: refused.notice, url }, refused.status);
        }
      },
    },
    {
      method: "GET",
      path: "/dashboard/webhooks/:id",
      handle: async (input) => {
        const account = await ctx.accounts.findAccount(input.session.accountId);
        if (!account) return notFoundPage(input.session, "webhooks", back);
        try {
          return await endpointPage(input, account);
        } catch (error) {
          const refused = refusal(error);
          if (!refused) return notFoundPage(input.session, "webhooks", back);
          // A bad cursor: the first page, saying what was wrong with the link.
          return endpointPage({ ...input, query: new URLSearchParams() }, account, refused.notice, refused.status);
        }
      },
    },
    {
      method: "POST",
      path: "/dashboard/webhooks/:id/test",
      handle: onEndpoint(async ({ params }, account) => {
        const id = params.id!;
        await deliveries.sendTest(account, id, webhookThrottle(ctx, "test", id));
        return seeOther(`/dashboard/webhooks/${id}?sent=test`);
      }),
    },
    {
      method: "POST",
      path: "/dashboard/webhooks/:id/deliveries/:delivery_id/retry",
      handle: onEndpoint(async ({ params }, account) => {
        const id = params.id!;
        await deliveries.retry(account, id, params.delivery_id!, webhookThrottle(ctx, "retry", id));
        return seeOther(`/dashboard/webhooks/${id}?retried=${encodeURIComponent(params.delivery_id!)}`);
      }),
    },
    {
      method: "POST",
      path: "/dashboard/webhooks/:id/delete",
      handle: onEndpoint(async ({ params, form }, account) => {
        const endpoint = await webhookEndpoints.retrieve(account, params.id!);
        confirmed(form, "tick the box to confirm that nothing more should be sent to this endpoint");
        await webhookEndpoints.delete(account, endpoint.id);
        return seeOther("/dashboard/webhooks?deleted=1");
      }),
    },
  ];
}

function keyRoutes(ctx: AppContext): DashboardRoute[] {
  const { accounts, idempotency } = ctx;
  const back = { href: "/dashboard/keys", label: "Back to API keys" };
  const page = async (session: DashboardSession, extra: Partial<Parameters<typeof keysBody>[0]> = {}, status = 200) =>
    dashboardPage({
      title: "API keys",
      session,
      nav: "keys",
      status,
      body: keysBody({
        session,
        keys: await accounts.listKeys(session.accountId),
        formToken: randomBase62(32),
        ...extra,
      }),
    });

  return [
    {
      method: "GET",
      path: "/dashboard/keys",
      handle: ({ session, query }) => {
        const revoked = query.get("revoked");
        const notice: Notice | undefined = revoked
          ? { tone: "ok", text: `Key revoked: requests with it are refused from now on (401).` }
          : undefined;
        return page(session, { notice });
      },
    },
    {
      method: "POST",
      path: "/dashboard/keys",
      handle: async ({ session, form }) => {
        let key: { id: string; api_key: string } | undefined;
        let result: { body: string };
        try {
          // Only the key's id is kept for a double submit: the key itself is never stored.
          result = await idempotency.run(session.accountId, idempotencyKey("key", form), {}, async (commit) => {
            key = await accounts.createKey(session.accountId);
            const body = JSON.stringify({ id: key.id });
            await commit(201, body);
            return { status: 201, body };
          });
        } catch (error) {
          const refused = refusal(error);
          if (!refused) throw error;
          return page(session, { notice: refused.notice }, refused.status);
        }
        if (key) return page(session, { created: key });
        const again = JSON.parse(result.body) as { id: string };
        const text =
          `This form was already submitted and created key ${again.id}, which is shown only once. ` +
          "If you did not copy it, revoke it and create another.";
        return page(session, { notice: { tone: "info", text } });
      },
    },
    {
      method: "POST",
      path: "/dashboard/keys/:id/revoke",
      handle: async ({ session, params, form }) => {
        const id = params.id!;
        if (!(await accounts.listKeys(session.accountId)).some((k) => k.id === id))
          return notFoundPage(session, "keys", back);
        if (form.get("confirm") !== "yes")
          return page(
            session,
            { notice: { tone: "bad", text: "confirm: tick the box next to Revoke to confirm" } },
            400,
          );
        await accounts.revokeKey(id, session.accountId);
        return seeOther(`/dashboard/keys?revoked=${encodeURIComponent(id)}`);
      },
    },
  ];
}

/**
 * The idempotency key for a create form: each rendering of the form carries a fresh random token,
 * so a double submit (or a reload that posts again) is answered with the first result.
 */
function idempotencyKey(what: "webhook" | "key", form: URLSearchParams): string | null {
  const token = form.get("token") ?? "";
  return FORM_TOKEN.test(token) ? `dashboard-${what}:${token}` : null;
}

function confirmed(form: URLSearchParams, rule: string): void {
  if (form.get("confirm") !== "yes") throw new ValidationError(`confirm: ${rule}`);
}

/** What the endpoint page says after a send it asked for (the 303 lands here). */
function sentNotice(query: URLSearchParams): Notice | undefined {
  if (query.get("sent") === "test")
    return { tone: "ok", text: "Test event queued. It is listed below; reload to see its attempts." };
  // Only an id is echoed, so a crafted link cannot put words of its own on the page.
  const retried = query.get("retried");
  if (retried && new RegExp(prefixedIdPattern("whd")).test(retried))
    return { tone: "ok", text: `Delivery ${retried} queued to be sent again now.` };
  return undefined;
}

/** The 404 page of an id that is not the signed-in account's (or no longer there). */
export const notFoundPage = (session: DashboardSession, nav: NavKey, back: { href: string; label: string }) =>
  notFound(session, { nav, title: "Not found", message: "There is nothing with this id in your account.", back });

/** A service's refusal as a notice and a status; undefined for an unknown id (the caller's 404). */
export function refusal(error: unknown): { notice: Notice; status: number; retryAfter?: string } | undefined {
  if (error instanceof NotFoundError) return undefined;
  if (!(error instanceof DomainError)) throw error;
  // The idempotency layer's words are about API headers; a dashboard user double-clicked.
  if (error instanceof ConflictError)
    return {
      notice: {
        tone: "info",
        text: "This form is still being submitted. Reload the page in a moment to see the result.",
      },
      status: statusOf(error),
    };
  const wait = error.retryAfterSeconds;
  return {
    notice: { tone: "bad", text: wait === undefined ? error.message : `${error.message} (in about ${wait} s)` },
    status: statusOf(error),
    retryAfter: wait === undefined ? undefined : String(wait),
  };
}
