/**
 * Speed policies (docs/speed.md): how deep a payer's transfer and the settlement must be in the
 * chain before they count. `fast`: in a block; `standard`: the chain's confirmation count;
 * `final`: at or below the block the chain's finality tag names.
 */
export const SPEEDS = ["fast", "standard", "final"] as const;
export type Speed = (typeof SPEEDS)[number];

export const isSpeed = (value: unknown): value is Speed => SPEEDS.includes(value as Speed);

/** The block tag `final` reads: `finalized` (final on L1), or `safe` (posted to L1) where the operator prefers. */
export const FINAL_TAGS = ["finalized", "safe"] as const;
export type FinalTag = (typeof FINAL_TAGS)[number];
