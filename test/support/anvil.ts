// The tests use the same anvil launcher as `stablegate dev`.
export * from "../../src/dev/anvil.ts";
