/**
 * A human-readable ABI parameter list, written one parameter per argument so a long signature
 * fits the line width. The result keeps its literal type (`"uint256 amount, address to"`), which
 * viem's `parseAbi` needs to type the functions and events it parses; a `+` would widen it to string.
 */
export function abiParams<const P extends readonly string[]>(...params: P): JoinedParams<P> {
  return params.join(", ") as JoinedParams<P>;
}

type JoinedParams<P extends readonly string[]> = P extends readonly [infer Only extends string]
  ? Only
  : P extends readonly [infer Head extends string, ...infer Rest extends readonly string[]]
    ? `${Head}, ${JoinedParams<Rest>}`
    : "";
