import { type Address, decodeFunctionResult, encodeFunctionData, parseAbi, zeroAddress, zeroHash } from "viem";
import type { Clock } from "../../lib/clock.ts";
import { isoMillis } from "../../lib/clock.ts";
import type { Logger } from "../../lib/log.ts";
import { createWaker } from "../../lib/sleep.ts";
import { type Artifact, artifacts, DETERMINISTIC_DEPLOYER, ensureDeterministic } from "../contracts.ts";
import { factoryV2Address } from "../deposit-v2.ts";
import { factoryV3Address } from "../deposit-v3.ts";
import { errorMessage, isRevert, nodeMessage } from "../rpc-errors.ts";
import type { SourceNetwork } from "../source-networks.ts";

/**
 * The deposit factories whose addresses may hold funds on a source chain: every one must have
 * code there before the chain is offered or watched. A new factory version is one more line.
 */
export const SOURCE_FACTORIES: ReadonlyArray<{ address: Address; artifact: Artifact }> = [
  { address: factoryV2Address, artifact: artifacts.DepositFactoryV2 },
  { address: factoryV3Address, artifact: artifacts.DepositFactoryV3 },
];

/** How often a source chain whose factories are there is looked at again: a reorg can take a deployment. */
export const READY_RECHECK_MS = 60_000;

/** What the factories' `_bridgeable` reads of Circle's contracts on the source chain. */
const circleAbi = parseAbi([
  "function localMinter() view returns (address)",
  "function remoteTokenMessengers(uint32 domain) view returns (bytes32)",
  "function minFee() view returns (uint256)",
  "function burnLimitsPerMessage(address token) view returns (uint256)",
]);

export interface SourceReadinessDeps {
  network: SourceNetwork;
  /** The settlement chain's name, CCTP domain and USDC: where bridged funds go, in what. */
  settlement: { name: string; domain: number; usdc: Address };
  /** The TokenMessengerV2 deposit addresses commit to (the same address on every chain). */
  tokenMessenger: Address;
  /** The bridge-fee bound new deposit addresses commit to, in basis points. */
  maxBridgeFeeBps: number;
  clock: Clock;
  log: Logger;
}

/** What Circle's contracts on a source chain said when last read. */
interface CircleState {
  bridgeable: boolean | null;
  /** Whether a route exists at all (messenger, minter, burn limit, remote messenger), whatever the fee. */
  routeOpen: boolean | null;
  problems: string[];
  /** The messenger's minimum fee in basis points (its `minFee()` is in 1/1000 bp); 0 without one. */
  minFeeBps: number | null;
  readAt: number | null;
  lastError: string | null;
}

export type SourceReadiness = ReturnType<typeof createSourceReadiness>;

/**
 * Whether a source chain can take payments: every deposit factory (SOURCE_FACTORIES) has code
 * there. Until then the chain is not offered at checkout and its watcher does not scan (its
 * cursor waits, so the blocks in between are scanned once it is ready), and its bridger waits.
 * The chain lease's holder deploys missing factories through the deterministic deployment proxy
 * when the proxy is there; every replica looks, since every replica offers chains at checkout.
 * Alongside, it reads what Circle's contracts there say of bridging the chain's USDC, as the
 * factories' `_bridgeable` does, for /readyz. Everything is read on its own loop: callers get the
 * last answer and never wait on the chain. A failed read keeps the last answer.
 */
