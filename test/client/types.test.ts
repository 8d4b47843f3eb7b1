/**
 * The client's types are the server's OpenAPI document put through openapi-typescript: the
 * checked-in clients/typescript/src/openapi.ts must be exactly what the generator writes now.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { CLIENT_TYPES_FILE, generateClientTypes } from "../../scripts/generate-client-types.ts";

describe("generated client types", () => {
  test("clients/typescript/src/openapi.ts matches the OpenAPI document", async () => {
    const generated = await generateClientTypes();
    // Not vacuous: the generator saw the operations and objects the client names.
    for (const name of ["createPayment", "listDeliveries", "retrieveEvent", "PaymentLink", "TestEvent"])
      expect(generated).toContain(`${name}: {`);
    const checkedIn = readFileSync(CLIENT_TYPES_FILE, "utf8");
    if (checkedIn !== generated) {
      const line = checkedIn.split("\n").findIndex((text, i) => text !== generated.split("\n")[i]) + 1;
      throw new Error(
        `clients/typescript/src/openapi.ts is out of date with the OpenAPI document (first difference at line ${line}): run bun run client:types`,
      );
    }
  });
});
