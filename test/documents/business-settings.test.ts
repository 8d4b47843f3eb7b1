/**
 * The business details from the dashboard's settings page, over real HTTP with a real session:
 * the form saves them and the documents print them; a bad value is refused with the reason and
 * changes nothing; the logo upload is checked by content (a file that claims PNG but is not, too
 * large, wrong type, wrong dimensions), served at its own URL as an image with no-sniff, printed in
 * the PDF, and removed. And `stablegate account set-business`: its output and its refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "../../src/db/engine.ts";
import { runCli, runToExit } from "../support/cli.ts";
import { createDashboardUser, type DashboardClient, signIn } from "../support/dashboard.ts";
import { pdfText } from "../support/pdf-text.ts";
import { solidPng, withBadFilter, withHeaderByte } from "../support/png.ts";
import { api, startTestServer, type TestAccount, type TestServer } from "../support/server.ts";

let server: TestServer;
let shop: TestAccount;
let client: DashboardClient;
let paymentId: string;

beforeAll(async () => {
  server = await startTestServer();
  shop = await server.createAccount("Settings Shop");
  client = await signIn(server.url, await createDashboardUser(server.env, shop.accountId));
  const created = await api(server.url, shop.apiKey)("/api/v1/payments", {
    body: { amount: "12.00", invoice_number: "INV-SET-1", customer_name: "Bo Berg" },
  });
  paymentId = created.json.id;
});
afterAll(() => server?.stop());

const stored = async () =>
  (await server.running.db.get<Record<string, unknown>>(
    sql`SELECT legal_name, address, tax_id, support_email, logo_sha256, logo_type FROM business_details
         WHERE account_id = ${shop.accountId}`,
  )) ?? null;

const settings = async () => (await client.get("/dashboard/settings")).text();

/** Posts the logo form as a browser does: multipart, with the session's CSRF token unless told otherwise. */
function uploadLogo(
  bytes: Uint8Array<ArrayBuffer>,
  name = "logo.png",
  type = "image/png",
  csrf: string | null = client.csrf,
) {
  const form = new FormData();
  if (csrf !== null) form.set("csrf", csrf);
  form.set("logo", new File([bytes], name, { type }));
  return fetch(`${server.url}/dashboard/settings/logo`, {
    method: "POST",
    body: form,
    headers: { cookie: client.cookie },
    redirect: "manual",
  });
}

describe("business details from the settings page", () => {
  test("saved from the form, shown on the page, printed on the invoice", async () => {
    const page = await settings();
    expect(page).toContain('action="/dashboard/settings/business"');
    expect(page).toContain('enctype="multipart/form-data"');
    const res = await client.post("/dashboard/settings/business", {
      legal_name: "Berg & Sohn KG",
      address: "Hafenstraße 3\r\n\r\n20457 Hamburg",
      tax_id: "DE999999999",
      support_email: "kontakt@berg.example",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toStartWith("/dashboard/settings?saved=business");
    expect(await stored()).toMatchObject({
      legal_name: "Berg & Sohn KG",
      address: "Hafenstraße 3\n20457 Hamburg",
      tax_id: "DE999999999",
      support_email: "kontakt@berg.example",
    });
    const after = await (await client.get("/dashboard/settings?saved=business")).text();
    expect(after).toContain("Business details saved");
    expect(after).toContain('value="Berg &#38; Sohn KG"');
    const text = await pdfText(
      new Uint8Array(await (await fetch(`${server.url}/pay/${paymentId}/invoice.pdf`)).arrayBuffer()),
    );
    for (const expected of [
      "Berg & Sohn KG",
      "Hafenstraße 3",
      "20457 Hamburg",
      "Tax ID: DE999999999",
      "kontakt@berg.example",
    ])
      expect(text).toContain(expected);
    expect(text).not.toContain("Settings Shop");
  });

  test("a bad value is refused with the reason, and nothing changes", async () => {
    const before = await stored();
    const cases: Array<[Record<string, string>, string]> = [
      [{ legal_name: "Ok", support_email: "not an email" }, "support email must be an email address"],
      [{ legal_name: "x".repeat(201) }, "legal name must be at most 200 characters"],
      [{ address: Array.from({ length: 7 }, (_, i) => `Line ${i}`).join("\n") }, "address must be at most 6 lines"],
      [{ tax_id: "DE1\u0007" }, "tax id must be one line of text"],
    ];
    for (const [form, reason] of cases) {
      const res = await client.post("/dashboard/settings/business", form);
      expect({ reason, status: res.status }).toEqual({ reason, status: 400 });
      expect(await res.text()).toContain(reason);
      expect(await stored()).toEqual(before);
    }
  });
});

describe("the logo", () => {
  test("refused unless it is a PNG or JPEG by content, small enough and of sensible dimensions", async () => {
    const before = await stored();
    const pngHeaderThenText = new Uint8Array([
      ...solidPng(32, 32).slice(0, 8),
      ...new TextEncoder().encode("not really"),
    ]);
    const cases: Array<[Uint8Array<ArrayBuffer>, string, string, string]> = [
      [
        new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>"),
        "logo.png",
        "image/png",
        "logo must be a PNG or JPEG image",
      ],
      [pngHeaderThenText, "logo.png", "image/png", "logo"],
      [
        new TextEncoder().encode("GIF89a\u0001\u0000\u0001\u0000\u0000\u0000\u0000;"),
        "logo.gif",
        "image/gif",
        "this file is image/gif",
      ],
      [
        new Uint8Array([...solidPng(32, 32).slice(0, 33), ...new Uint8Array(140 * 1024)]),
        "big.png",
        "image/png",
        "larger than 128 KB",
      ],
      [solidPng(2400, 20), "wide.png", "image/png", "logo must be 16 to 2000 pixels on each side; this one is 2400x20"],
      [new Uint8Array(0), "empty.png", "image/png", "choose a PNG or JPEG file"],
      // What the PDF library could not decode is refused here, not found out when an invoice is printed.
      [withHeaderByte(solidPng(32, 32), 12, 1), "interlaced.png", "image/png", "not interlaced"],
      [withHeaderByte(solidPng(32, 32), 8, 16), "deep.png", "image/png", "plain 8-bit image"],
      [withBadFilter(32, 32), "damaged.png", "image/png", "the image is damaged (its pixel data cannot be read)"],
    ];
    for (const [bytes, name, type, reason] of cases) {
      const res = await uploadLogo(bytes, name, type);
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(await res.text()).toContain(reason);
      expect(await stored()).toEqual(before);
    }
    // Without the session's CSRF token the form is refused before anything is read.
    expect((await uploadLogo(solidPng(64, 32), "logo.png", "image/png", null)).status).toBe(403);
    expect(await stored()).toEqual(before);
  });

  test("uploaded: served at its own URL as an image, shown on the invoice page and in its PDF; then removed", async () => {
    // Details of its own, so removing the logo is seen to keep them, whatever ran before.
    expect((await client.post("/dashboard/settings/business", { legal_name: "Logo & Co AG" })).status).toBe(303);
    const png = solidPng(120, 40);
    const res = await uploadLogo(png);
    expect(res.status).toBe(303);
    const row = (await stored())!;
    expect(row.logo_type).toBe("image/png");
    const path = `/logos/${row.logo_sha256}`;
    expect(await settings()).toContain(`src="${path}"`);

    const served = await fetch(server.url + path);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(png))).toBe(true);

    expect(await (await fetch(`${server.url}/pay/${paymentId}/invoice`)).text()).toContain(`src="${path}"`);
    const pdf = new Uint8Array(await (await fetch(`${server.url}/pay/${paymentId}/invoice.pdf`)).arrayBuffer());
    expect(await imagesIn(pdf)).toBe(1);

    const removed = await client.post("/dashboard/settings/logo", { remove: "yes" });
    expect(removed.status).toBe(303);
    expect(await stored()).toMatchObject({ logo_sha256: null, legal_name: "Logo & Co AG" });
    expect((await fetch(server.url + path)).status).toBe(404);
    expect(await settings()).toContain("No logo");
    const plain = new Uint8Array(await (await fetch(`${server.url}/pay/${paymentId}/invoice.pdf`)).arrayBuffer());
    expect(await imagesIn(plain)).toBe(0);
    // A name that is not a hash is not looked up.
    expect((await fetch(`${server.url}/logos/..%2Fsettings`)).status).toBe(404);
  });
});

