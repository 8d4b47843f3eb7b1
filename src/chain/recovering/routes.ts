import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { AuthPlugin } from "../../http/auth.ts";
import { jsonResponse } from "../../http/json.ts";
import { idParam } from "../../http/params.ts";
import { bodyValidator } from "../../http/validate.ts";
import { prefixedIdPattern } from "../../lib/ids.ts";
import { PaymentParams } from "../../payments/routes.ts";
import { RecoverSchema } from "./schema.ts";
import type { RecoveryRow } from "./store.ts";
import { recoveryView } from "./view.ts";

export const RecoveryParams = Type.Object({ id: idParam("id", prefixedIdPattern("rcv"), (id) => `no recovery ${id}`) });
const recoverBody = bodyValidator(RecoverSchema);

/** Merchant routes that return tokens or native coin sent to a deposit address by mistake. */
export function recoveryRoutes(ctx: AppContext, authed: AuthPlugin) {
  const { recoveries, idempotency } = ctx;
  const render = (row: RecoveryRow) => JSON.stringify(recoveryView(row, recoveries.chainName(row.chain_id)));
  return new Elysia()
    .use(authed)
    .post(
      "/api/v1/payments/:id/recover",
      async ({ account, params, body: raw, request }) => {
        const body = recoverBody(raw);
        const key = request.headers.get("idempotency-key");
        // The key also covers which payment: the same key on another payment is another request.
        const result = await idempotency.run(account.id, key, { id: params.id, ...body }, async (commit) => {
          const { row, created } = await recoveries.request(account, params.id, body, (row, created) =>
            commit(created ? 202 : 200, render(row)),
          );
          return { status: created ? 202 : 200, body: render(row) };
        });
        if (!result.replayed) return jsonResponse(result.status, result.body);
        // A replay answers the recovery as it stands now, which is what a retrying client wants to know.
        const { id } = JSON.parse(result.body) as { id: string };
        return jsonResponse(200, render(await recoveries.retrieve(account, id)), { "idempotent-replayed": "true" });
      },
      { params: PaymentParams },
    )
    .get(
      "/api/v1/payments/:id/recoveries",
      async ({ account, params }) =>
        jsonResponse(
          200,
          JSON.stringify({
            object: "list",
            data: (await recoveries.forPayment(account, params.id)).map((row) =>
              recoveryView(row, recoveries.chainName(row.chain_id)),
            ),
            has_more: false,
          }),
        ),
      { params: PaymentParams },
    )
    .get(
      "/api/v1/recoveries/:id",
      async ({ account, params }) => jsonResponse(200, render(await recoveries.retrieve(account, params.id))),
      { params: RecoveryParams },
    );
}
