/**
 * GET /docs, the API reference: the page and its embedded files over real HTTP, then a real
 * chromium rendering the server's own /openapi.json under the page's CSP, at desktop and phone
 * sizes (screenshots docs-desktop.png and docs-phone.png in test/artifacts/).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import type { OpenAPIV3_1 } from "openapi-types";
import type { BrowserContext, Page } from "playwright-core";
import { collectProblems, DESKTOP, PHONE, screenshot, useBrowserRig } from "../support/browser.ts";
import { startServeProcess } from "../support/serve-process.ts";
import { api, makeTempDir, startTestServer, TEST_BASE_URL, testEnv } from "../support/server.ts";
import { builtBinary } from "../support/stack.ts";

// Chromium parses a 1.7 MB bundle on a shared 2-core machine.
setDefaultTimeout(60_000);

const rig = useBrowserRig({
  start: async (undo) => {
    const server = await startTestServer();
    undo(() => server.stop());
    return { server };
  },
});

const get = (path: string) => api(rig.server.url, null)(path);

/** The src and href of every script and stylesheet the page links, in order. */
function linkedFiles(page: string): string[] {
  return [...page.matchAll(/<(?:script[^>]*\ssrc|link[^>]*\shref)="([^"]+)"/g)].map((m) => m[1]!);
}

