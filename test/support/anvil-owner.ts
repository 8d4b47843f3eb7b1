/**
 * `bun test/support/anvil-owner.ts`: starts an anvil, prints its RPC URL and waits to be killed;
 * with `--stop`, stops it again first and prints "stopped".
 */
import { startAnvil } from "../../src/dev/anvil.ts";

const anvil = await startAnvil();
if (process.argv.includes("--stop")) {
  await anvil.stop();
  console.log("stopped");
} else {
  console.log(anvil.rpcUrl);
}
setInterval(() => {}, 60_000);
