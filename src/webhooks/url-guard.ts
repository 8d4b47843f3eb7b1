/**
 * The webhook URL guard (DESIGN §4, §6): a merchant may only point webhooks at https URLs whose
 * every address is public unicast, so the server cannot be aimed at itself, its LAN or a cloud
 * metadata service. It runs when an endpoint is registered and again before each send, because
 * DNS answers can change in between (rebinding); the sender then pins to a returned address.
 */
import { promises as dns } from "node:dns";
import { ValidationError } from "../lib/errors.ts";
import { parseIPv4, parseIPv6 } from "../lib/ip-address.ts";

/** Every address a hostname resolves to; throws or returns [] when it does not resolve. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** A and AAAA together, through the system resolver (so /etc/hosts counts, as it would for a connect). */
const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

// ---------------------------------------------------------------------------------------------
// Ranges (IANA special-purpose registries, RFC 6890 and successors).

type Cidr = { base: bigint; shift: bigint };

function cidr(spec: string, bits: 32 | 128): Cidr {
  const [addr, len] = spec.split("/");
  const base = bits === 32 ? parseIPv4(addr!) : parseIPv6(addr!);
  if (base === null) throw new Error(`bad range ${spec}`);
  const shift = BigInt(bits - Number(len));
  return { base: base >> shift, shift };
}

const within = (addr: bigint, range: Cidr) => addr >> range.shift === range.base;

const NON_PUBLIC_V4 = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // carrier-grade NAT
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local, including 169.254.169.254 cloud metadata
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // TEST-NET-1
  "192.88.99.0/24", // 6to4 relay anycast (deprecated)
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // TEST-NET-2
  "203.0.113.0/24", // TEST-NET-3
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, including 255.255.255.255 broadcast
].map((r) => cidr(r, 32));

// Most of these lie outside 2000::/3 and would fail the final check anyway; they are listed so
// the table reads as the policy, and so a later widening of the allow-list cannot let them in.
const NON_PUBLIC_V6 = [
  "::/96", // unspecified, loopback and the deprecated IPv4-compatible form
  // IPv4-mapped, refused outright whatever it embeds: no public host publishes one in DNS, and
  // DESIGN §4 lists "IPv4-mapped forms" among the refused ones.
  "::ffff:0:0/96",
  "100::/64", // discard-only
  "2001::/32", // Teredo: the real destination is hidden in the address
  "2001:2::/48", // benchmarking
  "2001:db8::/32", // documentation
  "3fff::/20", // documentation (RFC 9637)
  "64:ff9b:1::/48", // local-use NAT64: operator-defined layout, never global
  "fc00::/7", // unique local
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
].map((r) => cidr(r, 128));

const NAT64 = cidr("64:ff9b::/96", 128);
const SIX_TO_FOUR = cidr("2002::/16", 128);
const GLOBAL_UNICAST_V6 = cidr("2000::/3", 128);

const isPublicV4 = (a: bigint) => !NON_PUBLIC_V4.some((r) => within(a, r));

function isPublicV6(a: bigint): boolean {
  // Well-known NAT64 (what DNS64 synthesises on IPv6-only hosts) and 6to4 reach the IPv4 address
  // they carry, so that address decides.
  if (within(a, NAT64)) return isPublicV4(a & 0xffffffffn);
  if (within(a, SIX_TO_FOUR)) return isPublicV4((a >> 80n) & 0xffffffffn);
  if (NON_PUBLIC_V6.some((r) => within(a, r))) return false;
  return within(a, GLOBAL_UNICAST_V6); // the rest of the space is unassigned or reserved
}

/** True only for a globally routable unicast address; anything that is not an IP is not public. */
export function isPublicUnicast(ip: string): boolean {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return isPublicV4(v4);
  const v6 = parseIPv6(ip);
  return v6 !== null && isPublicV6(v6);
}

// ---------------------------------------------------------------------------------------------

const isIpLiteral = (host: string) => parseIPv4(host) !== null || parseIPv6(host) !== null;

// RFC 6761: localhost and its subdomains are loopback by definition, whatever DNS says.
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/.test(host);

/**
 * Checks a webhook URL and returns it parsed with the addresses it was checked against; throws
 * ValidationError naming the problem. `allowPrivate` (STABLEGATE_WEBHOOK_ALLOW_PRIVATE, dev only)
 * also admits http and skips the address checks, but the host must still resolve.
 */
export async function checkWebhookUrl(
  raw: string,
  opts: { resolve?: Resolver; allowPrivate?: boolean } = {},
): Promise<{ url: URL; addresses: string[] }> {
  const allowPrivate = opts.allowPrivate ?? false;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError("webhook url is not a valid absolute URL");
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    throw new ValidationError(allowPrivate ? "webhook url must use http or https" : "webhook url must use https");
  }
  if (url.username !== "" || url.password !== "") {
    throw new ValidationError("webhook url must not contain credentials");
  }
  // The URL parser has already rewritten 2130706433, 0x7f.1 and 127.1 as 127.0.0.1 and
  // lower-cased the name; IPv6 literals keep their brackets in `hostname`.
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") throw new ValidationError("webhook url has no host");
  if (!allowPrivate && isLocalhostName(host)) {
    throw new ValidationError(`webhook url host ${host} is not a public address`);
  }

  let addresses: string[];
  if (isIpLiteral(host)) {
    addresses = [host];
  } else {
    try {
      addresses = [...new Set(await (opts.resolve ?? systemResolver)(host))];
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new ValidationError(`webhook url host ${host} could not be resolved`);
  }

  if (!allowPrivate) {
    // Every address, not just the first: a connection may end up at any of them.
    const bad = addresses.find((a) => !isPublicUnicast(a));
    if (bad !== undefined) {
      throw new ValidationError(
        bad === host
          ? `webhook url host ${host} is not a public address`
          : `webhook url host ${host} resolves to a non-public address ${bad}`,
      );
    }
  }
  return { url, addresses };
}
