import type { AppContext } from "../context.ts";
import { adminRoutes } from "./admin-routes.ts";
import { businessRoutes } from "./business-routes.ts";
import { emailSettingsRoutes } from "./email-settings-routes.ts";
import type { DashboardRoute } from "./kit.ts";
import { linksRoutes } from "./links-routes.ts";
import { listsRoutes } from "./lists-routes.ts";
import { signOutRoutes } from "./login-routes.ts";
import { paymentDetailRoutes } from "./payment-detail-routes.ts";
import { settingsRoutes } from "./settings-routes.ts";

/**
 * Every signed-in dashboard route, one module per area (`<area>-routes.ts` handles requests,
 * `<area>-page.ts` renders HTML from plain data and knows nothing of HTTP).
 */
export function allDashboardRoutes(ctx: AppContext): DashboardRoute[] {
  return [
    ...signOutRoutes(ctx),
    ...listsRoutes(ctx),
    ...paymentDetailRoutes(ctx),
    ...linksRoutes(ctx),
    ...adminRoutes(ctx),
    ...settingsRoutes(ctx),
    ...businessRoutes(ctx),
    ...emailSettingsRoutes(ctx),
  ];
}
