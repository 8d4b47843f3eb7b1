/**
 * What a gasless payment may cost the relayer. Every authorization accepted is a transaction the
 * relayer pays for, asked by whoever holds a payment id, so: a floor (not worth the gas below
 * it), a cap on the gas of one transaction, and limits on how many (./limits.ts).
 */

/**
 * Gas of one `transferWithAuthorization` of USDC, rounded up, for the floor: measured on anvil
 * with contracts/test/TestUSDC.sol at 90,635 to a fresh recipient (73,564 to one that holds USDC
 * already); Circle's FiatToken behind its proxy adds a delegatecall, a few thousand more.
 */
export const TRANSFER_WITH_AUTHORIZATION_GAS = 100_000n;

/**
 * The most gas one submission may use: the estimate is refused above it, and no transaction is
 * signed with a higher limit. Twice the transfer's cost leaves room for an L2's estimate that
 * counts its L1 data part, and stops a token whose call costs far more than USDC's.
 */
export const AUTHORIZATION_GAS_CAP = 200_000n;

/** The relayer's gas is worth this many times the payment at least: a floor of 20 transfers' gas. */
export const FLOOR_GAS_MULTIPLE = 20n;

const WEI_PER_COIN = 10n ** 18n;
const CENT = 10_000n;

/**
 * The smallest value the relayer submits (micro-USDC, whole cents, rounded up): the chain's
 * sweep floor, or 20 times one transfer's gas at `gasPriceWei` converted at the chain's
 * conservative native price, whichever is higher. A chain without a known price (custom) has
 * only its sweep floor, which STABLEGATE_SWEEP_FLOOR sets.
 */
export function floorOf(args: { sweepFloor: bigint; nativePrice: bigint | null; gasPriceWei: bigint }): bigint {
  const { sweepFloor, nativePrice, gasPriceWei } = args;
  const gasCost =
    nativePrice === null
      ? 0n
      : ceilDiv(FLOOR_GAS_MULTIPLE * TRANSFER_WITH_AUTHORIZATION_GAS * gasPriceWei * nativePrice, WEI_PER_COIN);
  const floor = gasCost > sweepFloor ? gasCost : sweepFloor;
  return ceilDiv(floor, CENT) * CENT;
}

/** The gas limit one submission is signed with: its estimate and a fifth more, never above the cap. */
export function authorizationGasLimit(estimate: bigint): bigint {
  const padded = (estimate * 12n) / 10n;
  return padded < AUTHORIZATION_GAS_CAP ? padded : AUTHORIZATION_GAS_CAP;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;
