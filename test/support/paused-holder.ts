/**
 * A lease holder frozen in the middle of a fenced write: `bun test/support/paused-holder.ts URL
 * NAME TTL_MS` takes the lease, opens a transaction, checks the lease there (locking its row, as
 * every fenced write does), then stops itself with SIGSTOP, so its session stays in that
 * transaction; woken with SIGCONT, it tries its write and says whether it committed.
 */
import { sql } from "../../src/db/engine.ts";
import { PgDb } from "../../src/db/postgres.ts";
import { createLeaseStore } from "../../src/leases/store.ts";

const [url, name, ttl] = process.argv.slice(2);
const db = await PgDb.open(url!);
const leases = createLeaseStore(db);
const token = await leases.take(name!, "paused", Number(ttl));
if (token === null) throw new Error(`lease ${name} is held by another`);
try {
  await db.transaction(async () => {
    if (!(await leases.holds(name!, "paused", token))) throw new Error("lost the lease at once");
    console.log("in transaction");
    process.kill(process.pid, "SIGSTOP");
    // Woken (SIGCONT): the write the check guarded.
    await db.run(sql`UPDATE leases SET holder = 'written while paused' WHERE name = ${name!}`);
  });
  console.log("committed");
} catch (error) {
  console.log(`failed: ${(error as Error).message}`);
}
await db.close();
