import { type Db, sql } from "../db/engine.ts";

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
  return {
    find: async (accountId: string): Promise<BusinessRow | null> =>
      normalise(await db.get<BusinessRow>(sql`SELECT * FROM business_details WHERE account_id = ${accountId}`)),
    /** The checkout asks on every render and status poll: the name alone, never the logo's bytes. */
    legalName: async (accountId: string): Promise<string | null> =>
      (
        await db.get<Pick<BusinessRow, "legal_name">>(
          sql`SELECT legal_name FROM business_details WHERE account_id = ${accountId}`,
        )
      )?.legal_name ?? null,
    /** A logo by its content's hash, whichever account uploaded it (the same file is the same logo). */
    findLogo: (sha256: string) =>
      db.get<Pick<BusinessRow, "logo" | "logo_type">>(
        sql`SELECT logo, logo_type FROM business_details WHERE logo_sha256 = ${sha256} LIMIT 1`,
      ),
    /**
     * An upsert each, this and setLogo, so the first write of either kind makes the row and
     * neither clears the other's fields.
     */
    setText: (accountId: string, text: BusinessText, now: number) =>
      db.run(
        sql`INSERT INTO business_details (account_id, legal_name, address, tax_id, support_email, updated_at)
            VALUES (${accountId}, ${text.legal_name}, ${text.address}, ${text.tax_id}, ${text.support_email}, ${now})
            ON CONFLICT (account_id) DO UPDATE SET legal_name = excluded.legal_name, address = excluded.address,
              tax_id = excluded.tax_id, support_email = excluded.support_email, updated_at = excluded.updated_at`,
      ),
    /** `logo` null removes it. */
    setLogo: (accountId: string, logo: { base64: string; type: LogoType; sha256: string } | null, now: number) =>
      db.run(
        sql`INSERT INTO business_details (account_id, logo, logo_type, logo_sha256, updated_at)
            VALUES (${accountId}, ${logo?.base64 ?? null}, ${logo?.type ?? null}, ${logo?.sha256 ?? null}, ${now})
            ON CONFLICT (account_id) DO UPDATE SET logo = excluded.logo, logo_type = excluded.logo_type,
              logo_sha256 = excluded.logo_sha256, updated_at = excluded.updated_at`,
      ),
  };
}

function normalise(row: BusinessRow | null | undefined): BusinessRow | null {
  return row ? { ...row, updated_at: Number(row.updated_at) } : null;
}
