/**
 * Cross-chain funding end to end for the tests: the settlement anvil and a server (./stack.ts),
 * plus the second anvil, the CCTP rig on both and the local attestation service
 * (src/dev/crosschain-stack.ts), with the server restarted onto the cross-chain env.
 *
 *   const x = await startCrossChainStack();      // one set of anvils per test file
 *   const payment = await x.stack.createPayment({ amount: "25.00" });
 *   const { burnTxHash } = await x.payCrossChain(payment.id);
 *   await x.waitBurn(payment.id, "redeemed");
 */
import {
  type Address,
  createPublicClient,
  createWalletClient,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  pad,
  parseEventLogs,
  toHex,
  zeroAddress,
  zeroHash,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { tokenMessengerAbi } from "../../src/chain/cctp-abi.ts";
import { DETERMINISTIC_DEPLOYER } from "../../src/chain/contracts.ts";
import { decodeCctpMessage } from "../../src/dev/attestation-service.ts";
import { cctpAddresses, testMessageTransmitterV2Abi, testTokenMessengerV2Abi } from "../../src/dev/cctp-rig.ts";
import {
  LOCAL_DESTINATION_DOMAIN,
  LOCAL_SOURCE,
  type LocalCrossChain,
  startLocalCrossChain,
} from "../../src/dev/crosschain-stack.ts";
import { payCrossChainFromDevWallet } from "../../src/dev/pay.ts";
import type { LogLevel } from "../../src/lib/log.ts";
import { settingUp, stopAll } from "../../src/lib/teardown.ts";
import { ANVIL_KEY_0, ANVIL_KEY_1 } from "./anvil.ts";
import { testTokenAbi } from "./chain.ts";
import { type RpcTap, startRpcTap } from "./rpc-tap.ts";
import { type Stack, startStack } from "./stack.ts";
import { startChain, type TestChain } from "./test-chain.ts";
import { waitFor } from "./wait.ts";

export { LOCAL_DESTINATION_DOMAIN, LOCAL_SOURCE };

export type BurnState = "attesting" | "redeeming" | "redeemed" | "failed";

/** A row of crosschain_burns as the sqlite file holds it. */
export interface BurnDbRow {
  id: string;
  payment_id: string;
  source_chain: string;
  tx_hash: string;
  state: BurnState;
  amount: number | null;
  message: string | null;
  message_nonce: string | null;
  redeem_tx_hash: string | null;
  error: string | null;
  attempts: number;
  next_attempt_at: number;
  updated_at: number;
}

export interface CrossChainStack {
  chain: TestChain;
  stack: Stack;
  local: LocalCrossChain;
  /** Between the server and the settlement anvil, when asked for (`tapRpc`). */
  tap: RpcTap | null;
  /** The source chain (31338): its client and the payer's wallet there (anvil key 1). */
  source: { publicClient: PublicClient; usdc: Address; payer: Address };

  /** GET .../cross-chain, with `?chain=` when given. */
  crossChain(paymentId: string, chain?: string): Promise<{ status: number; json: any }>;
  /** POST .../cross-chain with a raw body. */
  postBurn(paymentId: string, body: unknown): Promise<{ status: number; json: any }>;
  /** What the checkout does: quote, send the quoted calls from the payer, record the burn. */
  payCrossChain(paymentId: string, speed?: "fast" | "standard"): Promise<{ burnTxHash: Hex; record: any }>;
  /** The payer's own depositForBurn (after an approve), for burns the server did not quote. */
  burn(args: {
    amount: bigint;
    mintRecipient: Address;
    maxFee?: bigint;
    finality?: number;
    destinationDomain?: number;
  }): Promise<Hex>;
  /**
   * As `burn`, but the depositForBurn waits unmined in the source chain's mempool (automine off)
   * until `mine` is called, which mines it and turns automine back on.
   */
  pendingBurn(args: { amount: bigint; mintRecipient: Address }): Promise<{ txHash: Hex; mine(): Promise<void> }>;
  /** Sends a quote's calls from the payer in order; returns the last one's hash (the burn). */
  sendCalls(calls: ReadonlyArray<{ to: Address; data: Hex }>): Promise<Hex>;
  /** A plain USDC transfer on the source chain: a transaction that is not a burn. */
  sourceTransfer(to: Address, amount: bigint): Promise<Hex>;
  /**
   * The deterministic deployment proxy on the source chain: removed (anvil_setCode to 0x) or put
   * back with the runtime code it had at first.
   */
  deploymentProxy(present: boolean): Promise<void>;
  /** The source chain's entry in /readyz's `chains`. */
  sourceReadiness(): Promise<any>;
  /** Waits until /readyz says the source chain is offered (its deposit factory is there). */
  sourceOffered(timeoutMs?: number): Promise<void>;
  /** anvil_mine on the source chain: `n` empty blocks. */
  mineSource(n?: number): Promise<void>;
  /** The server's cursor on the source chain (null before its watcher's first scan). */
  sourceCursor(): Promise<number | null>;
  /** Waits (mining source blocks along unless `mine` is false) until the source chain's watcher has scanned past `block`. */
  sourceScanned(block: bigint, opts?: { mine?: boolean }): Promise<void>;
  /**
   * The env that restarts the server with the local source chain changed: its watcher's
   * confirmations and poll interval, or the RPC URL the server uses for it (a dead one, say).
   */
  sourceEnv(changes?: SourceSettings): Record<string, string>;

  burns(paymentId: string): Promise<BurnDbRow[]>;
  /** Polls (100 ms) until the payment's only burn is in `state`; returns its row. */
  waitBurn(paymentId: string, state: BurnState, timeoutMs?: number): Promise<BurnDbRow>;
  /** The attestation service's messages for a source transaction (404 as an empty list). */
  attested(txHash: Hex): Promise<Array<{ message: Hex; eventNonce: Hex; attestation: Hex | null; status: string }>>;
  /** MessageReceived events on the settlement chain's transmitter, for one nonce or all. */
  messagesReceived(nonce?: Hex): Promise<Array<{ nonce: Hex; transactionHash: Hex }>>;
  /** USDC minted (Transfer from 0x0) to `to` on the settlement chain. */
  mintsTo(to: Address): Promise<bigint[]>;
  /** MintAndWithdraw of a redemption: what the recipient got and the fee. */
  minted(redeemTxHash: Hex): Promise<{ mintRecipient: Address; amount: bigint; feeCollected: bigint }>;
  stop(): Promise<void>;
}

/** How the server sees the local source chain (default: the custom-source defaults, its real RPC). */
export interface SourceSettings {
  confirmations?: number;
  pollIntervalMs?: number;
  rpcUrl?: string;
}

export function startCrossChainStack(
  opts: {
    subprocess?: boolean;
    /** With `subprocess`: the built executable, or the one at this path (see StackOptions.binary). */
    binary?: boolean | string;
    /** STABLEGATE_PAYMENT_WINDOW, such as "5s"; default the server's own. */
    paymentWindow?: string;
    attestationDelayMs?: number;
    /** How far anvil's finalized block trails the head (two epochs), on both anvils; default anvil's own. */
    slotsInAnEpoch?: number;
    tapRpc?: boolean;
    source?: SourceSettings;
    logLevel?: LogLevel;
    /**
     * The source chain without the deterministic deployment proxy when the server first serves it
     * (its code removed), so no deposit factory can be deployed there until `deploymentProxy(true)`.
     */
    withoutDeploymentProxy?: boolean;
  } = {},
): Promise<CrossChainStack> {
  return settingUp(async (undo) => {
    const chain = await startChain({ slotsInAnEpoch: opts.slotsInAnEpoch });
    undo(() => chain.stop());
    const tap = opts.tapRpc ? startRpcTap(chain.rpcUrl) : null;
    undo(() => tap?.stop());
    const local = await startLocalCrossChain({
      destination: { rpcUrl: chain.rpcUrl, usdc: chain.usdc },
      deployerKey: ANVIL_KEY_0,
      payer: chain.payer.account.address,
      attestationDelayMs: opts.attestationDelayMs ?? 200,
      slotsInAnEpoch: opts.slotsInAnEpoch,
    });
    undo(() => local.stop());
    const stack = await startStack({
      chain,
      subprocess: opts.subprocess,
      binary: opts.binary,
      paymentWindow: opts.paymentWindow,
      rpcUrl: tap?.url,
      logLevel: opts.logLevel,
    });
    undo(() => stack.stop());
    // The stack starts without cross-chain; the same server comes back with the rig's env.
    const x = wrap(chain, local, stack, tap);
    if (opts.withoutDeploymentProxy) await x.deploymentProxy(false);
    await stack.restart({ ...local.env, ...x.sourceEnv(opts.source) });
    // Offered once the server has deployed its deposit factory there (not through a dead RPC).
    if (!opts.withoutDeploymentProxy && opts.source?.rpcUrl === undefined) await x.sourceOffered();
    return x;
  });
}

function wrap(chain: TestChain, local: LocalCrossChain, stack: Stack, tap: RpcTap | null): CrossChainStack {
  const sourceChain = { ...foundry, id: LOCAL_SOURCE.chainId };
  const transport = http(local.source.rpcUrl);
  const publicClient = createPublicClient({ chain: sourceChain, transport, pollingInterval: 20 }) as PublicClient;
  const wallet = createWalletClient({ chain: sourceChain, transport, account: privateKeyToAccount(ANVIL_KEY_1) });
  const { messageTransmitter, tokenMessenger } = cctpAddresses;

  async function send(hash: Promise<Hex>): Promise<Hex> {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new Error(`source tx ${receipt.transactionHash} reverted`);
    return receipt.transactionHash;
  }

  const sourceCursor = async () =>
    (
      await stack.sql<{ block_number: number }>(
        "SELECT block_number FROM chain_cursor WHERE chain_id = ?",
        LOCAL_SOURCE.chainId,
      )
    )[0]?.block_number ?? null;
  const burns = (paymentId: string) =>
    stack.sql<BurnDbRow>("SELECT * FROM crosschain_burns WHERE payment_id = ? ORDER BY created_at", paymentId);
  const path = (paymentId: string) => `/api/public/payments/${paymentId}/cross-chain`;
  /** The proxy's runtime code as anvil ships it, kept when it is removed. */
  let proxyCode: Hex | null = null;
  const sourceReadiness = async () =>
    (await stack.readyz()).chains.find((c: { chain_id: number }) => c.chain_id === LOCAL_SOURCE.chainId);

  return {
    chain,
    stack,
    local,
    tap,
    source: { publicClient, usdc: getAddress(local.sourceUsdc), payer: wallet.account.address },

    crossChain: (paymentId, name) =>
      stack.request(name === undefined ? path(paymentId) : `${path(paymentId)}?chain=${encodeURIComponent(name)}`, {
        auth: false,
      }),
    postBurn: (paymentId, body) => stack.request(path(paymentId), { method: "POST", body, auth: false }),
    payCrossChain: (paymentId, speed = "fast") =>
      payCrossChainFromDevWallet(
        {
          serverUrl: stack.url,
          payerKey: ANVIL_KEY_1,
          sourceRpcUrl: local.source.rpcUrl,
          sourceChainId: LOCAL_SOURCE.chainId,
          sourceName: LOCAL_SOURCE.name,
        },
        paymentId,
        speed,
      ),
    async burn({ amount, mintRecipient, maxFee = 0n, finality = 2000, destinationDomain = LOCAL_DESTINATION_DOMAIN }) {
      await send(
        wallet.writeContract({
          address: local.sourceUsdc,
          abi: erc20Abi,
          functionName: "approve",
          args: [tokenMessenger, amount],
        }),
      );
      return send(
        wallet.writeContract({
          address: tokenMessenger,
          abi: tokenMessengerAbi,
          functionName: "depositForBurn",
          args: [
            amount,
            destinationDomain,
            pad(mintRecipient, { size: 32 }),
            local.sourceUsdc,
            zeroHash,
            maxFee,
            finality,
          ],
        }),
      );
    },
    async pendingBurn({ amount, mintRecipient }) {
      await send(
        wallet.writeContract({
          address: local.sourceUsdc,
          abi: erc20Abi,
          functionName: "approve",
          args: [tokenMessenger, amount],
        }),
      );
      const node = publicClient as unknown as {
        request(args: { method: string; params: unknown[] }): Promise<unknown>;
      };
      await node.request({ method: "evm_setAutomine", params: [false] });
      try {
        const txHash = await wallet.writeContract({
          address: tokenMessenger,
          abi: tokenMessengerAbi,
          functionName: "depositForBurn",
          args: [
            amount,
            LOCAL_DESTINATION_DOMAIN,
            pad(mintRecipient, { size: 32 }),
            local.sourceUsdc,
            zeroHash,
            0n,
            2000,
          ],
        });
        return {
          txHash,
          async mine() {
            await node.request({ method: "evm_setAutomine", params: [true] });
            await node.request({ method: "evm_mine", params: [] });
            await send(Promise.resolve(txHash));
          },
        };
      } catch (error) {
        await node.request({ method: "evm_setAutomine", params: [true] });
        throw error;
      }
    },
    async sendCalls(calls) {
      let last: Hex = "0x";
      for (const call of calls) last = await send(wallet.sendTransaction({ to: call.to, data: call.data }));
      return last;
    },
    sourceTransfer: (to, amount) =>
      send(
        wallet.writeContract({
          address: local.sourceUsdc,
          abi: testTokenAbi,
          functionName: "transfer",
          args: [to, amount],
        }),
      ),
    async deploymentProxy(present) {
      proxyCode ??= (await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER })) ?? null;
      if (!proxyCode || proxyCode === "0x") throw new Error("the source anvil has no deterministic deployment proxy");
      await local.source.rpc("anvil_setCode", [DETERMINISTIC_DEPLOYER, present ? proxyCode : "0x"]);
    },
    sourceReadiness,
    sourceOffered: async (timeoutMs = 15_000) => {
      await waitFor(
        async () => {
          const entry = await sourceReadiness();
          // A build from before source chains were checked (an older binary) offers them at once.
          if (entry && !("offered" in entry)) return true;
          if (entry?.offered !== true) throw new Error(JSON.stringify(entry?.deposit_factory ?? entry));
          return true;
        },
        timeoutMs,
        "the source chain to be offered",
        50,
      );
    },
    mineSource: async (n = 1) => void (await local.source.rpc("anvil_mine", [toHex(n)])),
    sourceCursor,
    sourceScanned: async (block, { mine = true } = {}) => {
      await waitFor(
        async () => {
          const at = await sourceCursor();
          if (at !== null && BigInt(at) >= block) return true;
          if (mine) await local.source.rpc("anvil_mine", ["0x1"]);
          return false;
        },
        15_000,
        `the source chain's cursor at block ${block}`,
        60,
      );
    },
    sourceEnv(changes = {}) {
      const [entry] = JSON.parse(local.env.STABLEGATE_CCTP_CUSTOM_SOURCES!) as Array<Record<string, unknown>>;
      const changed = {
        ...entry,
        ...(changes.confirmations === undefined ? {} : { confirmations: changes.confirmations }),
        ...(changes.pollIntervalMs === undefined ? {} : { poll_interval_ms: changes.pollIntervalMs }),
        ...(changes.rpcUrl === undefined ? {} : { rpc_url: changes.rpcUrl }),
      };
      return { STABLEGATE_CCTP_CUSTOM_SOURCES: JSON.stringify([changed]) };
    },

    burns,
    waitBurn: (paymentId, state, timeoutMs = 15_000) =>
      waitFor(
        async () => {
          const rows = await burns(paymentId);
          if (rows.length !== 1) throw new Error(`${rows.length} burns recorded`);
          if (rows[0]!.state !== state) throw new Error(`burn ${rows[0]!.state} (${rows[0]!.error})`);
          return rows[0]!;
        },
        timeoutMs,
        `the burn of ${paymentId} to be ${state}`,
        100,
      ),
    async attested(txHash) {
      const res = await fetch(`${local.attestation.url}/v2/messages/${LOCAL_SOURCE.domain}?transactionHash=${txHash}`);
      if (res.status === 404) return [];
      if (!res.ok) throw new Error(`attestation service answered ${res.status}`);
      type Message = { message: Hex; eventNonce: Hex; attestation: Hex | null; status: string };
      return ((await res.json()) as { messages: Message[] }).messages;
    },
    async messagesReceived(nonce) {
      const logs = await chain.publicClient.getContractEvents({
        address: messageTransmitter,
        abi: testMessageTransmitterV2Abi,
        eventName: "MessageReceived",
        args: nonce ? { nonce } : undefined,
        fromBlock: 0n,
        toBlock: "latest",
      });
      return logs.map((l) => ({ nonce: l.args.nonce!, transactionHash: l.transactionHash }));
    },
    async mintsTo(to) {
      const logs = await chain.publicClient.getContractEvents({
        address: chain.usdc,
        abi: testTokenAbi,
        eventName: "Transfer",
        args: { from: zeroAddress, to: getAddress(to) },
        fromBlock: 0n,
        toBlock: "latest",
      });
      return logs.map((l) => l.args.value!);
    },
    async minted(redeemTxHash) {
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: redeemTxHash });
      const events = parseEventLogs({ abi: testTokenMessengerV2Abi, eventName: "MintAndWithdraw", logs: receipt.logs });
      if (events.length !== 1) throw new Error(`${events.length} MintAndWithdraw events in ${redeemTxHash}`);
      const { mintRecipient, amount, feeCollected } = events[0]!.args;
      return { mintRecipient, amount, feeCollected };
    },
    stop: () =>
      stopAll(
        () => stack.stop(),
        () => tap?.stop(),
        () => local.stop(),
        () => chain.stop(),
      ),
  };
}

/** What a signed message says of its burn: amount, fees and the nonce the attesters gave it. */
export function attestedBurn(message: Hex): { feeExecuted: bigint; maxFee: bigint; amount: bigint; nonce: Hex } {
  const decoded = decodeCctpMessage(message);
  return {
    feeExecuted: decoded.body.feeExecuted,
    maxFee: decoded.body.maxFee,
    amount: decoded.body.amount,
    nonce: decoded.nonce,
  };
}

/** ceil(amount * bps / 10000) for whole or fractional (to 1/100) basis points. */
export function feeAt(amount: bigint, bps: number): bigint {
  const scaled = amount * BigInt(Math.round(bps * 100));
  return (scaled + 999_999n) / 1_000_000n;
}
