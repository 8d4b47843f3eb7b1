import { describe, expect, test } from "bun:test";
import { ValidationError } from "../../src/lib/errors.ts";
import { checkWebhookUrl, isPublicUnicast, type Resolver } from "../../src/webhooks/url-guard.ts";

describe("isPublicUnicast", () => {
  const cases: [string, boolean][] = [
    // public examples
    ["8.8.8.8", true],
    ["1.1.1.1", true],
    ["2606:4700:4700::1111", true],
    ["2606:4700:4700:0:0:0:0:1111", true],
    ["2606:4700:4700::1111".toUpperCase(), true],
    ["2001:4860:4860::8888", true],
    ["2606:4700:4700:1:2:3:4::", true],
    // 0.0.0.0/8
    ["0.0.0.0", false],
    ["0.255.255.255", false],
    ["1.0.0.0", true],
    // 10/8
    ["9.255.255.255", true],
    ["10.0.0.0", false],
    ["10.255.255.255", false],
    ["11.0.0.0", true],
    // 100.64/10
    ["100.63.255.255", true],
    ["100.64.0.0", false],
    ["100.127.255.255", false],
    ["100.128.0.0", true],
    // 127/8
    ["126.255.255.255", true],
    ["127.0.0.1", false],
    ["127.255.255.255", false],
    ["128.0.0.0", true],
    // 169.254/16
    ["169.253.255.255", true],
    ["169.254.0.0", false],
    ["169.254.169.254", false],
    ["169.254.255.255", false],
    ["169.255.0.0", true],
    // 172.16/12
    ["172.15.255.255", true],
    ["172.16.0.0", false],
    ["172.31.255.255", false],
    ["172.32.0.0", true],
    // 192.0.0/24 and 192.0.2/24 (192.0.1/24 between them is ordinary space)
    ["191.255.255.255", true],
    ["192.0.0.0", false],
    ["192.0.0.255", false],
    ["192.0.1.1", true],
    ["192.0.2.0", false],
    ["192.0.2.255", false],
    ["192.0.3.0", true],
    // 192.88.99/24
    ["192.88.98.255", true],
    ["192.88.99.1", false],
    ["192.88.100.0", true],
    // 192.168/16
    ["192.167.255.255", true],
    ["192.168.0.0", false],
    ["192.168.255.255", false],
    ["192.169.0.0", true],
    // 198.18/15
    ["198.17.255.255", true],
    ["198.18.0.0", false],
    ["198.19.255.255", false],
    ["198.20.0.0", true],
    // 198.51.100/24, 203.0.113/24
    ["198.51.99.255", true],
    ["198.51.100.0", false],
    ["198.51.100.255", false],
    ["198.51.101.0", true],
    ["203.0.112.255", true],
    ["203.0.113.0", false],
    ["203.0.113.255", false],
    ["203.0.114.0", true],
    // 224/4, 240/4, broadcast
    ["223.255.255.255", true],
    ["224.0.0.0", false],
    ["239.255.255.255", false],
    ["240.0.0.0", false],
    ["255.255.255.254", false],
    ["255.255.255.255", false],
    // IPv6 unspecified, loopback, IPv4-compatible
    ["::", false],
    ["::1", false],
    ["0:0:0:0:0:0:0:1", false],
    ["::8.8.8.8", false],
    ["::ffff:ffff", false],
    // IPv4-mapped: rejected outright, even with a public IPv4 inside
    ["::ffff:127.0.0.1", false],
    ["::ffff:7f00:1", false],
    ["::ffff:8.8.8.8", false],
    ["::ffff:0:0", false],
    // NAT64 64:ff9b::/96 judged by the embedded IPv4; local-use 64:ff9b:1::/48 always refused
    ["64:ff9b::8.8.8.8", true],
    ["64:ff9b::808:808", true],
    ["64:ff9b::127.0.0.1", false],
    ["64:ff9b::a00:1", false],
    ["64:ff9b::a9fe:a9fe", false],
    ["64:ff9b:1::808:808", false],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false],
    // 6to4 2002::/16 judged by the embedded IPv4 (bits 16..48)
    ["2002:808:808::1", true],
    ["2002:a00:1::1", false],
    ["2002:7f00:1::", false],
    ["2002:a9fe:a9fe::1", false],
    ["2002:808:a00:1::", true], // the IPv4 is 8.8.10.0; the subnet bits after it do not count
    ["2002:a00:808:808::", false], // 10.0.8.8
    // Teredo 2001::/32, benchmarking, documentation
    ["2001::", false],
    ["2001:0:ffff:ffff:ffff:ffff:ffff:ffff", false],
    ["2001:2::1", false],
    ["2001:db8::", false],
    ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", false],
    ["2001:db7:ffff::1", true],
    ["2001:db9::1", true],
    ["3fff::1", false],
    // ULA, link-local, site-local, multicast, discard
    ["fc00::", false],
    ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false],
    ["fe80::", false],
    ["fe80::1%eth0", false],
    ["2606:4700:4700::1111%eth0", true], // a zone names an interface; the address decides
    ["febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false],
    ["fec0::1", false],
    ["feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false],
    ["ff00::", false],
    ["ff02::1", false],
    ["100::", false],
    ["100::ffff:ffff:ffff:ffff", false],
    // outside 2000::/3: unassigned
    ["4000::1", false],
    // not an IP at all
    ["", false],
    ["example.com", false],
    ["1.2.3", false],
    ["256.0.0.1", false],
    ["01.2.3.4", false],
    ["0x7f.0.0.1", false],
    [" 8.8.8.8", false],
    ["[::1]", false],
    ["[2606:4700:4700::1111]", false],
    ["1::2::3", false],
    ["2606:4700:1:2:3:4:5:6::7::8", false], // eight public groups, then two "::"
    [":::", false],
    ["12345::", false],
    ["2606:4700:4700:1:2:3:4:5:6", false],
    ["2606:4700::1:2:3:4:5:6", false],
    ["::ffff:1.2.3", false],
    ["1.2.3.4::", false],
    ["2606:4700:4700::1111:", false],
  ];
  test.each(cases)("%p → %p", (ip, expected) => {
    expect(isPublicUnicast(ip)).toBe(expected);
  });
});