export function createSourceReadiness(deps: SourceReadinessDeps) {
  const { network, settlement, tokenMessenger, maxBridgeFeeBps, clock, log } = deps;
  const { source } = network;
  const client = network.clients.publicClient;
  const waker = createWaker();
  /** Looked at again this often while not ready: the proxy may be deployed any time. */
  const notReadyRecheckMs = Math.min(30_000, Math.max(1_000, source.pollIntervalMs * 2));
  const state = {
    /** Whether every factory had code at the last successful look; null before one. */
    present: null as boolean | null,
    /** Why not, when not present. */
    reason: null as string | null,
    checkedAt: null as number | null,
    lastError: null as string | null,
    dueAt: 0,
  };
  const circle: CircleState = {
    bridgeable: null,
    routeOpen: null,
    problems: [],
    minFeeBps: null,
    readAt: null,
    lastError: null,
  };

  async function hasCode(address: Address): Promise<boolean> {
    const code = await client.getCode({ address });
    return code !== undefined && code !== "0x";
  }

  function settle(present: boolean, reason: string | null): void {
    if (present !== state.present || reason !== state.reason) {
      if (present) log.info("source chain ready: deposit factory present", { chain: source.name });
      else log.warn("source chain not offered: no deposit factory", { chain: source.name, reason });
    }
    state.present = present;
    state.reason = reason;
  }

  /** Looks for the factories; deploys the missing ones when `deploy` (this replica holds the chain lease). */
  async function lookForFactories(deploy: boolean): Promise<void> {
    const missing: Array<(typeof SOURCE_FACTORIES)[number]> = [];
    for (const factory of SOURCE_FACTORIES) if (!(await hasCode(factory.address))) missing.push(factory);
    if (missing.length === 0) return settle(true, null);
    if (!(await hasCode(DETERMINISTIC_DEPLOYER)))
      return settle(false, "no deterministic deployment proxy on this chain");
    if (!deploy) return settle(false, "not deployed yet: the replica holding the chain lease deploys it");
    const { publicClient, walletClient } = network.clients;
    try {
      for (const factory of missing)
        await ensureDeterministic(
          { publicClient, walletClient, nonces: network.nonces },
          factory.artifact,
          factory.address,
        );
    } catch (error) {
      return settle(false, `factory deployment failed: ${errorMessage(error)}`);
    }
    log.info("deposit factory deployed", { chain: source.name, factories: missing.map((f) => f.address) });
    settle(true, null);
  }

  /** The messenger's `minFee()`, as the factory reads it: zero where it reverts (a messenger from before V2.1). */
  async function minFeeOf(): Promise<bigint> {
    try {
      const { data } = await client.call({
        to: tokenMessenger,
        data: encodeFunctionData({ abi: circleAbi, functionName: "minFee" }),
      });
      // As the factory: an answer shorter than a word is no fee.
      if (!data || data.length < 66) return 0n;
      return decodeFunctionResult({ abi: circleAbi, functionName: "minFee", data: `0x${data.slice(2, 66)}` });
    } catch (error) {
      if (isRevert(error) || /revert/i.test(nodeMessage(error))) return 0n;
      throw error;
    }
  }

  /** What `bridge` needs of Circle here, as the factory's `_bridgeable` reads it; each failure in words. */
  async function readCircle(): Promise<void> {
    const problems: string[] = [];
    let minFeeBps: number | null = null;
    let routeOpen = false;
    if (!(await hasCode(tokenMessenger))) {
      problems.push(`no Circle TokenMessengerV2 at ${tokenMessenger} on this chain`);
    } else {
      const minter = await client.readContract({
        address: tokenMessenger,
        abi: circleAbi,
        functionName: "localMinter",
      });
      const limit =
        minter === zeroAddress
          ? 0n
          : await client.readContract({
              address: minter,
              abi: circleAbi,
              functionName: "burnLimitsPerMessage",
              args: [source.usdc],
            });
      if (minter === zeroAddress) problems.push("Circle's messenger here has no minter");
      else if (limit === 0n) problems.push(`Circle's minter here does not burn this chain's USDC (${source.usdc})`);
      const remote = await client.readContract({
        address: tokenMessenger,
        abi: circleAbi,
        functionName: "remoteTokenMessengers",
        args: [settlement.domain],
      });
      if (remote === zeroHash)
        problems.push(`Circle's messenger here has no route to ${settlement.name} (domain ${settlement.domain})`);
      routeOpen = problems.length === 0;
      const minFee = await minFeeOf();
      minFeeBps = Number(minFee) / 1000;
      if (minFee > BigInt(maxBridgeFeeBps) * 1000n)
        problems.push(
          `Circle's minimum fee here (${minFeeBps} bps) is above the ${maxBridgeFeeBps} bps ` +
            "new deposit addresses commit to",
        );
    }
    if (problems.join() !== circle.problems.join() && problems.length > 0)
      log.warn("source chain: Circle cannot bridge its USDC", { chain: source.name, problems });
    Object.assign(circle, { bridgeable: problems.length === 0, routeOpen, problems, minFeeBps, lastError: null });
  }

  /** One look at the chain: the factories (deployed when `deploy`), then Circle's contracts. */
  async function check(deploy: boolean): Promise<void> {
    try {
      await lookForFactories(deploy);
      state.lastError = null;
    } catch (error) {
      state.lastError = errorMessage(error);
    }
    state.checkedAt = clock.now();
    try {
      await readCircle();
    } catch (error) {
      circle.lastError = errorMessage(error);
    }
    circle.readAt = clock.now();
  }

  const isReady = (): boolean => state.present === true;

  /** Why the chain is not offered, or null when it is. */
  function problem(): string | null {
    if (isReady()) return null;
    if (state.present === false) return state.reason;
    return state.lastError === null
      ? "the deposit factory has not been looked for yet"
      : `the deposit factory cannot be looked for: ${state.lastError}`;
  }

  /**
   * What happens to USDC sent to a deposit address here, by what Circle's contracts said (null
   * before a read). Not bridgeable, it stays there; the factory's `recover` refuses the committed
   * token (the settlement chain's USDC address) always, and any other token while `bridge` can take it.
   */
  function usdcFate(): string | null {
    if (circle.bridgeable === null) return null;
    if (circle.bridgeable) return `credited, then bridged to ${settlement.name} and settled there`;
    const stays = `credited, but not bridged: it stays at the deposit address on ${source.name}`;
    if (source.usdc.toLowerCase() === settlement.usdc.toLowerCase())
      return `${stays}, and recover refuses it there (it has the address of the settlement chain's USDC)`;
    const which = circle.routeOpen
      ? "deposit addresses whose committed bound is below the minimum fee"
      : "every deposit address";
    return `${stays}; for ${which}, recover sends it to the payout address on ${source.name}`;
  }

  return {
    chainId: source.chainId,
    name: source.name,
    /** Whether every deposit factory had code when last looked: the chain is offered, watched and bridged from. */
    isReady,
    problem,
    /** Looks again at once (a call to the factory that left no event says a reorg may have taken it). */
    recheck(): void {
      state.dueAt = 0;
      waker.wake();
    },
    /** For /readyz: what was last seen, with no RPC call. */
    status: () => ({
      offered: isReady(),
      deposit_factory: {
        present: state.present,
        addresses: SOURCE_FACTORIES.map((f) => f.address),
        problem: problem(),
        checked_at: state.checkedAt === null ? null : isoMillis(state.checkedAt),
        last_error: state.lastError,
      },
      circle: {
        bridgeable: circle.bridgeable,
        problem: circle.problems.length ? circle.problems.join("; ") : null,
        min_fee_bps: circle.minFeeBps,
        max_bridge_fee_bps: maxBridgeFeeBps,
        usdc: usdcFate(),
        read_at: circle.readAt === null ? null : isoMillis(circle.readAt),
        last_error: circle.lastError,
      },
    }),
    /**
     * Looks at once, then again every READY_RECHECK_MS while ready and more often while not, until
     * `signal` aborts. Deploys missing factories only while `holding` says this replica holds the
     * chain lease: deployments spend the relayer's nonces, which only the holder uses.
     */
    async run(signal: AbortSignal, holding: () => boolean): Promise<void> {
      while (!signal.aborted) {
        if (clock.now() >= state.dueAt) {
          await check(holding());
          state.dueAt = clock.now() + (isReady() ? READY_RECHECK_MS : notReadyRecheckMs);
        }
        await waker.wait(Math.min(source.pollIntervalMs, 1_000), signal);
      }
    },
  };
}
