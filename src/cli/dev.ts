import { UsageError } from "./args.ts";

/** `stablegate dev`: filled in with the on-chain work (local anvil, test USDC, paid example). */
export async function runDev(_argv: string[], _env: Record<string, string | undefined>): Promise<number> {
  throw new UsageError("stablegate dev is not available yet");
}
