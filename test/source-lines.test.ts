/**
 * No line in src/ or in the TypeScript client's sources is longer than 120 characters, the width
 * Biome formats to (biome.jsonc). The formatter cannot break strings, templates, SQL or comments,
 * so this check catches what it leaves.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "..");
const MAX = 120;
/** The server's sources and the TypeScript client's, less the client's generated types (openapi-typescript's layout). */
const SOURCES = [
  ...new Glob("src/**/*").scanSync({ cwd: ROOT, dot: true }),
  ...[...new Glob("clients/typescript/src/**/*").scanSync({ cwd: ROOT, dot: true })].filter(
    (file) => file !== "clients/typescript/src/openapi.ts",
  ),
].sort();

/** `file:line (length)` for every line of `text` longer than MAX, counted in characters (code points). */
function longLines(file: string, text: string): string[] {
  return text.split(/\r?\n/).flatMap((line, i) => {
    const length = [...line].length;
    return length > MAX ? [`${file}:${i + 1} (${length})`] : [];
  });
}

describe("source line width", () => {
  test("the walk reads the source tree (a check over nothing would pass vacuously)", () => {
    expect(SOURCES.length).toBeGreaterThan(100);
    expect(SOURCES).toContain("src/main.ts");
    expect(SOURCES).toContain("src/checkout/page-pay.ts");
    expect(SOURCES).toContain("src/checkout/assets/pay-wallet.client.js");
    expect(SOURCES).toContain("clients/typescript/src/transport.ts");
    const lines = SOURCES.reduce((n, file) => n + readFileSync(resolve(ROOT, file), "utf8").split("\n").length, 0);
    expect(lines).toBeGreaterThan(5_000);
  });

  test("the measure flags a line of 121 characters and passes one of 120, multi-byte characters counted once", () => {
    expect(longLines("a.ts", `ok\n${"x".repeat(MAX)}\n${"x".repeat(MAX + 1)}`)).toEqual(["a.ts:3 (121)"]);
    expect(longLines("b.ts", "─".repeat(MAX))).toEqual([]);
    expect(longLines("c.ts", `${"x".repeat(MAX + 1)}\r\n`)).toEqual(["c.ts:1 (121)"]);
  });

  test(`no line under src/ or clients/typescript/src/ is longer than ${MAX} characters`, () => {
    const offenders = SOURCES.flatMap((file) => longLines(file, readFileSync(resolve(ROOT, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
