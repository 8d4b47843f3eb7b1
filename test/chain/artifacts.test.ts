import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Abi } from "viem";
import { ARTIFACTS_DIR, compileContracts, serializeArtifact } from "../../scripts/compile-contracts.ts";
import { artifacts, depositFactoryAbi } from "../../src/chain/contracts.ts";
import { depositFactoryV2Abi } from "../../src/chain/deposit-v2.ts";
import { depositFactoryV3Abi } from "../../src/chain/deposit-v3.ts";

describe("contract artifacts", () => {
  // solc (from npm, WebAssembly) compiling every contract with the optimizer is 9 s of a core
  // alone, and took 74 s on a loaded 2-core run beside the other test workers.
  test("recompiling the sources yields exactly the committed artifacts", () => {
    const compiled = compileContracts();
    const committed = readdirSync(ARTIFACTS_DIR)
      .filter((f) => f.endsWith(".json"))
      .sort();
    expect(committed).toEqual(
      Object.keys(compiled)
        .map((name) => `${name}.json`)
        .sort(),
    );
    for (const artifact of Object.values(compiled)) {
      const file = readFileSync(join(ARTIFACTS_DIR, `${artifact.contractName}.json`), "utf8");
      // On failure: run `bun run contracts` and commit contracts/artifacts.
      expect(file).toBe(serializeArtifact(artifact));
    }
  }, 240_000);

  test("the typed factory ABI matches the factory artifact plus the forwarder's errors", () => {
    const sorted = (abi: Abi) =>
      abi
        .filter((item) => item.type !== "constructor")
        .map((item) => JSON.stringify(canonical(item)))
        .sort();
    const forwarderErrors = artifacts.DepositForwarder.abi.filter((item) => item.type === "error");
    expect(sorted(depositFactoryAbi)).toEqual(sorted([...artifacts.DepositFactory.abi, ...forwarderErrors]));
    const forwarderV2Errors = artifacts.DepositForwarderV2.abi.filter((item) => item.type === "error");
    expect(sorted(depositFactoryV2Abi)).toEqual(sorted([...artifacts.DepositFactoryV2.abi, ...forwarderV2Errors]));
    const forwarderV3Errors = artifacts.DepositForwarderV3.abi.filter((item) => item.type === "error");
    expect(sorted(depositFactoryV3Abi)).toEqual(sorted([...artifacts.DepositFactoryV3.abi, ...forwarderV3Errors]));
  });
});

/** Drops what parseAbi leaves out (internalType, empty names, false flags) and orders keys. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value)
    .filter(([key, v]) => key !== "internalType" && v !== false && !(key === "name" && v === ""))
    .sort(([a], [b]) => a.localeCompare(b));
  return Object.fromEntries(entries.map(([key, v]) => [key, canonical(v)]));
}
