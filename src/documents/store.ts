import type { Db } from "../db/index.ts";

/** A business_details row as stored (migrations/sqlite/022_business_details.sql). */
export interface BusinessRow {
  account_id: string;
  legal_name: string | null;
  /** The address lines joined by "\n". */
  address: string | null;
  tax_id: string | null;
  support_email: string | null;
  logo: string | null;
  logo_type: LogoType | null;
  logo_sha256: string | null;
  updated_at: number;
}

export type LogoType = "image/png" | "image/jpeg";

/** The text fields the settings form and the CLI write together. */
export type BusinessText = Pick<BusinessRow, "legal_name" | "address" | "tax_id" | "support_email">;

export type BusinessStore = ReturnType<typeof createBusinessStore>;

export function createBusinessStore(db: Db) {
  const find = db.query<BusinessRow, [string]>("SELECT * FROM business_details WHERE account_id = ?");
  // The checkout asks on every render and status poll: the name alone, never the logo's bytes.
  const legalName = db.query<Pick<BusinessRow, "legal_name">, [string]>(
    "SELECT legal_name FROM business_details WHERE account_id = ?",
  );
  const findLogo = db.query<Pick<BusinessRow, "logo" | "logo_type">, [string]>(
    "SELECT logo, logo_type FROM business_details WHERE logo_sha256 = ? LIMIT 1",
  );
  // An upsert each, so the first write of either kind makes the row and neither clears the other's fields.
  const setText = db.query(
    `INSERT INTO business_details (account_id, legal_name, address, tax_id, support_email, updated_at)
     VALUES ($account_id, $legal_name, $address, $tax_id, $support_email, $updated_at)
     ON CONFLICT (account_id) DO UPDATE SET legal_name = excluded.legal_name, address = excluded.address,
       tax_id = excluded.tax_id, support_email = excluded.support_email, updated_at = excluded.updated_at`,
  );
  const setLogo = db.query(
    `INSERT INTO business_details (account_id, logo, logo_type, logo_sha256, updated_at)
     VALUES ($account_id, $logo, $logo_type, $logo_sha256, $updated_at)
     ON CONFLICT (account_id) DO UPDATE SET logo = excluded.logo, logo_type = excluded.logo_type,
       logo_sha256 = excluded.logo_sha256, updated_at = excluded.updated_at`,
  );

  return {
    find: (accountId: string): BusinessRow | null => normalise(find.get(accountId)),
    legalName: (accountId: string): string | null => legalName.get(accountId)?.legal_name ?? null,
    /** A logo by its content's hash, whichever account uploaded it (the same file is the same logo). */
    findLogo: (sha256: string) => findLogo.get(sha256) ?? null,
    setText: (accountId: string, text: BusinessText, now: number) =>
      setText.run({ account_id: accountId, ...text, updated_at: now }),
    /** `logo` null removes it. */
    setLogo: (accountId: string, logo: { base64: string; type: LogoType; sha256: string } | null, now: number) =>
      setLogo.run({
        account_id: accountId,
        logo: logo?.base64 ?? null,
        logo_type: logo?.type ?? null,
        logo_sha256: logo?.sha256 ?? null,
        updated_at: now,
      }),
  };
}

function normalise(row: BusinessRow | null | undefined): BusinessRow | null {
  return row ? { ...row, updated_at: Number(row.updated_at) } : null;
}
