import { Type } from "@sinclair/typebox";

/**
 * Path parameters as TypeBox schemas for Elysia's `params` option. Every one is an id, and an id
 * of the wrong shape names nothing that exists: it is answered as an unknown id is, 404 with the
 * same message (src/http/errors.ts maps a failed `params` schema to 404), not a 400 telling a
 * prober which ids are well-formed.
 */
export function idParam(name: string, pattern: string, unknown: (id: string) => string) {
  return Type.String({
    pattern,
    // Elysia calls this with the route's params as `found`.
    error: ({ found }: { found: unknown }) =>
      unknown(String((found as Record<string, unknown> | undefined)?.[name] ?? "")),
  });
}
