/**
 * Compiles every .sol file under contracts/ with the pinned solc-js and writes
 * contracts/artifacts/<ContractName>.json. Settings are fixed (no metadata hash, no CBOR
 * trailer) so the bytecode, and hence the factory's CREATE2 address, depends only on the source.
 *
 *   bun scripts/compile-contracts.ts
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import solc from "solc";
import type { Abi, Hex } from "viem";
import type { Artifact } from "../src/chain/contracts.ts";

export const CONTRACTS_DIR = resolve(import.meta.dir, "../contracts");
export const ARTIFACTS_DIR = join(CONTRACTS_DIR, "artifacts");

type SolcOutput = {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
};

/** Compiles all sources; returns the deployable contracts (non-empty bytecode) by name. */
export function compileContracts(): Record<string, Artifact> {
  const sources: Record<string, { content: string }> = {};
  for (const file of solidityFiles(CONTRACTS_DIR)) {
    sources[relative(CONTRACTS_DIR, file)] = { content: readFileSync(file, "utf8") };
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "shanghai",
      metadata: { bytecodeHash: "none", appendCBOR: false },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const w of (output.errors ?? []).filter((e) => e.severity === "warning")) console.warn(w.formattedMessage);
  if (errors.length > 0) {
    throw new Error(`solc ${solc.version()} failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);
  }

  const artifacts: Record<string, Artifact> = {};
  for (const [source, contracts] of Object.entries(output.contracts ?? {})) {
    for (const [contractName, out] of Object.entries(contracts)) {
      if (out.evm.bytecode.object === "") continue; // interfaces and abstract contracts
      if (artifacts[contractName]) throw new Error(`duplicate contract name ${contractName} in ${source}`);
      artifacts[contractName] = {
        contractName,
        abi: out.abi,
        bytecode: `0x${out.evm.bytecode.object}` as Hex,
        deployedBytecode: `0x${out.evm.deployedBytecode.object}` as Hex,
      };
    }
  }
  return Object.fromEntries(Object.entries(artifacts).sort(([a], [b]) => a.localeCompare(b)));
}

/** The exact file content written for an artifact. */
export function serializeArtifact(artifact: Artifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}

function solidityFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".sol"))
    .map((name) => join(dir, name))
    .sort();
}

if (import.meta.main) {
  const artifacts = compileContracts();
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  for (const artifact of Object.values(artifacts)) {
    writeFileSync(join(ARTIFACTS_DIR, `${artifact.contractName}.json`), serializeArtifact(artifact));
    console.log(`${artifact.contractName}: ${(artifact.deployedBytecode.length - 2) / 2} bytes`);
  }
}