describe("GET /docs", () => {
  test("is our page, with the strict CSP, nosniff, no-store and no framing", async () => {
    const res = await get("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'"])
      expect(csp).toContain(directive);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-|https?:|\*/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const page = res.text;
    expect(page).toContain("<title>Stablegate API reference</title>");
    // No inline script: every <script> loads a file from this server.
    const scripts = [...page.matchAll(/<script[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBe(2);
    for (const tag of scripts) expect(tag).toMatch(/ src="\/docs\/[^"]+\?v=\w+"/);
    // Without JavaScript it still says where the document is.
    expect(page).toMatch(/<noscript>[\s\S]*href="\/openapi.json"[\s\S]*<\/noscript>/);
  });

  test("its files come from the server, versioned, with their content types and a long cache", async () => {
    const files = linkedFiles((await get("/docs")).text);
    expect(files.map((f) => f.replace(/\?v=\w+$/, ""))).toEqual([
      "/docs/swagger-ui.css",
      "/docs/docs.css",
      "/docs/swagger-ui-bundle.js",
      "/docs/docs.js",
    ]);
    for (const file of files) {
      const res = await get(file);
      expect(res.status).toBe(200);
      const type = file.includes(".css?") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.text.length).toBeGreaterThan(0);
    }
    // The renderer is the pinned package's own bundle, byte for byte.
    const bundle = (await get(files[2]!)).text;
    expect(bundle).toBe(await Bun.file(require.resolve("swagger-ui-dist/swagger-ui-bundle.js")).text());
  });

  test("GET / links the docs and the OpenAPI document, and both answer", async () => {
    const index = (await get("/")).json as { docs: string; openapi: string };
    expect(index).toMatchObject({ docs: "/docs", openapi: "/openapi.json" });
    const docs = await get(index.docs);
    expect(docs.status).toBe(200);
    expect(docs.text).toContain("Stablegate API reference");
    const document = (await get(index.openapi)).json as OpenAPIV3_1.Document;
    expect(document.openapi).toStartWith("3.1");
  });
});

describe("the shipped binary", () => {
  test("serves /docs and the renderer's files from inside itself", async () => {
    const dataDir = makeTempDir();
    const serve = await startServeProcess(testEnv(dataDir), { command: [await builtBinary(), "serve"] });
    try {
      const shipped = api(serve.url, null);
      const page = (await shipped("/docs")).text;
      expect(page).toContain("<title>Stablegate API reference</title>");
      for (const file of linkedFiles(page)) {
        const res = await shipped(file);
        expect(res.status).toBe(200);
        const local = await get(file);
        expect(res.headers.get("content-type")).toBe(local.headers.get("content-type"));
        expect(res.text).toBe(local.text);
      }
    } finally {
      await serve.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Every CSP violation the page reports, as "directive blocked-uri" lines. */
async function watchViolations(context: BrowserContext): Promise<() => Promise<string[]>> {
  const violations: string[] = [];
  await context.exposeFunction("__docsViolation", (line: string) => violations.push(line));
  await context.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (e) =>
      (window as unknown as { __docsViolation(line: string): void }).__docsViolation(
        `${e.effectiveDirective} ${e.blockedURI}`,
      ),
    ),
  );
  return async () => violations;
}

/** What the document served at /openapi.json names: its operations' summaries and ids, its webhooks. */
async function documentNames(): Promise<{ summaries: string[]; operationIds: string[]; webhooks: string[] }> {
  const document = (await get("/openapi.json")).json as OpenAPIV3_1.Document;
  const methods = ["get", "post", "put", "patch", "delete"] as const;
  const operations = Object.values(document.paths ?? {}).flatMap((item) => methods.flatMap((m) => item?.[m] ?? []));
  return {
    summaries: operations.map((op) => op.summary ?? ""),
    operationIds: operations.map((op) => op.operationId ?? ""),
    webhooks: Object.keys(document.webhooks ?? {}),
  };
}

describe("the reference in a browser", () => {
  // Three tests, each on a page of its own: one rendering of Swagger UI's bundle is seconds of a
  // shared core, and a single test doing all three ran out of time on a loaded machine.
  test("renders every operation and webhook of /openapi.json with no CSP violation", async () => {
    const reference = await openReference(DESKTOP);
    const { page } = reference;
    expect(await page.title()).toBe("Stablegate API reference");
    expect(reference.requested).toContain(`${reference.origin}/openapi.json`);

    const { summaries, operationIds, webhooks } = await documentNames();
    expect(summaries.length).toBeGreaterThan(10);
    expect(summaries).not.toContain("");
    const text = await page.locator("#docs").innerText();
    for (const summary of summaries) expect(text).toContain(summary);
    for (const name of webhooks) expect(text).toContain(name);
    // The operation ids shown are the document's own, as the generated client names its methods.
    const shownIds = await page.locator(".opblock-summary-operation-id:visible").allInnerTexts();
    expect(shownIds.length).toBe(operationIds.length);
    expect(shownIds.toSorted()).toEqual(operationIds.toSorted());
    await screenshot(page, "docs-desktop");
    await reference.close();
  });

  test("what a developer does first: opens an operation and a webhook, gives the key, tries a call", async () => {
    const reference = await openReference(DESKTOP);
    const { page } = reference;
    const { webhooks } = await documentNames();
    await expandOperation(page, "Create a payment");
    await expect(page.getByText("Idempotency-Key").first().isVisible()).resolves.toBe(true);
    await page.locator(".opblock-summary").filter({ hasText: webhooks[0]! }).first().click();
    await page
      .getByRole("button", { name: /authorize/i })
      .first()
      .click();
    const dialog = page.locator(".modal-ux");
    await expect(dialog.innerText()).resolves.toMatch(/bearer/i);
    await dialog
      .locator("input")
      .first()
      .fill((await rig.server.createAccount()).apiKey);
    await dialog.locator("button.authorize").click();
    await dialog.locator(".close-modal").click();
    await expandOperation(page, "List payments");
    const list = page.locator(".opblock.is-open").filter({ hasText: "List payments" });
    await list.locator(".try-out__btn").click();
    await list.locator("button.execute").click();
    const answer = await list.locator(".live-responses-table .response").first().innerText();
    expect(answer).toStartWith("200");
    expect(answer).toContain('"has_more": false');
    await reference.close();
  });

  test("fits a phone: no operation id squeezed beside the summary, nothing wider than the screen", async () => {
    const reference = await openReference(PHONE);
    const { page } = reference;
    // The operation id has no room beside path and summary on a phone (it broke mid-word).
    await expect(page.locator(".opblock-summary-operation-id").first().isVisible()).resolves.toBe(false);
    await screenshot(page, "docs-phone");
    // Nothing wider than the phone, an open operation with its responses included: the page
    // scrolls only up and down.
    await expandOperation(page, "Create a payment");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(PHONE.width);
    await reference.close();
  });
});

interface Reference {
  origin: string;
  page: Page;
  /** Every URL the page asked for. */
  requested: string[];
  /** Checks that the page reported no CSP violation, console error or request elsewhere, then closes it. */
  close(): Promise<void>;
}

/** /docs rendered at `viewport`, once "Create a payment" shows. */
async function openReference(viewport: { width: number; height: number }): Promise<Reference> {
  // The browser sees the server at its public address (TEST_BASE_URL, the `servers` entry of
  // the document) as a merchant's would, not at 127.0.0.1; every request is passed to the real
  // server over HTTP, anything for another origin is refused.
  const origin = new URL(TEST_BASE_URL).origin;
  const context = await rig.browser.newContext({ viewport });
  const requested: string[] = [];
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    requested.push(url.href);
    if (url.origin !== origin) return route.abort("blockedbyclient");
    const forward = () => route.fetch({ url: `${rig.server.url}${url.pathname}${url.search}` });
    // Playwright may reuse a kept-alive connection the server is closing as idle: a reset is sent again once.
    const response = await forward().catch((error) =>
      /ECONNRESET/.test(String(error)) ? forward() : Promise.reject(error),
    );
    return route.fulfill({ response });
  });
  const violations = await watchViolations(context);
  const page = await context.newPage();
  const problems = collectProblems(page);
  await page.goto(`${origin}/docs`);
  await page.getByText("Create a payment", { exact: true }).first().waitFor();
  return {
    origin,
    page,
    requested,
    close: async () => {
      expect(await violations()).toEqual([]);
      expect(problems).toEqual([]);
      expect(requested.filter((url) => new URL(url).origin !== origin)).toEqual([]);
      await context.close();
    },
  };
}

async function expandOperation(page: Page, summary: string): Promise<void> {
  await page.locator(".opblock-summary").filter({ hasText: summary }).first().click();
  await page.locator(".opblock.is-open").first().waitFor();
}
