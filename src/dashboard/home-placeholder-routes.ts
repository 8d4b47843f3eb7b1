import { html } from "../checkout/html.ts";
import type { DashboardRoute } from "./kit.ts";
import { dashboardPage } from "./layout.ts";

/** Where sign-in lands until the real home page (received volume, counts, attention list) replaces it. */
export function homePlaceholderRoutes(): DashboardRoute[] {
  return [
    {
      method: "GET",
      path: "/dashboard",
      handle: ({ session }) =>
        dashboardPage({
          title: "Home",
          session,
          nav: "home",
          body: html`<section class="card">
  <h1>Dashboard</h1>
  <p class="muted">Signed in as ${session.email}.</p>
</section>`,
        }),
    },
  ];
}
