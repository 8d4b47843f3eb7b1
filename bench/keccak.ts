/**
 * What the WebAssembly keccak (src/lib/keccak.ts) buys over viem's pure-JavaScript one, for a
 * single hash of a CREATE2 preimage (85 bytes) and for a whole deposit address, which also
 * ABI-encodes the salt and checksums the result.
 *
 *   bun bench/keccak.ts [--iterations 50000]
 *
 * The viem-only deposit address is checked against the production one before anything is timed.
 */
import { parseArgs } from "node:util";
import { concat, encodeAbiParameters, getContractAddress, keccak256, parseAbiParameters } from "viem";
import { type DepositParams, depositAddress, factoryAddress, forwarderAddress } from "../src/chain/contracts.ts";
import { keccakBytes } from "../src/lib/keccak.ts";

const { values } = parseArgs({ options: { iterations: { type: "string", default: "50000" } } });
const iterations = Number(values.iterations);

const params = (i: number): DepositParams => ({
  paymentId: `0x${i.toString(16).padStart(64, "0")}`,
  token: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payout: "0x1111111111111111111111111111111111111111",
  feeRecipient: "0x0000000000000000000000000000000000000000",
  feeBps: 0,
});

// The clone init code the factory deploys (EIP-1167), as src/chain/contracts.ts builds it.
const cloneInitCodeHash = keccak256(
  concat(["0x3d602d80600a3d3981f3363d3d373d3d3d363d73", forwarderAddress, "0x5af43d82803e903d91602b57fd5bf3"]),
);
const saltParameters = parseAbiParameters(
  "bytes32 paymentId, address token, address payout, address feeRecipient, uint16 feeBps",
);

/** The same address with viem alone: getContractAddress hashes with its JavaScript keccak. */
function viemDepositAddress(p: DepositParams) {
  const salt = keccak256(
    encodeAbiParameters(saltParameters, [p.paymentId, p.token, p.payout, p.feeRecipient, p.feeBps]),
  );
  return getContractAddress({ opcode: "CREATE2", from: factoryAddress, salt, bytecodeHash: cloneInitCodeHash });
}

for (let i = 0; i < 100; i++) {
  if (viemDepositAddress(params(i)) !== depositAddress(params(i)))
    throw new Error(`the two computations disagree for payment ${i}`);
}

/** Nanoseconds per call of each function: the median of five rounds, the two taking turns so load drift hits both. */
function compare(a: (i: number) => unknown, b: (i: number) => unknown): [number, number] {
  const round = (fn: (i: number) => unknown) => {
    const started = Bun.nanoseconds();
    for (let i = 0; i < iterations; i++) fn(i);
    return (Bun.nanoseconds() - started) / iterations;
  };
  round(a); // warm-up
  round(b);
  const times: [number[], number[]] = [[], []];
  for (let r = 0; r < 5; r++) {
    times[0].push(round(a));
    times[1].push(round(b));
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[2]!;
  return [median(times[0]), median(times[1])];
}

const preimage = crypto.getRandomValues(new Uint8Array(85));
const rows = [
  {
    what: "keccak of 85 bytes",
    times: compare(
      () => keccakBytes(preimage),
      () => keccak256(preimage, "bytes"),
    ),
  },
  {
    what: "deposit address",
    times: compare(
      (i) => depositAddress(params(i)),
      (i) => viemDepositAddress(params(i)),
    ),
  },
];
console.log(`ns per call, median of 5 rounds of ${iterations}`);
console.table(
  rows.map(({ what, times: [wasm, viem] }) => ({
    what,
    "hash-wasm": Math.round(wasm),
    viem: Math.round(viem),
    speed_up: `${(viem / wasm).toFixed(1)}x`,
  })),
);
