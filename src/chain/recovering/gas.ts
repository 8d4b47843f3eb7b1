/**
 * The most gas a recovery transaction may use, whatever the token. `recover` calls the token's
 * own `transfer`, which a hostile contract can make as costly as it likes (storage writes, or
 * work someone else is paid for), at the relayer's expense: a request whose estimate is above
 * this is refused before anything is stored or signed, and no recovery is ever signed with a
 * higher gas limit, so a token that costs more when sent than when estimated stops here too.
 *
 * Measured on anvil with the test tokens (contracts/test/TestToken.sol, 18 decimals), gas used:
 *
 *   | recover of                                 | version 1 | version 2 |
 *   |--------------------------------------------|-----------|-----------|
 *   | an ERC-20, deploying the deposit clone     |   109,393 |   115,770 |
 *   | an ERC-20, the clone already there         |    50,640 |    56,206 |
 *   | the native coin, deploying the clone       |   109,336 |   112,761 |
 *   | the native coin, the clone already there   |    42,695 |    45,309 |
 *
 * (the rows that deploy the clone also credit a payout that held none of the token; the others
 * add to its balance, about 15,000 less). A real token's `transfer` costs more than the test token's (a proxy, a fee, a
 * hook, vote checkpoints: a few tens of thousands up to about 100,000 more), and the estimate of
 * an L2 like Arbitrum includes its L1 data part; 300,000 leaves that margin over the 116,000 a
 * first recovery takes, while a token whose `transfer` writes 400 slots (about 9,500,000) is refused.
 */
export const RECOVERY_GAS_CAP = 300_000n;

/** The gas limit a recovery is signed with: its estimate and a fifth more, never above the cap. */
export function recoveryGasLimit(estimate: bigint): bigint {
  const padded = (estimate * 12n) / 10n;
  return padded < RECOVERY_GAS_CAP ? padded : RECOVERY_GAS_CAP;
}

/** Why a recovery estimated at `gas` is refused, or null when it is within the cap. */
export function overGasCap(gas: bigint, what: string, chain: string): string | null {
  if (gas <= RECOVERY_GAS_CAP) return null;
  return (
    `recovering ${what} on ${chain} would take ${gas} gas, above the ${RECOVERY_GAS_CAP} a recovery may use: ` +
    "this token's transfer costs far more than an ERC-20 transfer, so the server does not pay for it"
  );
}
