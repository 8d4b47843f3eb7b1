/** A payment link's public form (/l/{id}) as a payer's browser uses it, over real HTTP. */
import { api } from "./server.ts";

/**
 * Loads the link's page for the nonce its form carries and posts the form back with `fields`
 * (amount, email...); answers the id of the payment the 303 sends the payer to.
 */
export async function payThroughLink(
  url: string,
  linkId: string,
  fields: Record<string, string> = {},
): Promise<string> {
  const payer = api(url, null);
  const page = (await payer(`/l/${linkId}`)).text;
  const nonce = /name="nonce" value="([0-9A-Za-z]+)"/.exec(page)![1]!;
  const res = await payer(`/l/${linkId}`, {
    body: new URLSearchParams({ nonce, ...fields }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
    redirect: "manual",
  });
  return /\/pay\/(0x[0-9a-f]{64})$/.exec(res.headers.get("location") ?? "")![1]!;
}
