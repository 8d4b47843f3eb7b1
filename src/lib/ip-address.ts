/**
 * IP addresses as numbers, and ranges of them. Strict on purpose: only canonical dotted quads (no
 * octal, hex or short forms) and RFC 4291 IPv6 text; anything else is "not an IP". Used where an
 * address decides something: the webhook URL guard, and who a request comes from.
 */

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEXTET = /^[0-9a-f]{1,4}$/i;

export function parseIPv4(text: string): bigint | null {
  const m = DOTTED_QUAD.exec(text);
  if (!m) return null;
  let value = 0n;
  for (const part of m.slice(1)) {
    // A leading zero would mean octal to inet_aton: refuse the ambiguity instead of guessing.
    if ((part.length > 1 && part.startsWith("0")) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

export function parseIPv6(text: string): bigint | null {
  let s = text;
  const zone = s.indexOf("%"); // fe80::1%eth0: the zone picks an interface, not an address
  if (zone >= 0) s = s.slice(0, zone);
  // Mixed notation (::ffff:1.2.3.4): turn the trailing dotted quad into two hextets.
  const lastColon = s.lastIndexOf(":");
  if (lastColon < 0) return null;
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseIPv4(tail);
    if (v4 === null) return null;
    s = `${s.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  let value = 0n;
  for (const g of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...rest]) {
    if (!HEXTET.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// One space for both families: an IPv4 address is its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so
// a peer that a dual-stack socket reports as ::ffff:10.0.0.5 and a range written 10.0.0.0/8 meet.

const MAPPED = 0xffffn << 32n;
const isMapped = (ip: bigint) => ip >> 32n === 0xffffn;

/** Any IPv4 or IPv6 address as a 128-bit number (IPv4 mapped), or null when it is not one. */
export function parseIp(text: string): bigint | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return MAPPED | v4;
  return parseIPv6(text);
}

/** An address range: the addresses whose first `prefix` of 128 bits are those of `base`. */
export interface IpRange {
  base: bigint;
  prefix: number;
}

/**
 * `10.0.0.0/8`, `fd00::/8`, or one address (`172.30.0.10`, `::1`); null when it is none of them.
 * Bits past the prefix are ignored, so `172.30.0.1/24` means 172.30.0.0/24.
 */
export function parseIpRange(text: string): IpRange | null {
  const slash = text.indexOf("/");
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const v4 = parseIPv4(addressText) !== null;
  const address = parseIp(addressText);
  if (address === null) return null;
  const bits = v4 ? 32 : 128;
  let prefix = bits;
  if (slash >= 0) {
    const length = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(length) || Number(length) > bits) return null;
    prefix = Number(length);
  }
  prefix += 128 - bits;
  return { base: address & mask(prefix), prefix };
}

const mask = (prefix: number) => ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - prefix)) - 1n);

export function inIpRange(ip: bigint, range: IpRange): boolean {
  return (ip & mask(range.prefix)) === range.base;
}

/**
 * The address as text: an IPv4 (or IPv4-mapped) one as a dotted quad, an IPv6 one as its network
 * of `v6Prefix` bits (`2001:db8:0:7::/64`), for where one holder of a block counts as one.
 */
export function formatIp(ip: bigint, v6Prefix = 128): string {
  if (isMapped(ip)) return [24n, 16n, 8n, 0n].map((shift) => String((ip >> shift) & 0xffn)).join(".");
  const hextets = Array.from({ length: 8 }, (_, i) => (ip >> BigInt(112 - 16 * i)) & 0xffffn);
  if (v6Prefix >= 128) return hextets.map((h) => h.toString(16)).join(":");
  const kept = Math.ceil(v6Prefix / 16);
  const network = ip & mask(v6Prefix);
  const head = Array.from({ length: kept }, (_, i) => ((network >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return kept < 8 ? `${head.join(":")}::/${v6Prefix}` : `${head.join(":")}/${v6Prefix}`;
}
