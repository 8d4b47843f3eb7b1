import nodemailer from "nodemailer";
import { assertOutsideTransaction } from "../db/transaction-scope.ts";
import type { SmtpTarget } from "../lib/smtp-url.ts";

/** A file sent with an email (the documents' PDFs). */
export interface Attachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** One email as it goes out. */
export interface OutgoingEmail {
  from: { name: string; address: string };
  to: string;
  replyTo: string | null;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  date: Date;
  /** List-Unsubscribe: where the merchant's users turn these notices off (the dashboard). */
  unsubscribeUrl: string | null;
  attachments: Attachment[];
}

/** What tests and `stablegate dev` change: whom TLS trusts (the test server's own certificate). */
export interface SmtpTlsOptions {
  /** A CA (PEM) trusted besides the system's; tests hand their self-signed certificate. */
  ca?: string;
  /** `stablegate dev` only: its catcher on loopback has a throwaway certificate. */
  trustAnyCertificate?: boolean;
  /** Tests shorten it; a hung server never holds a worker slot longer. */
  timeoutMs?: number;
}

/** Sends an email; resolves once the server accepted it, rejects with the server's answer. */
export type SendEmail = (email: OutgoingEmail) => Promise<void>;

/**
 * An SMTP transport: `smtps://` is TLS from the first byte, `smtp://` requires STARTTLS (nodemailer's
 * `requireTLS`), so credentials never cross the network in clear. One connection per send: the
 * outbox is small and a pooled connection would outlive a server that went away. Never inside a
 * database transaction: the SMTP server would hold its locks for as long as it takes.
 */
export function smtpTransport(target: SmtpTarget, tls: SmtpTlsOptions = {}): SendEmail {
  const timeout = tls.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: target.implicitTls,
    requireTLS: !target.implicitTls,
    auth: target.user === null ? undefined : { user: target.user, pass: target.password ?? "" },
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    tls: {
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.trustAnyCertificate ? { rejectUnauthorized: false } : {}),
    },
  });
  return async (email) => {
    assertOutsideTransaction("an SMTP send");
    await transport.sendMail({
      from: email.from,
      to: email.to,
      replyTo: email.replyTo ?? undefined,
      subject: email.subject,
      text: email.text,
      html: email.html,
      messageId: email.messageId,
      date: email.date,
      list: email.unsubscribeUrl ? { unsubscribe: email.unsubscribeUrl } : undefined,
      attachments: email.attachments.map((a) => ({
        filename: a.filename,
        contentType: a.contentType,
        content: Buffer.from(a.content),
      })),
    });
  };
}

/**
 * An SMTP error as it may be shown: the server's reply (which names no password) or the socket's
 * error, never the transport's options.
 */
export function smtpError(error: unknown): { message: string; permanent: boolean } {
  const e = error as { responseCode?: number; response?: string; code?: string; message?: string };
  const code = typeof e.responseCode === "number" ? e.responseCode : null;
  const message = (e.response ?? e.message ?? String(error)).replace(/\s+/g, " ").slice(0, 300);
  // 550-554: the server refuses this recipient or message for good; a retry gets the same answer.
  // Anything else (4xx, 535 bad credentials the operator may fix, network errors) is tried again.
  return {
    message: code === null ? message : `${code} ${message.replace(/^\d{3}\s*/, "")}`,
    permanent: code !== null && code >= 550 && code <= 554,
  };
}
