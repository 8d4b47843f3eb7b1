/**
 * A real SMTP server in the test process (the smtp-server package) that requires STARTTLS with a
 * self-signed certificate made for the run (openssl), and keeps every message it accepts, parsed
 * enough to assert on: envelope, headers, the text and HTML parts and the attachments. Faults: it
 * can stop and start again on the same port, refuse recipients, and answer slowly.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";

export interface ReceivedEmail {
  from: string;
  to: string[];
  /** Header names in lower case, values unfolded (the first of each name). */
  headers: Record<string, string>;
  subject: string;
  text: string;
  html: string;
  /** Attachments by file name, decoded. */
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
  raw: string;
  /** Whether the session had switched to TLS when the message came. */
  secure: boolean;
}

export interface TestSmtp {
  port: number;
  /** The STABLEGATE_SMTP_URL that reaches it, with a user and password it accepts. */
  url: string;
  /** The certificate (PEM) to trust: nodemailer's `ca` in-process, NODE_EXTRA_CA_CERTS for a child. */
  ca: string;
  caFile: string;
  messages: ReceivedEmail[];
  /** Recipients answered 550 until removed. */
  refuse: Set<string>;
  /** Each message is accepted only after this many ms. */
  delayMs: number;
  /** While true, MAIL FROM is never answered: senders hang before any message is transmitted. */
  hold: boolean;
  /** Closes the listener (senders then fail to connect) until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export const SMTP_USER = "mailer";
/** Characters that must be percent-encoded in the URL, to test the decoding. */
export const SMTP_PASSWORD = "p@ss:w/rd%secret";

/** `implicitTls`: TLS from the first byte (smtps://) instead of STARTTLS. */
export async function startTestSmtp(opts: { implicitTls?: boolean } = {}): Promise<TestSmtp> {
  const dir = mkdtempSync(join(tmpdir(), "stablegate-smtp-"));
  const keyFile = join(dir, "key.pem");
  const caFile = join(dir, "cert.pem");
  const made = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      keyFile,
      "-out",
      caFile,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  const key = readFileSync(keyFile, "utf8");
  const ca = readFileSync(caFile, "utf8");
  const messages: ReceivedEmail[] = [];
  const refuse = new Set<string>();
  const state = { delayMs: 0, hold: false };
  let port = 0;

  const make = () =>
    new SMTPServer({
      secure: opts.implicitTls ?? false,
      key,
      cert: ca,
      logger: false,
      // Credentials only over TLS (smtp-server refuses AUTH before STARTTLS unless told otherwise).
      onAuth(auth, _session, done) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return done(null, { user: SMTP_USER });
        done(new Error("535 bad credentials"));
      },
      onMailFrom(_address, session, done) {
        if (state.hold) return;
        if (!session.secure) return done(Object.assign(new Error("530 STARTTLS first"), { responseCode: 530 }));
        done();
      },
      onRcptTo(address, _session, done) {
        if (refuse.has(address.address.toLowerCase()))
          return done(Object.assign(new Error("mailbox unavailable"), { responseCode: 550 }));
        done();
      },
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          const finish = () => {
            const raw = Buffer.concat(chunks).toString("utf8");
            messages.push({
              ...parseMessage(raw),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              secure: session.secure,
            });
            done();
          };
          if (state.delayMs > 0) setTimeout(finish, state.delayMs);
          else finish();
        });
      },
    });

  let server = make();
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server.server.address() as AddressInfo).port;
        resolve();
      });
    });
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  await listen();
  return {
    get port() {
      return port;
    },
    url: `${opts.implicitTls ? "smtps" : "smtp"}://${SMTP_USER}:${encodeURIComponent(SMTP_PASSWORD)}@127.0.0.1:${port}`,
    ca,
    caFile,
    messages,
    refuse,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    get hold() {
      return state.hold;
    },
    set hold(on: boolean) {
      state.hold = on;
    },
    stop: close,
    async start() {
      server = make();
      await listen();
    },
    async close() {
      await close().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Headers (unfolded, lower-case names) and the body of one MIME entity. */
function splitEntity(entity: string): { headers: Record<string, string>; body: string } {
  const at = entity.indexOf("\r\n\r\n");
  const head = at < 0 ? entity : entity.slice(0, at);
  const body = at < 0 ? "" : entity.slice(at + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] ??= line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decodeBody(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? "").toLowerCase()) {
    case "base64":
      return Buffer.from(body.replace(/\s+/g, ""), "base64");
    case "quoted-printable":
      return Buffer.from(
        body
          .replace(/=\r\n/g, "")
          .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        "latin1",
      );
    default:
      return Buffer.from(body, "utf8");
  }
}

/** RFC 2047 encoded words (`=?UTF-8?Q?...?=`), as nodemailer writes a subject that is not ASCII. */
export function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=\s*/gi, (_m, _charset, kind: string, text: string) =>
    kind.toUpperCase() === "B"
      ? Buffer.from(text, "base64").toString("utf8")
      : decodeBody(text.replace(/_/g, " "), "quoted-printable").toString("utf8"),
  );
}

function parseMessage(raw: string) {
  const top = splitEntity(raw);
  const out = {
    headers: top.headers,
    subject: decodeWords(top.headers.subject ?? ""),
    text: "",
    html: "",
    attachments: [] as ReceivedEmail["attachments"],
  };
  const walk = (entity: { headers: Record<string, string>; body: string }) => {
    const type = entity.headers["content-type"] ?? "text/plain";
    const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
    if (type.toLowerCase().startsWith("multipart/") && boundary) {
      const parts = entity.body.split(`--${boundary}`).slice(1);
      for (const part of parts) {
        if (part.startsWith("--")) break;
        walk(splitEntity(part.replace(/^\r\n/, "")));
      }
      return;
    }
    const content = decodeBody(entity.body, entity.headers["content-transfer-encoding"]);
    const disposition = entity.headers["content-disposition"] ?? "";
    const filename = /filename="?([^";]+)"?/i.exec(disposition)?.[1];
    if (filename) out.attachments.push({ filename, contentType: type.split(";")[0]!, content });
    else if (type.toLowerCase().startsWith("text/html")) out.html = content.toString("utf8");
    else if (type.toLowerCase().startsWith("text/plain")) out.text = content.toString("utf8");
  };
  walk(top);
  return out;
}
