/**
 * What Debian's poppler-utils read from a PDF: its text (`pdftotext`, as a reader copying it
 * would get it) and its info (`pdfinfo`: page size, dates, fonts). scripts/test-prereqs.ts
 * installs them before a run.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToExit } from "./cli.ts";

async function withFile<T>(bytes: Uint8Array, read: (path: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "stablegate-pdf-"));
  try {
    const path = join(dir, "document.pdf");
    writeFileSync(path, bytes);
    return await read(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(command: string[]): Promise<string> {
  const { code, stdout, stderr } = await runToExit(command, { env: { PATH: process.env.PATH } });
  if (code !== 0) throw new Error(`${command[0]} exited ${code}: ${stderr.trim()}`);
  return stdout;
}

/** The text line by line as laid out (a table row is one line), whitespace runs collapsed to one space. */
export const pdfText = (bytes: Uint8Array): Promise<string> =>
  withFile(bytes, async (path) =>
    (await run(["pdftotext", "-layout", "-enc", "UTF-8", path, "-"])).replace(/\s+/g, " "),
  );

/** `pdfinfo`'s fields by name ("Page size", "Pages", "Title"...). */
export const pdfInfo = (bytes: Uint8Array): Promise<Record<string, string>> =>
  withFile(bytes, async (path) => {
    const fields: Record<string, string> = {};
    for (const line of (await run(["pdfinfo", path])).split("\n")) {
      const at = line.indexOf(":");
      if (at > 0) fields[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    return fields;
  });

/** `pdffonts`' table rows: each font's name and whether it is embedded. */
export const pdfFonts = (bytes: Uint8Array): Promise<Array<{ name: string; embedded: boolean }>> =>
  withFile(bytes, async (path) =>
    (await run(["pdffonts", path]))
      .split("\n")
      .slice(2)
      .filter((line) => line.trim())
      .map((line) => {
        const cols = line.trim().split(/\s+/);
        return { name: cols[0]!, embedded: cols.at(-5) === "yes" };
      }),
  );
