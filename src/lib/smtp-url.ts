import { ConfigError } from "./errors.ts";

/** Where email goes: an SMTP server, and whether TLS starts at once (smtps) or by STARTTLS (smtp). */
export interface SmtpTarget {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte; smtp://: STARTTLS, required. */
  implicitTls: boolean;
  user: string | null;
  /** Never logged, never in an error or /readyz: only the transport sees it. */
  password: string | null;
}

/**
 * Parses STABLEGATE_SMTP_URL (`smtp://user:pass@host:587`, `smtps://...:465`), user and password
 * percent-decoded. The messages name the variable and never repeat the value: it holds a password.
 */
export function parseSmtpUrl(name: string, raw: string): SmtpTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, "must be a URL such as smtp://user:password@mail.example.com:587");
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:")
    throw new ConfigError(name, `must start with smtp:// (STARTTLS) or smtps:// (implicit TLS), not ${url.protocol}//`);
  if (!url.hostname) throw new ConfigError(name, "has no host");
  if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash)
    throw new ConfigError(name, "must be only smtp[s]://user:password@host:port, with no path or query");
  const implicitTls = url.protocol === "smtps:";
  const decode = (part: string, what: string): string | null => {
    if (part === "") return null;
    try {
      return decodeURIComponent(part);
    } catch {
      throw new ConfigError(name, `has a badly percent-encoded ${what}`);
    }
  };
  const user = decode(url.username, "user name");
  const password = decode(url.password, "password");
  if (password !== null && user === null) throw new ConfigError(name, "has a password but no user name");
  return {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : implicitTls ? 465 : 587,
    implicitTls,
    user,
    password,
  };
}

/** The target as it may be shown: no user name, no password. */
export const describeSmtp = (t: SmtpTarget) =>
  `${t.implicitTls ? "smtps" : "smtp"}://${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;

/** A bare address (`billing@shop.example`): what STABLEGATE_SMTP_FROM and recipients must be. */
export const EMAIL_ADDRESS =
  /^[^\s@<>()",;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
