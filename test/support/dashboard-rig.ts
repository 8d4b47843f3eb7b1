/**
 * What the dashboard's browser tests run against: the checkout parts (a chain and the shipped
 * executable) and a dashboard user of the stack's account, with a local webhook receiver when the
 * test adds webhook endpoints. A `start` for useBrowserRig:
 *
 *   const rig = useBrowserRig({ start: startDashboardParts });   // rig.stack, rig.user, rig.browser
 *   const rig = useBrowserRig({ start: startDashboardPartsWithReceiver });   // and rig.receiver
 */
import { type CheckoutParts, startCheckoutParts, type Undo } from "./browser.ts";
import { createDashboardUser, type DashboardUser } from "./dashboard.ts";
import { type Receiver, startReceiver } from "./receiver.ts";

export interface DashboardParts extends CheckoutParts {
  user: DashboardUser;
}

/** The checkout parts (startCheckoutParts) and a dashboard user of the stack's account. */
export async function startDashboardParts(undo: Undo, env?: Record<string, string>): Promise<DashboardParts> {
  const parts = await startCheckoutParts(undo, env);
  return { ...parts, user: await createDashboardUser(parts.stack.env, parts.stack.accountId) };
}

/** startDashboardParts, with a local webhook receiver (`receiver`) the server may deliver to. */
export async function startDashboardPartsWithReceiver(undo: Undo): Promise<DashboardParts & { receiver: Receiver }> {
  // The receiver listens on 127.0.0.1, which production refuses; this test-and-dev setting allows it.
  const parts = await startDashboardParts(undo, { STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on" });
  const receiver = startReceiver();
  undo(() => receiver.stop());
  return { ...parts, receiver };
}
