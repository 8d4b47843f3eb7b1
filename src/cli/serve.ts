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
  return 0;
}
