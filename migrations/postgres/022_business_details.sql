-- The merchant's business details (docs/documents.md), printed on invoices and receipts: at most
-- one row per account, absent until first set. Every field is optional; the logo is stored here,
-- as base64 text so both engines keep it in a plain column, and served at /logos/{logo_sha256}.
CREATE TABLE business_details (
  account_id    TEXT PRIMARY KEY REFERENCES accounts(id),
  legal_name    TEXT,                     -- shown instead of the account's name where set
  address       TEXT,                     -- its lines, joined by "\n"
  tax_id        TEXT,
  support_email TEXT,
  logo          TEXT,                     -- base64 of the PNG or JPEG file as uploaded
  logo_type     TEXT CHECK (logo_type IN ('image/png', 'image/jpeg')),
  logo_sha256   TEXT,                     -- hex SHA-256 of the file: its public, content-addressed name
  updated_at    BIGINT NOT NULL,
  CHECK ((logo IS NULL) = (logo_type IS NULL) AND (logo IS NULL) = (logo_sha256 IS NULL))
);
CREATE INDEX business_details_logo ON business_details(logo_sha256) WHERE logo_sha256 IS NOT NULL;
