import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Hex } from "viem";
import { generatePrivateKey } from "viem/accounts";

/**
 * The relayer key pays settlement gas and nothing else: deposit contracts only ever pay the
 * committed recipients. Without STABLEGATE_RELAYER_KEY, one is generated on first start and
 * kept in the data dir, readable by the owner only.
 */
export function loadRelayerKey(dataDir: string, configured: Hex | undefined): Hex {
  if (configured) return configured;
  const path = join(dataDir, "relayer.key");
  if (existsSync(path)) {
    const key = readFileSync(path, "utf8").trim();
    if (!/^0x[0-9a-f]{64}$/i.test(key)) throw new Error(`${path}: not a hex private key; fix or remove it`);
    return key as Hex;
  }
  const key = generatePrivateKey();
  // "wx": never overwrite a key another process wrote a moment ago.
  writeFileSync(path, `${key}\n`, { mode: 0o600, flag: "wx" });
  return key;
}
