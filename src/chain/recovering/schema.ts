import { type Static, Type } from "@sinclair/typebox";

/** The recover request. A 400 says "<field> <rule>" (src/http/validate.ts). */
export const RecoverSchema = Type.Object(
  {
    chain: Type.String({
      minLength: 1,
      maxLength: 64,
      rule: "must be the name of the settlement chain or a source chain",
    }),
    token: Type.Optional(
      Type.Union([
        Type.String({
          pattern: "^0x[0-9a-fA-F]{40}$",
          rule: "must be an ERC-20 contract address (0x and 40 hex digits), or null for the native coin",
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export type RecoverBody = Static<typeof RecoverSchema>;
