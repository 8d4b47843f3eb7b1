/**
 * USDC amounts are integer micro-USDC (6 decimals) held as bigint. Nothing here touches a float:
 * parsing and formatting are string operations, the fee is integer arithmetic.
 */
export const USDC_DECIMALS = 6;
export const MICRO_PER_USDC = 1_000_000n;
/** The largest amount a payment or line item may ask for: 1,000,000,000.00 USDC. */
export const MAX_AMOUNT = 1_000_000_000n * MICRO_PER_USDC;

/** The shape of a request amount, shared with the request schemas: digits, a point, two decimals. */
export const DECIMAL_PATTERN = "^(\\d+)\\.(\\d{2})$";
const REQUEST_AMOUNT = new RegExp(DECIMAL_PATTERN);
/** An exact amount, as received funds are shown: two to six decimals ("25.00", "25.000001"). */
export const EXACT_DECIMAL_PATTERN = "^(\\d+)\\.(\\d{2,6})$";
const EXACT_AMOUNT = new RegExp(EXACT_DECIMAL_PATTERN);

/**
 * Parses a request amount ("25.00") into micro-USDC; null when it is not in that shape, or has
 * more than 13 whole digits (far above MAX_AMOUNT; spares BigInt a huge string).
 */
export const parseAmount = (text: string): bigint | null => parseDecimal(REQUEST_AMOUNT, text);

/** Parses an exact amount ("25.000001", as a refund may ask) the same way. */
export const parseExactAmount = (text: string): bigint | null => parseDecimal(EXACT_AMOUNT, text);

function parseDecimal(shape: RegExp, text: string): bigint | null {
  const match = shape.exec(text);
  if (!match) return null;
  const [, whole, fraction] = match as unknown as [string, string, string];
  if (whole.length > 13) return null;
  return BigInt(whole) * MICRO_PER_USDC + BigInt(fraction.padEnd(USDC_DECIMALS, "0"));
}

/**
 * An amount as a person types it into a form, in the request shape: "10" and "10.5" mean 10.00
 * and 10.50. Anything else comes back trimmed, for the request's rules to refuse by name; blank
 * is absent.
 */
export function typedAmount(text: string | null | undefined): string | undefined {
  const trimmed = text?.trim();
  if (!trimmed) return undefined;
  const match = /^(\d+)(?:\.(\d{0,2}))?$/.exec(trimmed);
  return match ? `${match[1]}.${(match[2] ?? "").padEnd(2, "0")}` : trimmed;
}

/** Exactly two decimals, for `amount`: 25000000n -> "25.00". Amounts here are whole cents. */
export function formatAmount(micro: bigint): string {
  const cents = micro / 10_000n;
  const whole = cents / 100n;
  const fraction = (cents % 100n).toString().padStart(2, "0");
  return `${whole}.${fraction}`;
}

/** Exact, for received funds: two decimals, more only when needed ("25.00", "25.000001"). */
export function formatExact(micro: bigint): string {
  if (micro < 0n) return `-${formatExact(-micro)}`;
  const whole = micro / MICRO_PER_USDC;
  let fraction = (micro % MICRO_PER_USDC).toString().padStart(USDC_DECIMALS, "0");
  while (fraction.length > 2 && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
  return `${whole}.${fraction}`;
}

/**
 * The platform fee on `received`, rounded down so the merchant never gets less than their due;
 * the forwarder contract computes the same split on chain.
 */
export function splitFee(received: bigint, feeBps: number): { fee: bigint; net: bigint } {
  const fee = (received * BigInt(feeBps)) / 10_000n;
  return { fee, net: received - fee };
}
