/**
 * requirePoppler (scripts/test-prereqs.ts): found on PATH, nothing is installed; missing where
 * apt-get cannot be reached, it stops with one line naming what to install.
 */

import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PrereqError, requirePoppler } from "../../scripts/test-prereqs.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const emptyDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "stablegate-poppler-"));
  dirs.push(dir);
  return dir;
};

test("with the tools on PATH it says nothing and installs nothing", () => {
  const bin = emptyDir();
  for (const tool of ["pdftotext", "pdfinfo", "pdffonts", "pdfimages"]) {
    writeFileSync(join(bin, tool), "#!/bin/sh\n");
    chmodSync(join(bin, tool), 0o755);
  }
  const said: string[] = [];
  requirePoppler({ PATH: bin }, (line) => said.push(line));
  expect(said).toEqual([]);
});

test("missing, and no apt-get on PATH: one line saying what to install", () => {
  const said: string[] = [];
  let error: unknown;
  try {
    requirePoppler({ PATH: emptyDir() }, (line) => said.push(line));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(PrereqError);
  expect((error as Error).message).toBe(
    "the documents' tests need pdftotext, pdfinfo, pdffonts, pdfimages, not found on PATH: " +
      "install Debian's poppler-utils (sudo apt-get install poppler-utils)",
  );
  expect(said).toEqual([]);
});
