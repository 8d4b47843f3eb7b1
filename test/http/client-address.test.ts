/**
 * Who a request comes from (src/http/client-address.ts), as a table: the peer unless it is a
 * trusted proxy, then X-Forwarded-For read from the right past every trusted hop. The same rules
 * over real sockets and a real proxy process: test/dashboard/sign-in-proxy.test.ts and
 * test/payment-links/page-proxy.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { clientAddressOf } from "../../src/http/client-address.ts";
import { formatIp, inIpRange, parseIp, parseIpRange } from "../../src/lib/ip-address.ts";

const ranges = (...texts: string[]) => texts.map((t) => parseIpRange(t)!);

/** The client of a request from `peer` carrying these X-Forwarded-For headers. */
function clientOf(trusted: string[], peer: string | null, ...forwarded: string[]): string {
  const headers = new Headers();
  for (const value of forwarded) headers.append("x-forwarded-for", value);
  const request = new Request("http://stablegate.test/", { headers });
  const server = peer === null ? null : { requestIP: () => ({ address: peer }) };
  return clientAddressOf(ranges(...trusted))(request, server);
}

describe("clientAddressOf", () => {
  test("with no trusted proxy the peer is the client, whatever it forwards", () => {
    expect(clientOf([], "203.0.113.7")).toBe("203.0.113.7");
    expect(clientOf([], "203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
  });

  test("a peer that is not trusted is the client, even when another is", () => {
    expect(clientOf(["10.0.0.0/8"], "203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
  });

  test("a trusted peer: the rightmost hop it was not told by another trusted proxy", () => {
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "198.51.100.1")).toBe("198.51.100.1");
    // What the client wrote itself (left) is never believed; the proxy's own hop (right) is.
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "1.1.1.1, 198.51.100.1")).toBe("198.51.100.1");
    // Proxies in a chain: every trusted hop is passed.
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "1.1.1.1, 198.51.100.1, 10.9.9.9")).toBe("198.51.100.1");
    // Several headers read as one list, in order.
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "1.1.1.1", "198.51.100.1, 10.9.9.9")).toBe("198.51.100.1");
  });

  test("a trusted peer without the header, or with nothing but trusted hops, is itself the client", () => {
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2")).toBe("10.0.0.2");
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "10.0.0.3, 10.0.0.4")).toBe("10.0.0.3");
  });

  test("an unreadable hop stops the walk at the nearest trusted one", () => {
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "garbage")).toBe("10.0.0.2");
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "198.51.100.1, unknown, 10.0.0.7")).toBe("10.0.0.7");
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "1.2.3.04")).toBe("10.0.0.2");
  });

  test("hops with ports, and bracketed IPv6", () => {
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "198.51.100.1:5555")).toBe("198.51.100.1");
    expect(clientOf(["10.0.0.0/8"], "10.0.0.2", "[2001:db8:1:2::9]:443")).toBe("2001:db8:1:2::/64");
  });

  test("IPv4-mapped peers match IPv4 ranges, and are shown as IPv4", () => {
    expect(clientOf(["127.0.0.2"], "::ffff:127.0.0.2", "198.51.100.1")).toBe("198.51.100.1");
    expect(clientOf([], "::ffff:203.0.113.9")).toBe("203.0.113.9");
  });

  test("an IPv6 client is its /64: one holder's addresses count as one", () => {
    expect(clientOf([], "2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientOf([], "2001:db8:1:2:bbbb::2")).toBe("2001:db8:1:2::/64");
    expect(clientOf([], "2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(clientOf(["fd00::/8"], "fd00::5", "2001:db8:7:0:1::1")).toBe("2001:db8:7:0::/64");
  });

  test("no socket to ask (a request made in-process) is one client, 'unknown'", () => {
    expect(clientOf(["10.0.0.0/8"], null, "198.51.100.1")).toBe("unknown");
  });
});

describe("IP ranges", () => {
  test("addresses and CIDR ranges of both families; host bits past the prefix are ignored", () => {
    const inside = (range: string, ip: string) => inIpRange(parseIp(ip)!, parseIpRange(range)!);
    expect(inside("172.30.0.1/24", "172.30.0.254")).toBe(true);
    expect(inside("172.30.0.0/24", "172.30.1.1")).toBe(false);
    expect(inside("10.1.2.3", "10.1.2.3")).toBe(true);
    expect(inside("10.1.2.3", "10.1.2.4")).toBe(false);
    expect(inside("0.0.0.0/0", "203.0.113.1")).toBe(true);
    expect(inside("0.0.0.0/0", "2001:db8::1")).toBe(false);
    expect(inside("fd00::/8", "fd12:3456::1")).toBe(true);
    expect(inside("::1", "::1")).toBe(true);
    expect(inside("::1", "::2")).toBe(false);
  });

  test("what is not a range", () => {
    for (const text of ["", "caddy", "10.0.0.0/33", "::/129", "10.0.0.0/", "/8", "10.0.0.0/-1", "010.0.0.1", "1.2.3"])
      expect([text, parseIpRange(text)]).toEqual([text, null]);
  });

  test("formatIp: IPv4 as a dotted quad, IPv6 in full or as its network", () => {
    expect(formatIp(parseIp("203.0.113.7")!)).toBe("203.0.113.7");
    expect(formatIp(parseIp("2001:db8::1")!)).toBe("2001:db8:0:0:0:0:0:1");
    expect(formatIp(parseIp("2001:db8::1")!, 64)).toBe("2001:db8:0:0::/64");
  });
});
