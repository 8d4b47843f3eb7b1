/**
 * STABLEGATE_SWEEP_FLOOR: the USDC below which a deposit address's funds are not moved at the
 * relayer's cost (see `ChainInfo.sweepFloor`). One amount for every chain ("0.50"), or one per
 * chain name ("ethereum=5.00,base=0.10"), the chain table's (or a custom chain's one cent)
 * elsewhere.
 */
import { parseAmount, typedAmount } from "../lib/money.ts";
import { CHAINS, CUSTOM_SWEEP_FLOOR } from "./chains.ts";

export const SWEEP_FLOOR_VARIABLE = "STABLEGATE_SWEEP_FLOOR";

/**
 * Sweeps (or bridges) of a finished payment's late funds a day, at most, per deposit address and
 * chain: each costs the relayer a transaction, and anyone can send funds to an address.
 */
export const LATE_SWEEPS_PER_DAY = 4;

/** The floor of each chain by name, as the environment sets it; throws via `fail` on a bad value. */
export function sweepFloors(
  raw: string | undefined,
  fail: (variable: string, problem: string) => never,
): (chainName: string) => bigint {
  const text = raw?.trim();
  const fallback = (name: string) => CHAINS.get(name)?.sweepFloor ?? CUSTOM_SWEEP_FLOOR;
  if (!text) return fallback;
  const amount = (value: string, where: string) =>
    parseAmount(typedAmount(value) ?? "") ??
    fail(SWEEP_FLOOR_VARIABLE, `${where}must be an amount in USDC such as 0.50, got "${value}"`);
  if (!text.includes("=")) {
    const all = amount(text, "");
    return () => all;
  }
  const byName = new Map<string, bigint>();
  for (const entry of text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf("=");
    const name = entry.slice(0, eq).trim();
    if (eq < 0 || !/^[a-z0-9-]{1,40}$/.test(name))
      fail(SWEEP_FLOOR_VARIABLE, `must be an amount, or chain=amount pairs separated by commas, got "${entry}"`);
    byName.set(name, amount(entry.slice(eq + 1).trim(), `${name}: `));
  }
  return (name) => byName.get(name) ?? fallback(name);
}
