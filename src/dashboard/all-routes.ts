import type { AppContext } from "../http/context.ts";
import type { DashboardRoute } from "./kit.ts";

/**
 * Every signed-in dashboard route, one module per area (`<area>-routes.ts` handles requests,
 * `<area>-page.ts` renders HTML from plain data and knows nothing of HTTP).
 */
export function allDashboardRoutes(_ctx: AppContext): DashboardRoute[] {
  return [];
}