describe("stablegate account set-business", () => {
  test("sets the fields given, keeps the others, clears one given empty, and prints the details", async () => {
    const other = await server.createAccount("Cli Shop");
    const run = (...args: string[]) => runCli(["account", "set-business", other.accountId, ...args], server.env);
    const first = await run(
      "--legal-name",
      "Cli Shop Ltd",
      "--address-line",
      "1 High Street",
      "--address-line",
      "Leeds LS1 1AA",
    );
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(first.stdout)).toEqual({
      account_id: other.accountId,
      legal_name: "Cli Shop Ltd",
      address_lines: ["1 High Street", "Leeds LS1 1AA"],
      tax_id: null,
      support_email: null,
      logo_path: null,
    });
    const second = await run("--tax-id", "GB123456789", "--legal-name", "");
    expect(JSON.parse(second.stdout)).toMatchObject({
      legal_name: null,
      address_lines: ["1 High Street", "Leeds LS1 1AA"],
      tax_id: "GB123456789",
    });
  });

  test("a bad value, no field or an unknown account exits non-zero with one line and changes nothing", async () => {
    const other = await server.createAccount("Careful Cli Shop");
    const run = (...args: string[]) => runCli(["account", "set-business", ...args], server.env);
    expect((await run(other.accountId, "--legal-name", "Careful Ltd")).code).toBe(0);
    const cases: Array<[string[], number, string]> = [
      [
        [other.accountId, "--support-email", "nope", "--legal-name", "Changed"],
        2,
        "support email must be an email address",
      ],
      [[other.accountId], 2, "give at least one of --legal-name"],
      [[other.accountId, "--logo", "x.png"], 2, "logo"],
      [["acct_doesNotExist000000000000", "--legal-name", "X"], 1, "no account acct_doesNotExist000000000000"],
    ];
    for (const [args, code, says] of cases) {
      const result = await run(...args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toContain(says);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
    const shown = await runCli(["account", "set-business", other.accountId, "--tax-id", ""], server.env);
    expect(JSON.parse(shown.stdout).legal_name).toBe("Careful Ltd");
  });
});

/** How many images a PDF holds (poppler's pdfimages). */
async function imagesIn(pdf: Uint8Array): Promise<number> {
  const path = `${server.dataDir}/images-${crypto.randomUUID()}.pdf`;
  await Bun.write(path, pdf);
  const { stdout, code } = await runToExit(["pdfimages", "-list", path], { env: { PATH: process.env.PATH } });
  expect(code).toBe(0);
  return stdout.trim().split("\n").length - 2;
}
