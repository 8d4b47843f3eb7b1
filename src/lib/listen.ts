import { ConfigError } from "./errors.ts";

/** `host:port` as a log line names it, an IPv6 host in brackets (`[::1]:8080`). */
export const hostPort = (host: string, port: number): string => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/** A failed listen, named by the variable to fix (a port in use may free up: not a config error). */
export function listenError(
  error: unknown,
  host: string,
  port: number,
  variables: { host: string; port: string },
): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === "EADDRINUSE" || /in use/i.test((error as Error).message)) {
    return new Error(`cannot listen on ${where}: the port is in use (${variables.port})`);
  }
  if (code === "EACCES")
    return new ConfigError(variables.port, `not allowed to listen on ${where} (ports below 1024 need privileges)`);
  const why =
    code === "EADDRNOTAVAIL"
      ? "not an address of this machine"
      : code === "EINVAL"
        ? "the name does not resolve to an address here"
        : (error as Error).message;
  return new ConfigError(variables.host, `cannot listen on ${where}: ${why}`);
}
