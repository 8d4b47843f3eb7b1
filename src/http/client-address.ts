import { formatIp, type IpRange, inIpRange, parseIp } from "../lib/ip-address.ts";

/** What Elysia hands a route as `server`: enough to ask who is at the other end of the socket. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** The client a request counts against, as text: see clientAddressOf. */
export type ClientOf = (request: Request, server: PeerSource | null | undefined) => string;

/** An IPv6 client is its /64: one subscriber's network, which it can fill with addresses at will. */
const V6_CLIENT_PREFIX = 64;

/**
 * Who a request comes from, for every limit that counts per client (failed sign-ins, payments
 * started from a payment link's page). The client is the connection's peer, unless that peer is
 * one of `trusted` (STABLEGATE_TRUSTED_PROXIES): then X-Forwarded-For is read from the right, past
 * every trusted hop, and the first address not trusted is the client. Entries to its left were
 * written by whoever the proxies were talking to, so they are never believed. An IPv4 client is
 * its address; an IPv6 client is its /64 network (`2001:db8:0:7::/64`).
 */
export function clientAddressOf(trusted: readonly IpRange[]): ClientOf {
  const isTrusted = (ip: bigint) => trusted.some((range) => inIpRange(ip, range));
  return (request, server) => {
    const peer = parseIp(server?.requestIP(request)?.address ?? "");
    if (peer === null) return "unknown";
    let client = peer;
    if (isTrusted(peer)) {
      // Several X-Forwarded-For headers read as one list, joined in the order they came.
      const hops = (request.headers.get("x-forwarded-for") ?? "").split(",");
      for (let i = hops.length - 1; i >= 0; i--) {
        const hop = forwardedHop(hops[i]!.trim());
        // Unreadable: nothing further left can be told apart, so the nearest trusted hop stands.
        if (hop === null) break;
        client = hop;
        if (!isTrusted(hop)) break;
      }
    }
    return formatIp(client, V6_CLIENT_PREFIX);
  };
}

/** One X-Forwarded-For entry: an address, also in the `[v6]:port` and `v4:port` forms some proxies write. */
function forwardedHop(text: string): bigint | null {
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/i.exec(text);
  if (bracketed) return parseIp(bracketed[1]!);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return parseIp(withPort ? withPort[1]! : text);
}
