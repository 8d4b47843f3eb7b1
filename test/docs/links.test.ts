/**
 * The documentation kept honest: every relative link and #anchor in README.md, ARCHITECTURE.md and
 * docs/*.md leads somewhere (the file exists; the anchor is a heading's slug as GitHub computes
 * it), every path of the project a page names in backticks (`src/chain/watching/`) is there, and
 * the configuration reference's table lists exactly the STABLEGATE_* variables the code reads.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");
const PAGES = ["README.md", "ARCHITECTURE.md", ...[...new Glob("docs/**/*.md").scanSync(ROOT)].sort()];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** The lines of a page outside fenced code blocks, where a `#` starts a comment, not a heading. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split("\n").filter((line) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A heading's anchor as GitHub makes it: the rendered text, lower case, punctuation gone, spaces as hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a page; a repeated heading gets -1, -2, ... as on GitHub. */
function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(read(page))) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = githubSlug(heading[1]!);
    const count = seen.get(slug);
    seen.set(slug, (count ?? -1) + 1);
    anchors.add(count === undefined ? slug : `${slug}-${count + 1}`);
  }
  return anchors;
}

/** Relative links of a page (inline `[text](target)` and images), each as written. */
function linksOf(page: string): string[] {
  const text = prose(read(page))
    .join("\n")
    .replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The top-level folders whose paths the pages name, as `src/...` or `test/...` in backticks. */
const PROJECT_FOLDERS = ["src", "test", "scripts", "bench", "contracts", "deploy", "migrations", "clients", "docs"];

/** Paths of the project a page names in backticks, as written; a `*` in one stands for any name. */
function pathsNamedIn(page: string): string[] {
  const folders = PROJECT_FOLDERS.join("|");
  return [...read(page).matchAll(new RegExp(`\`((?:${folders})/[\\w./*-]*)\``, "g"))]
    .map((m) => m[1]!.replace(/[.:,]$/, ""))
    .filter((path) => !path.includes("..."));
}

/** Folders the tests write and git ignores (test/artifacts/), named by the pages though a fresh clone lacks them. */
const IGNORED = readFileSync(join(ROOT, ".gitignore"), "utf8")
  .split("\n")
  .filter((line) => line.includes("/") && !line.startsWith("#"));

function pathExists(path: string): boolean {
  if (IGNORED.some((ignored) => path.startsWith(ignored))) return true;
  if (path.includes("*")) return [...new Glob(path).scanSync({ cwd: ROOT, onlyFiles: false })].length > 0;
  return existsSync(join(ROOT, path));
}

describe("documentation links", () => {
  test("every path of the project a page names is there", () => {
    const named = PAGES.flatMap((page) => pathsNamedIn(page).map((path) => ({ page, path })));
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter(({ path }) => !pathExists(path))).toEqual([]);
  });

  test("the pages are there (a check over nothing would pass vacuously)", () => {
    expect(PAGES).toContain("docs/README.md");
    expect(PAGES).toContain("docs/configuration.md");
    expect(PAGES.length).toBeGreaterThan(10);
    expect(anchorsOf("docs/api.md")).toContain("openapi-document-get-openapijson");
    expect(linksOf("README.md")).toContain("docs/README.md");
  });

  test("every relative link and anchor resolves", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of linksOf(page)) {
        const [path, anchor] = link.split("#", 2) as [string, string | undefined];
        const target = path === "" ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${page}: ${link} (no ${target})`);
        } else if (anchor !== undefined && !(target.endsWith(".md") && anchorsOf(target).has(anchor))) {
          broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  test("the slug rule matches GitHub's on the headings these pages have", () => {
    expect(githubSlug("Cross-chain funding (CCTP V2)")).toBe("cross-chain-funding-cctp-v2");
    expect(githubSlug("Version 3: a fee that cannot stop the payout")).toBe(
      "version-3-a-fee-that-cannot-stop-the-payout",
    );
    expect(githubSlug("`stablegate listen`: webhooks on your laptop")).toBe(
      "stablegate-listen-webhooks-on-your-laptop",
    );
    expect(githubSlug("Event stream: `GET /api/v1/events/stream`")).toBe("event-stream-get-apiv1eventsstream");
  });
});

describe("configuration reference", () => {
  /** Variables in the first column of docs/configuration.md's table (a cell may name several). */
  const documented = new Set(
    prose(read("docs/configuration.md"))
      .filter((line) => line.startsWith("| `STABLEGATE_"))
      .flatMap((line) => [...line.split("|")[1]!.matchAll(/`(STABLEGATE_[A-Z0-9_]+)`/g)].map((m) => m[1]!)),
  );
  /** Variables the code reads: every STABLEGATE_* name in src/, test-only ones excepted. */
  const inCode = new Set(
    [...new Glob("src/**/*.ts").scanSync(ROOT)].flatMap((file) =>
      [...read(file).matchAll(/STABLEGATE_[A-Z0-9_]*[A-Z0-9]/g)]
        .map((m) => m[0])
        .filter((name) => !name.startsWith("STABLEGATE_TEST_")),
    ),
  );

  test("the table and the code are both read (a check over nothing would pass vacuously)", () => {
    expect(documented).toContain("STABLEGATE_DATA_DIR");
    expect(inCode).toContain("STABLEGATE_DATA_DIR");
  });

  test("every variable the code reads is in the table", () => {
    expect([...inCode].filter((name) => !documented.has(name)).sort()).toEqual([]);
  });

  test("every variable in the table is one the code reads", () => {
    expect([...documented].filter((name) => !inCode.has(name)).sort()).toEqual([]);
  });
});
