import { loadConfig } from "../config.ts";
import { startServer } from "../server.ts";

/** `stablegate serve`: runs until SIGTERM or SIGINT, then stops the loops and the listener. */
export async function runServe(env: Record<string, string | undefined>): Promise<number> {
  const config = loadConfig(env);
  const server = await startServer(config);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.stop();
  // stop() keeps to its deadline; whatever it abandoned (a hung socket) must not keep us alive.
  process.exit(0);
}
