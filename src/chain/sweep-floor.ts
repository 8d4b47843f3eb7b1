/**
 * Sweeps (or bridges) of a finished payment's late funds a day, at most, per deposit address and
 * chain: each costs the relayer a transaction, and anyone can send funds to an address. Smaller
 * sums are not moved at all: the sweep floor (`ChainInfo.sweepFloor`, STABLEGATE_SWEEP_FLOOR).
 */
export const LATE_SWEEPS_PER_DAY = 4;
