/**
 * Why `raw` is not an absolute URL with one of `protocols` ("https:"), or null when it is. The
 * message never repeats the value: RPC URLs often embed a provider API key.
 */
export function urlProblem(raw: string, protocols: readonly string[]): string | null {
  const parsed = URL.parse(raw);
  if (parsed && protocols.includes(parsed.protocol) && parsed.hostname) return null;
  return `must be a URL starting with ${protocols.map((p) => `${p}//`).join(" or ")}`;
}
