// Each migration is imported as text so `bun build --compile` embeds it in the binary.
// Add new files here in order; a test checks this list against the migrations/ folder.
import m001 from "../../migrations/001_core.sql" with { type: "text" };
import m002 from "../../migrations/002_chain.sql" with { type: "text" };
import m003 from "../../migrations/003_webhooks.sql" with { type: "text" };
import m004 from "../../migrations/004_crosschain.sql" with { type: "text" };
import m005 from "../../migrations/005_crosschain_burn_per_payment.sql" with { type: "text" };
import m006 from "../../migrations/006_retention.sql" with { type: "text" };
import m007 from "../../migrations/007_dashboard_users.sql" with { type: "text" };
import m008 from "../../migrations/008_payment_links.sql" with { type: "text" };
import m009 from "../../migrations/009_payment_search.sql" with { type: "text" };
import m010 from "../../migrations/010_key_last_used.sql" with { type: "text" };
import m011 from "../../migrations/011_events_by_payment.sql" with { type: "text" };
import m012 from "../../migrations/012_any_chain.sql" with { type: "text" };
import m013 from "../../migrations/013_bridges.sql" with { type: "text" };
import m014 from "../../migrations/014_recoveries.sql" with { type: "text" };

export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  { version: 1, name: "001_core.sql", sql: m001 },
  { version: 2, name: "002_chain.sql", sql: m002 },
  { version: 3, name: "003_webhooks.sql", sql: m003 },
  { version: 4, name: "004_crosschain.sql", sql: m004 },
  { version: 5, name: "005_crosschain_burn_per_payment.sql", sql: m005 },
  { version: 6, name: "006_retention.sql", sql: m006 },
  { version: 7, name: "007_dashboard_users.sql", sql: m007 },
  { version: 8, name: "008_payment_links.sql", sql: m008 },
  { version: 9, name: "009_payment_search.sql", sql: m009 },
  { version: 10, name: "010_key_last_used.sql", sql: m010 },
  { version: 11, name: "011_events_by_payment.sql", sql: m011 },
  { version: 12, name: "012_any_chain.sql", sql: m012 },
  { version: 13, name: "013_bridges.sql", sql: m013 },
  { version: 14, name: "014_recoveries.sql", sql: m014 },
];
