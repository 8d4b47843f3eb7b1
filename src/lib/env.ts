/**
 * Typed readers of environment variables, for src/config.ts: each returns undefined (or its
 * empty value) when the variable is unset or blank, and throws a ConfigError naming the variable
 * when its value is bad, so start-up stops with one line (exit 78). Messages never repeat a
 * value that may be a secret (a private key, an RPC URL with a provider key in it).
 */
import { isIP } from "node:net";
import { type Address, getAddress, type Hex, isAddress, isHex } from "viem";
import { parseDuration } from "./duration.ts";
import { ConfigError } from "./errors.ts";
import { type IpRange, parseIpRange } from "./ip-address.ts";
import { urlProblem } from "./url-check.ts";

export type Env = Record<string, string | undefined>;

export function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

export function integer(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function address(env: Env, name: string): Address | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!isAddress(raw, { strict: false }))
    throw new ConfigError(name, `must be a 0x-prefixed 20-byte address, got "${raw}"`);
  // Mixed case carries an EIP-55 checksum; a wrong one means a typo, and funds may go there.
  if (!isAddress(raw, { strict: true }))
    throw new ConfigError(
      name,
      `has mixed case but a wrong EIP-55 checksum, got "${raw}"; check it, or give it in lower case`,
    );
  return getAddress(raw);
}

export function privateKey(env: Env, name: string): Hex | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const hex = raw.startsWith("0x") ? raw : `0x${raw}`;
  // The value is a secret: the message never repeats it.
  if (!isHex(hex) || hex.length !== 66) throw new ConfigError(name, "must be a 32-byte hex private key");
  return hex.toLowerCase() as Hex;
}

export function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const problem = urlProblem(raw, protocols);
  if (problem) throw new ConfigError(name, problem);
  return raw;
}

export function duration(env: Env, name: string): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(name, `must be a duration such as 90s, 60m or 2h, got "${raw}"`);
  return ms;
}

export function flag(env: Env, name: string): boolean {
  const raw = nonEmpty(env, name)?.toLowerCase();
  if (raw === undefined || ["0", "false", "off", "no"].includes(raw)) return false;
  if (["1", "true", "on", "yes"].includes(raw)) return true;
  throw new ConfigError(name, `must be on or off, got "${raw}"`);
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[]): T | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  if (!allowed.includes(raw as T)) throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}

/** An IP address or a host name (letters, digits and dashes between dots). */
export function checkedHost(name: string, raw: string): string {
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
  const hostname = raw.length <= 253 && raw.split(".").every((part) => label.test(part)) && !/^[\d.]+$/.test(raw);
  if (isIP(raw) === 0 && !hostname) throw new ConfigError(name, `must be an IP address or a host name, got "${raw}"`);
  return raw;
}

/** `host:port`, an IPv6 host in brackets (`[::1]:9464`). */
export function listenAddress(env: Env, name: string): { host: string; port: number } | null {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return null;
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/i.exec(raw);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!match || !host || port < 1 || port > 65_535)
    throw new ConfigError(name, `must be host:port (such as 127.0.0.1:9464 or [::1]:9464), got "${raw}"`);
  return { host: checkedHost(name, host), port };
}

/** Comma-separated addresses and CIDR ranges, IPv4 or IPv6 (`172.30.0.0/24, ::1`). */
export function ipRanges(env: Env, name: string): IpRange[] {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return [];
  return raw.split(",").map((entry) => {
    const range = parseIpRange(entry.trim());
    if (!range)
      throw new ConfigError(
        name,
        `must be IP addresses or CIDR ranges separated by commas (such as 172.30.0.0/24,::1), got "${entry.trim()}"`,
      );
    return range;
  });
}
