/**
 * A local stand-in for Circle's attestation service (Iris) over the CCTP rig (./cctp-rig.ts):
 * same paths and JSON shapes as Circle's V2 API (chains.md, CCTP V2), backed by real source
 * chains. It watches nothing: like Circle's API from a client's point of view, it looks a burn up
 * by transaction hash when asked, then attests it once `delayMs` has passed since it first saw it.
 * Knobs (mode, delay, expiry) let tests drive the failure paths a relayer must survive.
 */
import {
  type Address,
  concat,
  createPublicClient,
  decodeAbiParameters,
  encodePacked,
  getAddress,
  type Hex,
  hexToBigInt,
  http,
  isAddressEqual,
  keccak256,
  numberToHex,
  TransactionReceiptNotFoundError,
  toEventSelector,
} from "viem";
import { privateKeyToAccount, sign } from "viem/accounts";
import { CHAINS } from "../lib/chains.ts";
import { type Clock, isoMillis, systemClock } from "../lib/clock.ts";

export type AttestationMode = "normal" | "down" | "ratelimit";

export type AttestationServiceOptions = {
  /** Chains whose burns are attested, by CCTP domain. */
  sources: Record<number, { rpcUrl: string; transmitter: Address }>;
  /** Chains messages go to; only read to pick an already-passed expirationBlock. */
  destinations: Record<number, { rpcUrl: string }>;
  /** One key, or several: signatures are then concatenated in ascending signer-address order. */
  attesterKey: Hex | readonly Hex[];
  /** How long a seen burn stays "pending_confirmations". Default 0. */
  delayMs?: number;
  /** Fees in basis points (fractions allowed, to 1/100 bp). Default fast 1, standard 0. */
  fees?: { fast: number; standard: number };
  /** Default 0: any free port. */
  port?: number;
  clock?: Clock;
};

export type AttestationService = {
  url: string;
  stop(): Promise<void>;
  /** "down" answers 503 to everything, "ratelimit" 429 with Retry-After (default 1 s; Circle's lockout is 5 min). */
  setMode(mode: AttestationMode, opts?: { retryAfterSeconds?: number }): void;
  setDelay(ms: number): void;
  /** The next `n` attestations get an expirationBlock the destination has already reached. */
  expireNextMessages(n: number): void;
  /** How many POST /v2/reattest calls succeeded. */
  readonly reattestCount: number;
};

const FAST = 1000;
const STANDARD = 2000;
const MESSAGE_SENT = toEventSelector("MessageSent(bytes)");

type Attested = { message: Hex; attestation: Hex };
type Burn = { sourceDomain: number; logged: Hex; nonce: Hex; firstSeenMs: number; attested?: Promise<Attested> };

