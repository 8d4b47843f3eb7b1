import type { Clock } from "../lib/clock.ts";
import { NotFoundError, ValidationError } from "../lib/errors.ts";
import { type CheckedLogo, checkLogo } from "./logo.ts";
import type { BusinessRow, BusinessStore, BusinessText } from "./store.ts";

export const MAX_ADDRESS_LINES = 6;
const LIMITS = { legal_name: 200, address_line: 120, tax_id: 64, support_email: 254 } as const;
/** An address a mail server would take, no more: the support email is shown and linked, never sent to here. */
const EMAIL = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/;

/** What the settings form and the CLI send; a field left undefined keeps what is stored. */
export interface BusinessInput {
  legalName?: string;
  addressLines?: string[];
  taxId?: string;
  supportEmail?: string;
}

/** The merchant's details as documents print them: every field optional, the address as lines. */
export interface BusinessDetails {
  legalName: string | null;
  addressLines: string[];
  taxId: string | null;
  supportEmail: string | null;
  /** Where the logo is served (`/logos/{sha256}`), or null without one. */
  logoPath: string | null;
  logo: { bytes: Uint8Array; type: "image/png" | "image/jpeg" } | null;
}

export const EMPTY_DETAILS: BusinessDetails = {
  legalName: null,
  addressLines: [],
  taxId: null,
  supportEmail: null,
  logoPath: null,
  logo: null,
};

/** The account's business details (docs/documents.md): set from the dashboard and the CLI. */
export function createBusinessService(w: {
  store: BusinessStore;
  clock: Clock;
  /** Whether the account exists, so a typo in an id is refused rather than making a row. */
  accountExists: (accountId: string) => Promise<boolean> | boolean;
}) {
  const { store, clock } = w;
  const mustExist = async (accountId: string) => {
    if (!(await w.accountExists(accountId))) throw new NotFoundError(`no account ${accountId}`);
  };
  return {
    details: async (accountId: string): Promise<BusinessDetails> => detailsOf(await store.find(accountId)),
    /** The legal name alone, where set: what the checkout shows instead of the account's name. */
    legalName: (accountId: string): Promise<string | null> => store.legalName(accountId),

    /** Checks every given field first: one bad field refuses the whole change. */
    async setText(accountId: string, input: BusinessInput): Promise<BusinessDetails> {
      await mustExist(accountId);
      const current = await store.find(accountId);
      const next: BusinessText = {
        legal_name: input.legalName === undefined ? (current?.legal_name ?? null) : line("legal name", input.legalName),
        address: input.addressLines === undefined ? (current?.address ?? null) : addressOf(input.addressLines),
        tax_id: input.taxId === undefined ? (current?.tax_id ?? null) : line("tax id", input.taxId),
        support_email: input.supportEmail === undefined ? (current?.support_email ?? null) : email(input.supportEmail),
      };
      await store.setText(accountId, next, clock.now());
      return detailsOf(await store.find(accountId));
    },

    /** Checks the file by its content (src/documents/logo.ts) before anything is stored. */
    async setLogo(accountId: string, bytes: Uint8Array): Promise<CheckedLogo> {
      await mustExist(accountId);
      const logo = await checkLogo(bytes);
      await store.setLogo(accountId, logo, clock.now());
      return logo;
    },

    async removeLogo(accountId: string): Promise<void> {
      await mustExist(accountId);
      await store.setLogo(accountId, null, clock.now());
    },

    /** A logo by its public name, the hex SHA-256 of its bytes. */
    async logo(sha256: string): Promise<{ bytes: Uint8Array<ArrayBuffer>; type: string } | null> {
      if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
      const row = await store.findLogo(sha256);
      return row?.logo && row.logo_type
        ? { bytes: new Uint8Array(Buffer.from(row.logo, "base64")), type: row.logo_type }
        : null;
    },
  };
}

export type BusinessService = ReturnType<typeof createBusinessService>;

/** The details as the documents and the settings page read them. */
export function detailsOf(row: BusinessRow | null): BusinessDetails {
  if (!row) return EMPTY_DETAILS;
  return {
    legalName: row.legal_name,
    addressLines: row.address ? row.address.split("\n") : [],
    taxId: row.tax_id,
    supportEmail: row.support_email,
    logoPath: row.logo_sha256 ? `/logos/${row.logo_sha256}` : null,
    logo: row.logo && row.logo_type ? { bytes: Buffer.from(row.logo, "base64"), type: row.logo_type } : null,
  };
}

/** One printed line: trimmed, no control characters (a line break would forge another line), within its limit. */
function line(what: "legal name" | "tax id" | "address line", text: string): string | null {
  const value = text.trim();
  if (value === "") return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\u2028\u2029]/.test(value)) throw new ValidationError(`${what} must be one line of text`);
  const limit = LIMITS[what === "legal name" ? "legal_name" : what === "tax id" ? "tax_id" : "address_line"];
  if (value.length > limit) throw new ValidationError(`${what} must be at most ${limit} characters`);
  return value;
}

function addressOf(lines: string[]): string | null {
  const kept = lines.map((text) => line("address line", text)).filter((text): text is string => text !== null);
  if (kept.length > MAX_ADDRESS_LINES) throw new ValidationError(`address must be at most ${MAX_ADDRESS_LINES} lines`);
  return kept.length ? kept.join("\n") : null;
}

function email(text: string): string | null {
  const value = text.trim();
  if (value === "") return null;
  if (value.length > LIMITS.support_email || !EMAIL.test(value))
    throw new ValidationError("support email must be an email address, such as help@shop.example");
  return value;
}

/** The details as the CLI prints them (the logo by its public path, never its bytes). */
export function businessJson(accountId: string, d: BusinessDetails) {
  return {
    account_id: accountId,
    legal_name: d.legalName,
    address_lines: d.addressLines,
    tax_id: d.taxId,
    support_email: d.supportEmail,
    logo_path: d.logoPath,
  };
}
