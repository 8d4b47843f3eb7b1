// Each migration is imported as text so `bun build --compile` embeds it in the binary. One list
// per engine, in order; a test checks each against its folder (migrations/sqlite/, migrations/postgres/).
// PostgreSQL begins at the schema SQLite reached through 014, in one file; every later change is a
// file of the same number and name in both folders.

import p014 from "../../migrations/postgres/014_schema.sql" with { type: "text" };
import p015 from "../../migrations/postgres/015_webhook_claims.sql" with { type: "text" };
import p016 from "../../migrations/postgres/016_leases.sql" with { type: "text" };
import p017 from "../../migrations/postgres/017_rate_limits.sql" with { type: "text" };
import p018 from "../../migrations/postgres/018_payment_link_forms.sql" with { type: "text" };
import p019 from "../../migrations/postgres/019_deposit_v3.sql" with { type: "text" };
import p020 from "../../migrations/postgres/020_speed.sql" with { type: "text" };
import p021 from "../../migrations/postgres/021_refunds.sql" with { type: "text" };
import p022 from "../../migrations/postgres/022_business_details.sql" with { type: "text" };
import p023 from "../../migrations/postgres/023_email.sql" with { type: "text" };
import p024 from "../../migrations/postgres/024_status_count_deltas.sql" with { type: "text" };
import p025 from "../../migrations/postgres/025_account_changes.sql" with { type: "text" };
import p026 from "../../migrations/postgres/026_deposit_lookup.sql" with { type: "text" };
import p027 from "../../migrations/postgres/027_authorizations.sql" with { type: "text" };
import p028 from "../../migrations/postgres/028_x402_settlements.sql" with { type: "text" };
import s001 from "../../migrations/sqlite/001_core.sql" with { type: "text" };
import s002 from "../../migrations/sqlite/002_chain.sql" with { type: "text" };
import s003 from "../../migrations/sqlite/003_webhooks.sql" with { type: "text" };
import s004 from "../../migrations/sqlite/004_crosschain.sql" with { type: "text" };
import s005 from "../../migrations/sqlite/005_crosschain_burn_per_payment.sql" with { type: "text" };
import s006 from "../../migrations/sqlite/006_retention.sql" with { type: "text" };
import s007 from "../../migrations/sqlite/007_dashboard_users.sql" with { type: "text" };
import s008 from "../../migrations/sqlite/008_payment_links.sql" with { type: "text" };
import s009 from "../../migrations/sqlite/009_payment_search.sql" with { type: "text" };
import s010 from "../../migrations/sqlite/010_key_last_used.sql" with { type: "text" };
import s011 from "../../migrations/sqlite/011_events_by_payment.sql" with { type: "text" };
import s012 from "../../migrations/sqlite/012_any_chain.sql" with { type: "text" };
import s013 from "../../migrations/sqlite/013_bridges.sql" with { type: "text" };
import s014 from "../../migrations/sqlite/014_recoveries.sql" with { type: "text" };
import s015 from "../../migrations/sqlite/015_webhook_claims.sql" with { type: "text" };
import s016 from "../../migrations/sqlite/016_leases.sql" with { type: "text" };
import s017 from "../../migrations/sqlite/017_rate_limits.sql" with { type: "text" };
import s018 from "../../migrations/sqlite/018_payment_link_forms.sql" with { type: "text" };
import s019 from "../../migrations/sqlite/019_deposit_v3.sql" with { type: "text" };
import s020 from "../../migrations/sqlite/020_speed.sql" with { type: "text" };
import s021 from "../../migrations/sqlite/021_refunds.sql" with { type: "text" };
import s022 from "../../migrations/sqlite/022_business_details.sql" with { type: "text" };
import s023 from "../../migrations/sqlite/023_email.sql" with { type: "text" };
import s024 from "../../migrations/sqlite/024_status_count_deltas.sql" with { type: "text" };
import s025 from "../../migrations/sqlite/025_account_changes.sql" with { type: "text" };
import s026 from "../../migrations/sqlite/026_deposit_lookup.sql" with { type: "text" };
import s027 from "../../migrations/sqlite/027_authorizations.sql" with { type: "text" };
import s028 from "../../migrations/sqlite/028_x402_settlements.sql" with { type: "text" };

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 1, name: "001_core.sql", sql: s001 },
  { version: 2, name: "002_chain.sql", sql: s002 },
  { version: 3, name: "003_webhooks.sql", sql: s003 },
  { version: 4, name: "004_crosschain.sql", sql: s004 },
  { version: 5, name: "005_crosschain_burn_per_payment.sql", sql: s005 },
  { version: 6, name: "006_retention.sql", sql: s006 },
  { version: 7, name: "007_dashboard_users.sql", sql: s007 },
  { version: 8, name: "008_payment_links.sql", sql: s008 },
  { version: 9, name: "009_payment_search.sql", sql: s009 },
  { version: 10, name: "010_key_last_used.sql", sql: s010 },
  { version: 11, name: "011_events_by_payment.sql", sql: s011 },
  { version: 12, name: "012_any_chain.sql", sql: s012 },
  { version: 13, name: "013_bridges.sql", sql: s013 },
  { version: 14, name: "014_recoveries.sql", sql: s014 },
  { version: 15, name: "015_webhook_claims.sql", sql: s015 },
  { version: 16, name: "016_leases.sql", sql: s016 },
  { version: 17, name: "017_rate_limits.sql", sql: s017 },
  { version: 18, name: "018_payment_link_forms.sql", sql: s018 },
  { version: 19, name: "019_deposit_v3.sql", sql: s019 },
  { version: 20, name: "020_speed.sql", sql: s020 },
  { version: 21, name: "021_refunds.sql", sql: s021 },
  { version: 22, name: "022_business_details.sql", sql: s022 },
  { version: 23, name: "023_email.sql", sql: s023 },
  { version: 24, name: "024_status_count_deltas.sql", sql: s024 },
  { version: 25, name: "025_account_changes.sql", sql: s025 },
  { version: 26, name: "026_deposit_lookup.sql", sql: s026 },
  { version: 27, name: "027_authorizations.sql", sql: s027 },
  { version: 28, name: "028_x402_settlements.sql", sql: s028 },
];

export const POSTGRES_MIGRATIONS: ReadonlyArray<Migration> = [
  { version: 14, name: "014_schema.sql", sql: p014 },
  { version: 15, name: "015_webhook_claims.sql", sql: p015 },
  { version: 16, name: "016_leases.sql", sql: p016 },
  { version: 17, name: "017_rate_limits.sql", sql: p017 },
  { version: 18, name: "018_payment_link_forms.sql", sql: p018 },
  { version: 19, name: "019_deposit_v3.sql", sql: p019 },
  { version: 20, name: "020_speed.sql", sql: p020 },
  { version: 21, name: "021_refunds.sql", sql: p021 },
  { version: 22, name: "022_business_details.sql", sql: p022 },
  { version: 23, name: "023_email.sql", sql: p023 },
  { version: 24, name: "024_status_count_deltas.sql", sql: p024 },
  { version: 25, name: "025_account_changes.sql", sql: p025 },
  { version: 26, name: "026_deposit_lookup.sql", sql: p026 },
  { version: 27, name: "027_authorizations.sql", sql: p027 },
  { version: 28, name: "028_x402_settlements.sql", sql: p028 },
];