export function startAttestationService(opts: AttestationServiceOptions): AttestationService {
  const clock = opts.clock ?? systemClock;
  const fees = opts.fees ?? { fast: 1, standard: 0 };
  const signers = [opts.attesterKey]
    .flat()
    .map((key) => ({ key, address: privateKeyToAccount(key).address.toLowerCase() }))
    .sort((a, b) => (a.address < b.address ? -1 : 1));
  const clients = (chains: Record<number, { rpcUrl: string }>) =>
    new Map(
      Object.entries(chains).map(([domain, c]) => [Number(domain), createPublicClient({ transport: http(c.rpcUrl) })]),
    );
  const sourceClients = clients(opts.sources);
  const destinationClients = clients(opts.destinations);
  // Circle quotes fees between any two CCTP domains, not only the ones whose burns it attests here.
  const domains = new Set([
    ...[...CHAINS.values()].map((c) => c.cctpDomain),
    ...sourceClients.keys(),
    ...destinationClients.keys(),
  ]);

  let mode: AttestationMode = "normal";
  let retryAfterSeconds = 1;
  let delayMs = opts.delayMs ?? 0;
  let expireBudget = 0;
  let reattestCount = 0;
  const byTx = new Map<string, Promise<Burn[]>>();
  const byNonce = new Map<string, Burn>();

  /** The burns in a mined transaction, cached once found (a miss is retried on the next ask). */
  function burnsIn(domain: number, txHash: Hex): Promise<Burn[]> {
    const key = `${domain}:${txHash.toLowerCase()}`;
    let burns = byTx.get(key);
    if (!burns) {
      burns = discover(domain, txHash);
      byTx.set(key, burns);
      burns.then(
        (found) => found.length === 0 && byTx.delete(key),
        () => byTx.delete(key),
      );
    }
    return burns;
  }

  async function discover(domain: number, txHash: Hex): Promise<Burn[]> {
    const client = sourceClients.get(domain)!;
    const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((e) => {
      if (e instanceof TransactionReceiptNotFoundError) return null;
      throw e;
    });
    if (receipt?.status !== "success") return [];
    const transmitter = opts.sources[domain]!.transmitter;
    return receipt.logs
      .filter((log) => isAddressEqual(log.address, transmitter) && log.topics[0] === MESSAGE_SENT)
      .map((log) => {
        // Unique per burn, like Circle's; derived from where the burn is so it is stable.
        const nonce = keccak256(encodePacked(["uint32", "bytes32", "uint256"], [domain, txHash, BigInt(log.logIndex)]));
        const [logged] = decodeAbiParameters([{ type: "bytes" }], log.data);
        const burn: Burn = { sourceDomain: domain, logged, nonce, firstSeenMs: clock.now() };
        byNonce.set(nonce, burn);
        return burn;
      });
  }

  /** The logged message with what attesters fill in, signed. Fast only if maxFee covers the fast fee. */
  async function attest(burn: Burn, mayExpire: boolean): Promise<Attested> {
    const logged = decodeCctpMessage(burn.logged);
    const { amount, maxFee } = logged.body;
    const fastFee = feeFor(amount, fees.fast);
    const fast = logged.minFinalityThreshold <= FAST && fastFee <= maxFee;
    const standardFee = feeFor(amount, fees.standard);
    // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
    const fee = fast ? fastFee : standardFee < maxFee ? standardFee : maxFee;
    const expire = mayExpire && expireBudget > 0;
    if (expire) expireBudget--;
    const expirationBlock = expire ? await passedBlock(logged.destinationDomain) : 0n;

    let message = patch(burn.logged, OFFSETS.nonce, burn.nonce);
    message = patch(message, OFFSETS.finalityThresholdExecuted, numberToHex(fast ? FAST : STANDARD, { size: 4 }));
    message = patch(message, OFFSETS.body + BODY_OFFSETS.feeExecuted, numberToHex(fee, { size: 32 }));
    message = patch(message, OFFSETS.body + BODY_OFFSETS.expirationBlock, numberToHex(expirationBlock, { size: 32 }));
    const hash = keccak256(message);
    const signatures = await Promise.all(signers.map(({ key }) => sign({ hash, privateKey: key, to: "hex" })));
    return { message, attestation: concat(signatures) };
  }

  /** The destination's head: a message received in any later block (block.number >= it) is expired. */
  async function passedBlock(domain: number): Promise<bigint> {
    const client = destinationClients.get(domain);
    return client ? client.getBlockNumber() : 1n;
  }

  function attestOnce(burn: Burn, mayExpire: boolean): Promise<Attested> {
    const attested = attest(burn, mayExpire);
    burn.attested = attested;
    attested.catch(() => burn.attested === attested && (burn.attested = undefined));
    return attested;
  }

  async function view(burn: Burn): Promise<Record<string, unknown>> {
    const common = { eventNonce: burn.nonce, cctpVersion: 2, delayReason: null };
    if (clock.now() - burn.firstSeenMs < delayMs) {
      return {
        message: "0x",
        attestation: "PENDING",
        status: "pending_confirmations",
        decodedMessage: null,
        ...common,
      };
    }
    const { message, attestation } = await (burn.attested ?? attestOnce(burn, true));
    return { message, attestation, status: "complete", decodedMessage: decodedJson(message), ...common };
  }

  async function getMessages(domain: number, query: URLSearchParams): Promise<Response> {
    if (!sourceClients.has(domain)) return json(400, { error: `Invalid sourceDomainId ${domain}` });
    const txHash = query.get("transactionHash");
    const nonce = query.get("nonce");
    let burns: Burn[];
    if (txHash !== null) {
      if (!/^0x[0-9a-fA-F]{64}$/.test(txHash)) return json(400, { error: "Invalid transactionHash" });
      burns = await burnsIn(domain, txHash as Hex);
    } else if (nonce !== null) {
      burns = [byNonce.get(nonce.toLowerCase())].filter((b): b is Burn => b?.sourceDomain === domain);
    } else {
      return json(400, { error: "transactionHash or nonce is required" });
    }
    if (burns.length === 0) return json(404, { error: "Message hash not found" });
    return json(200, { messages: await Promise.all(burns.map(view)) });
  }

  async function reattest(nonce: string): Promise<Response> {
    const burn = byNonce.get(nonce.toLowerCase());
    if (!burn) return json(404, { error: "Message not found" });
    await attestOnce(burn, false);
    reattestCount++;
    return json(200, { message: `Re-attestation successfully requested for nonce ${nonce}`, nonce });
  }

  async function route(req: Request): Promise<Response> {
    if (mode === "down") return json(503, { error: "Service Unavailable" });
    if (mode === "ratelimit")
      return json(429, { error: "Too Many Requests" }, { "retry-after": String(retryAfterSeconds) });
    const { pathname, searchParams } = new URL(req.url);
    let m: RegExpExecArray | null;
    if (req.method === "GET" && (m = /^\/v2\/messages\/(\d+)$/.exec(pathname)))
      return getMessages(Number(m[1]), searchParams);
    if (req.method === "GET" && (m = /^\/v2\/burn\/USDC\/fees\/(\d+)\/(\d+)$/.exec(pathname))) {
      const [from, to] = [Number(m[1]), Number(m[2])];
      if (!domains.has(from) || !domains.has(to) || from === to) return json(400, { error: "Invalid domain pair" });
      return json(200, [
        { finalityThreshold: FAST, minimumFee: fees.fast },
        { finalityThreshold: STANDARD, minimumFee: fees.standard },
      ]);
    }
    if (req.method === "GET" && pathname === "/v2/fastBurn/USDC/allowance") {
      return json(200, { allowance: 1_000_000, lastUpdated: isoMillis(clock.now()) });
    }
    if (req.method === "POST" && (m = /^\/v2\/reattest\/(0x[0-9a-fA-F]{64})$/.exec(pathname))) return reattest(m[1]!);
    return json(404, { error: "Not Found" });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    fetch: route,
    error(e) {
      console.error("attestation service:", e);
      return json(500, { error: "Internal Server Error" });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    stop: () => server.stop(true),
    setMode(next, o) {
      mode = next;
      retryAfterSeconds = o?.retryAfterSeconds ?? 1;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    expireNextMessages(n) {
      expireBudget = n;
    },
    get reattestCount() {
      return reattestCount;
    },
  };
}

/** ceil(amount * bps / 10000), bps in hundredths so that 1.3 bp works without floats on amounts. */
function feeFor(amount: bigint, bps: number): bigint {
  const scaled = amount * BigInt(Math.round(bps * 100));
  return (scaled + 999_999n) / 1_000_000n;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}

// ---- Message layout (chains.md, CCTP V2): byte offsets and sizes ----

const OFFSETS = { nonce: 12, finalityThresholdExecuted: 144, body: 148 } as const;
const BODY_OFFSETS = { feeExecuted: 164, expirationBlock: 196, hookData: 228 } as const;

export type CctpMessage = ReturnType<typeof decodeCctpMessage>;

/** Splits a CCTP V2 burn message into its fields (numbers for uint32, bigint for uint256). */
export function decodeCctpMessage(message: Hex) {
  const at = (offset: number, size?: number): Hex =>
    `0x${message.slice(2 + offset * 2, size === undefined ? undefined : 2 + (offset + size) * 2)}`;
  const u32 = (offset: number) => Number(hexToBigInt(at(offset, 4)));
  const u256 = (offset: number) => hexToBigInt(at(offset, 32));
  const b = OFFSETS.body;
  if ((message.length - 2) / 2 < b + BODY_OFFSETS.hookData) throw new Error("not a CCTP V2 burn message: too short");
  return {
    version: u32(0),
    sourceDomain: u32(4),
    destinationDomain: u32(8),
    nonce: at(12, 32),
    sender: at(44, 32),
    recipient: at(76, 32),
    destinationCaller: at(108, 32),
    minFinalityThreshold: u32(140),
    finalityThresholdExecuted: u32(144),
    messageBody: at(b),
    body: {
      version: u32(b),
      burnToken: at(b + 4, 32),
      mintRecipient: at(b + 36, 32),
      amount: u256(b + 68),
      messageSender: at(b + 100, 32),
      maxFee: u256(b + 132),
      feeExecuted: u256(b + 164),
      expirationBlock: u256(b + 196),
      hookData: at(b + 228),
    },
  };
}

function patch(message: Hex, offset: number, value: Hex): Hex {
  const start = 2 + offset * 2;
  return `0x${message.slice(2, start)}${value.slice(2)}${message.slice(start + value.length - 2)}`;
}

/** Circle's `decodedMessage`: numbers as decimal strings, EVM addresses as addresses. */
function decodedJson(message: Hex) {
  const d = decodeCctpMessage(message);
  const address = (word: Hex): Address => getAddress(`0x${word.slice(26)}`);
  return {
    sourceDomain: String(d.sourceDomain),
    destinationDomain: String(d.destinationDomain),
    nonce: d.nonce,
    sender: address(d.sender),
    recipient: address(d.recipient),
    destinationCaller: address(d.destinationCaller),
    minFinalityThreshold: String(d.minFinalityThreshold),
    finalityThresholdExecuted: String(d.finalityThresholdExecuted),
    messageBody: d.messageBody,
    decodedMessageBody: {
      burnToken: address(d.body.burnToken),
      mintRecipient: address(d.body.mintRecipient),
      amount: String(d.body.amount),
      messageSender: address(d.body.messageSender),
      maxFee: String(d.body.maxFee),
      feeExecuted: String(d.body.feeExecuted),
      expirationBlock: String(d.body.expirationBlock),
      hookData: d.body.hookData,
    },
  };
}
