import type { AppContext } from "../context.ts";
import { ValidationError } from "../lib/errors.ts";
import { paymentsCsvResponse } from "../payments/export-routes.ts";
import { homePageBody } from "./home-page.ts";
import type { DashboardRoute } from "./kit.ts";
import { dashboardPage } from "./layout.ts";
import { listCursor, listFilter, listForm } from "./lists-filter.ts";
import { paymentsPageBody } from "./payments-page.ts";

/** The dashboard's home page, the payments list and its CSV download. */
export function listsRoutes(ctx: AppContext): DashboardRoute[] {
  const search = ctx.paymentSearch;
  return [
    {
      method: "GET",
      path: "/dashboard",
      handle: async ({ session }) =>
        dashboardPage({
          title: "Home",
          session,
          nav: "home",
          body: homePageBody(await search.home(session.accountId)),
        }),
    },
    {
      method: "GET",
      path: "/dashboard/payments",
      handle: async ({ session, query }) => {
        const form = listForm(query);
        try {
          const page = await search.page(session.accountId, listFilter(form), listCursor(query));
          return dashboardPage({ title: "Payments", session, nav: "payments", body: paymentsPageBody({ form, page }) });
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          const body = paymentsPageBody({ form, page: null, error: error.message });
          return dashboardPage({ title: "Payments", session, nav: "payments", body, status: 400 });
        }
      },
    },
    {
      method: "GET",
      path: "/dashboard/payments.csv",
      handle: async ({ session, query }) => {
        const form = listForm(query);
        try {
          return await paymentsCsvResponse(search, session.accountId, listFilter(form), ctx.clock.now());
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          const body = paymentsPageBody({ form, page: null, error: error.message });
          return dashboardPage({ title: "Payments", session, nav: "payments", body, status: 400 });
        }
      },
    },
  ];
}
