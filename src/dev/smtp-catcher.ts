import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export interface SmtpCatcher {
  /** STABLEGATE_SMTP_URL for the dev server. */
  url: string;
  /** Where each email is written, one .eml file per email. */
  dir: string;
  stop(): Promise<void>;
}

/**
 * `stablegate dev`'s local SMTP server: it takes every email the dev server sends (STARTTLS with
 * smtp-server's throwaway localhost certificate, any or no login) and writes it to `dir` as an
 * .eml file that any mail program opens. smtp-server is a dev dependency: it is loaded by name at
 * run time, so the shipped binary does not carry it, and `dev` from the binary says so.
 */
export async function startSmtpCatcher(dir: string): Promise<SmtpCatcher> {
  const name = "smtp-server";
  let SMTPServer: typeof import("smtp-server").SMTPServer;
  try {
    ({ SMTPServer } = (await import(name)) as typeof import("smtp-server"));
  } catch {
    throw new Error("the local SMTP catcher needs a source checkout with its dev dependencies (bun install)");
  }
  mkdirSync(dir, { recursive: true });
  let count = 0;
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    onAuth: (_auth, _session, done) => done(null, { user: "dev" }),
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const to = session.envelope.rcptTo.map((r) => r.address).join(",");
        const at = new Date().toISOString().replace(/[:.]/g, "-");
        const file = `${at}-${++count}-${to.replace(/[^\w@.,-]/g, "_")}.eml`;
        writeFileSync(join(dir, file), Buffer.concat(chunks));
        done();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    dir,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