/** A resolver from a fixed table; unknown names fail like getaddrinfo; every call is recorded. */
function fakeDns(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    const answer = table[host];
    if (answer) return answer;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  };
  return Object.assign(resolve, { calls });
}

async function rejection(raw: string, opts?: Parameters<typeof checkWebhookUrl>[1]): Promise<string> {
  try {
    await checkWebhookUrl(raw, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as Error).message;
  }
  throw new Error(`${raw} was accepted`);
}

describe("checkWebhookUrl", () => {
  const dns = fakeDns({
    "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "empty.example.com": [],
    "mixed.example.com": ["93.184.215.14", "10.0.0.1"],
    "mixed6.example.com": ["2606:4700:4700::1111", "fd00::1"],
    "dev.example.com": ["127.0.0.1"],
  });
  const privateAnswers = [
    "10.0.0.1",
    "127.0.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "192.168.1.1",
    "172.16.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "::1",
    "::",
    "::ffff:127.0.0.1",
    "fe80::1%eth0",
    "fd12:3456::1",
    "ff02::1",
  ];

  test("a public host passes and returns the checked addresses", async () => {
    const { url, addresses } = await checkWebhookUrl("https://hooks.example.com/stablegate?x=1", { resolve: dns });
    expect(url.href).toBe("https://hooks.example.com/stablegate?x=1");
    expect(addresses).toEqual(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
  });

  test("a public IP literal passes without DNS", async () => {
    const resolve = fakeDns({});
    expect((await checkWebhookUrl("https://8.8.8.8:8443/h", { resolve })).addresses).toEqual(["8.8.8.8"]);
    expect((await checkWebhookUrl("https://[2606:4700:4700::1111]/h", { resolve })).addresses).toEqual([
      "2606:4700:4700::1111",
    ]);
    expect(resolve.calls).toEqual([]);
  });

  test.each([
    ["not a url", "not a valid absolute URL"],
    ["/relative/path", "not a valid absolute URL"],
    ["https://[fe80::1%25eth0]/", "not a valid absolute URL"],
    ["http://hooks.example.com/", "must use https"],
    ["ftp://hooks.example.com/", "must use https"],
    ["javascript:alert(1)", "must use https"],
    ["https://user:pass@hooks.example.com/", "must not contain credentials"],
    ["https://user@hooks.example.com/", "must not contain credentials"],
    ["https://:pass@hooks.example.com/", "must not contain credentials"],
    ["https://example.invalid/", "webhook url host example.invalid could not be resolved"],
    ["https://empty.example.com/", "could not be resolved"],
    ["https://mixed.example.com/", "resolves to a non-public address 10.0.0.1"],
    ["https://mixed6.example.com/", "resolves to a non-public address fd00::1"],
  ])("%p is rejected (%p)", async (raw, message) => {
    expect(await rejection(raw, { resolve: dns })).toContain(message);
  });

  test.each(privateAnswers)("a host resolving to %p is rejected", async (address) => {
    const resolve = fakeDns({ "rebind.example.com": [address] });
    expect(await rejection("https://rebind.example.com/", { resolve })).toBe(
      `webhook url host rebind.example.com resolves to a non-public address ${address}`,
    );
  });

  test.each([
    "https://2130706433/",
    "https://0x7f.1/",
    "https://0x7f000001/",
    "https://0177.0.0.1/",
    "https://127.1/",
    "https://127.0.0.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[::1]/",
    "https://[::]/",
    "https://[fe80::1]/",
    "https://[fd00::1]/",
    "https://169.254.169.254/latest/meta-data",
    "https://0.0.0.0/",
    "https://localhost/",
    "https://LOCALHOST./",
    "https://api.localhost/",
  ])("%p is rejected without asking DNS", async (raw) => {
    const resolve = fakeDns({});
    expect(await rejection(raw, { resolve })).toContain("is not a public address");
    expect(resolve.calls).toEqual([]);
  });

  test("localhost is rejected with the default resolver, before any lookup", async () => {
    expect(await rejection("https://localhost/")).toBe("webhook url host localhost is not a public address");
  });

  describe("allowPrivate", () => {
    test("allows http to a loopback literal", async () => {
      const { url, addresses } = await checkWebhookUrl("http://127.0.0.1:1234/", { allowPrivate: true, resolve: dns });
      expect(url.port).toBe("1234");
      expect(addresses).toEqual(["127.0.0.1"]);
    });

    test("allows private answers and localhost names", async () => {
      const resolve = fakeDns({ localhost: ["127.0.0.1", "::1"], "dev.example.com": ["127.0.0.1"] });
      expect((await checkWebhookUrl("http://localhost:3000/", { allowPrivate: true, resolve })).addresses).toEqual([
        "127.0.0.1",
        "::1",
      ]);
      expect((await checkWebhookUrl("https://dev.example.com/", { allowPrivate: true, resolve })).addresses).toEqual([
        "127.0.0.1",
      ]);
    });

    test("still requires http(s), no credentials and a resolvable host", async () => {
      expect(await rejection("ftp://127.0.0.1/", { allowPrivate: true, resolve: dns })).toContain("http or https");
      expect(await rejection("http://a:b@127.0.0.1/", { allowPrivate: true, resolve: dns })).toContain("credentials");
      expect(await rejection("http://example.invalid/", { allowPrivate: true, resolve: dns })).toContain(
        "could not be resolved",
      );
    });
  });
});
