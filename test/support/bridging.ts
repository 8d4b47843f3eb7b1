/**
 * Any chain in, for the tests: pay a version 2 deposit address with a plain transfer on the
 * local source chain, mine both chains along, and read the bridges table.
 *
 *   const x = await startCrossChainStack();
 *   const payment = await x.stack.createPayment({ amount: "25.00" });
 *   await payOnSource(x, payment.deposit_address, 25_000_000n);
 *   await untilStatus(x, payment.id, "confirmed");
 */
import { expect } from "bun:test";
import {
  type Address,
  createWalletClient,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  type LocalAccount,
  type PublicClient,
  toHex,
} from "viem";
import { foundry } from "viem/chains";
import { bridgeCall, factoryOf, type TermsRow } from "../../src/chain/deposit-terms.ts";
import { depositFactoryV2Abi } from "../../src/chain/deposit-v2.ts";
import { type CrossChainStack, LOCAL_SOURCE } from "./crosschain.ts";
import { usdc } from "./test-chain.ts";
import { waitFor } from "./wait.ts";

export type BridgeState = "credited" | "burned" | "attested" | "minted" | "settled";

/** A row of bridges as the sqlite file holds it. */
export interface BridgeDbRow {
  id: string;
  payment_id: string;
  chain_id: number;
  state: BridgeState;
  amount: number | null;
  fee: number | null;
  nonce: number | null;
  tx_hash: string | null;
  tx_hashes: string | null;
  burn_tx_hash: string | null;
  /** The finality the burn asked CCTP for: 1000 fast, 2000 standard. */
  min_finality: number | null;
  burn_id: string | null;
  mint_tx_hash: string | null;
  error: string | null;
  attempts: number;
}

export function bridgesOf(x: CrossChainStack, paymentId: string): Promise<BridgeDbRow[]> {
  return x.stack.sql<BridgeDbRow>("SELECT * FROM bridges WHERE payment_id = ? ORDER BY created_at, id", paymentId);
}

/**
 * Polls `fn`, mining a block on both chains between looks: confirmations on either chain need
 * blocks on top, and automining anvils make none by themselves.
 */
export function mineBothUntil<T>(x: CrossChainStack, fn: () => T | Promise<T>, what: string, timeoutMs = 30_000) {
  return waitFor(
    async () => {
      let value: T | undefined;
      try {
        value = await fn();
        return value;
      } finally {
        if (value === undefined || value === false || value === null) {
          await x.mineSource(1);
          await x.chain.mine(1);
        }
      }
    },
    timeoutMs,
    what,
    100,
  );
}

/** Mines both chains until one of the payment's bridges is `ready`; returns it (the rows, when it times out). */
export function untilBridge(x: CrossChainStack, paymentId: string, ready: (row: BridgeDbRow) => boolean, what: string) {
  return mineBothUntil(
    x,
    async () => {
      const rows = await bridgesOf(x, paymentId);
      const found = rows.find(ready);
      if (!found) throw new Error(JSON.stringify(rows.map((r) => ({ state: r.state, error: r.error, tx: r.tx_hash }))));
      return found;
    },
    what,
  );
}

/** Mines both chains until the merchant API reports `status`; returns the payment. */
export function untilStatus(x: CrossChainStack, paymentId: string, status: string, timeoutMs = 30_000) {
  return mineBothUntil(
    x,
    async () => {
      const payment = await x.stack.getPayment(paymentId);
      if (payment.status === status) return payment;
      const bridges = (await bridgesOf(x, paymentId)).map((b) => `${b.state} (${b.error})`);
      throw new Error(`${payment.status}, bridges: ${bridges.join(", ") || "none"}`);
    },
    `status ${status}`,
    timeoutMs,
  );
}

/**
 * A plain USDC transfer to `to` on the source chain (what a payer's wallet or exchange sends),
 * returned once the source chain's watcher credited it: source blocks are mined until then.
 */
export async function payOnSource(x: CrossChainStack, to: string, amount: bigint): Promise<Hex> {
  const txHash = await x.sourceTransfer(getAddress(to), amount);
  await waitFor(
    async () => {
      const [row] = await x.stack.sql<{ credited_at: number | null }>(
        "SELECT credited_at FROM transfers WHERE tx_hash = ? AND chain_id = ?",
        txHash,
        LOCAL_SOURCE.chainId,
      );
      if (row?.credited_at != null) return true;
      await x.mineSource(1);
      return false;
    },
    20_000,
    `the source transfer ${txHash} to be credited`,
    60,
  );
  return txHash;
}

/**
 * Every `Bridged` event of the payment's deposit address on the source chain: one per burn. Its
 * factory's (the event is the same in every version that bridges).
 */
export async function bridgedOnSource(x: CrossChainStack, paymentId: string) {
  const [row] = await x.stack.sql<TermsRow>("SELECT factory_version FROM payments WHERE id = ?", paymentId);
  return x.source.publicClient.getContractEvents({
    address: factoryOf(row!),
    abi: depositFactoryV2Abi,
    eventName: "Bridged",
    args: { paymentId: paymentId as Hex },
    fromBlock: 0n,
    toBlock: "latest",
  });
}

/** USDC at `address` on the source chain. */
export function sourceBalance(x: CrossChainStack, address: string): Promise<bigint> {
  return x.source.publicClient.readContract({
    address: x.source.usdc,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address as Address],
  });
}

/** Gas for `account` on both chains: anyone may call a deposit address's bridge() or relay a mint. */
export async function fundStranger(x: CrossChainStack, account: LocalAccount): Promise<void> {
  await x.chain.anvil.rpc("anvil_setBalance", [account.address, toHex(10n ** 18n)]);
  await x.local.source.rpc("anvil_setBalance", [account.address, toHex(10n ** 18n)]);
}

/**
 * `account` (not the relayer) calls bridge() for the payment's deposit address on the source
 * chain, with standard finality and no fee.
 */
export async function strangerBridges(x: CrossChainStack, account: LocalAccount, paymentId: string): Promise<Hex> {
  const wallet = createWalletClient({
    chain: { ...foundry, id: LOCAL_SOURCE.chainId },
    transport: http(x.local.source.rpcUrl),
    account,
  });
  const [row] = await x.stack.sql<TermsRow>("SELECT * FROM payments WHERE id = ?", paymentId);
  const hash = await wallet.sendTransaction(bridgeCall(row!, x.source.usdc, 0n, 2000));
  const receipt = await x.source.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  expect(receipt.status).toBe("success");
  return hash;
}

/** A payment paid on the source chain and bridged there by `account` before the server credits the transfer. */
export async function paidThenBridgedByStranger(x: CrossChainStack, account: LocalAccount, amount: string) {
  const payment = await x.stack.createPayment({ amount });
  await x.sourceTransfer(getAddress(payment.deposit_address), usdc(amount));
  const burnTx = await strangerBridges(x, account, payment.id);
  const payoutBefore = await x.stack.usdcBalance(x.stack.payout);
  return { payment, burnTx, payoutBefore };
}

/**
 * Confirmed with the payout paid less the bridge fee, the stranger's burn the only one, carried
 * by the payment's one bridge (which names the burn when the server learned its hash).
 */
export async function expectSettledThroughStrangersBurn(
  x: CrossChainStack,
  payment: { id: string },
  burnTx: Hex,
  payoutBefore: bigint,
  amount: string,
  bridgeNames: Hex | null = burnTx,
): Promise<void> {
  const confirmed = await untilStatus(x, payment.id, "confirmed", 15_000).catch(async (e) => {
    const warnings = x.stack.logs().filter((l) => l.level !== "debug");
    console.log(JSON.stringify(warnings.slice(-40), null, 0));
    console.log(
      JSON.stringify(
        await x.stack.sql(
          "SELECT id, state, amount, tx_hash, bridge_id, error, message_nonce, redeem_tx_hash FROM crosschain_burns",
        ),
      ),
    );
    console.log(
      JSON.stringify(
        await x.stack.sql(
          "SELECT id, state, amount, burn_tx_hash, burn_id, message_nonce, mint_tx_hash, error FROM bridges",
        ),
      ),
    );
    throw e;
  });
  expect(confirmed.amount_received).toBe(amount);
  const paid = (await x.stack.usdcBalance(x.stack.payout)) - payoutBefore;
  expect(paid).toBe(usdc(amount) - usdc(confirmed.bridge_fee));
  expect((await bridgedOnSource(x, payment.id)).map((e) => e.transactionHash)).toEqual([burnTx]);
  expect(await bridgesOf(x, payment.id)).toEqual([
    expect.objectContaining({ state: "settled", burn_tx_hash: bridgeNames, nonce: null }),
  ]);
}

/** The relayer's address, as /readyz shows it (with the metrics token): the same key sends on every chain. */
export async function relayerOf(x: CrossChainStack): Promise<Address> {
  return getAddress((await x.stack.readyz()).chain.settlement.relayer);
}

/** The relayer's next nonce on the settlement chain and on the source chain, its unmined transactions counted. */
export async function relayerNonces(x: CrossChainStack, relayer: Address) {
  const count = (client: PublicClient) => client.getTransactionCount({ address: relayer, blockTag: "pending" });
  return { settlement: await count(x.chain.publicClient), source: await count(x.source.publicClient) };
}

/**
 * Rounds the settler (settlement chain) and the source chain's bridger have finished, as
 * /readyz shows them: a subprocess's loops are seen nowhere else.
 */
export async function relayerRounds(x: CrossChainStack): Promise<{ settler: number; bridger: number }> {
  const { chain } = await x.stack.readyz();
  const bridging = (chain.bridging as Array<{ chain_id: number; rounds: number }>).find(
    (b) => b.chain_id === LOCAL_SOURCE.chainId,
  );
  if (!bridging) throw new Error(`/readyz shows no bridging on the source chain: ${JSON.stringify(chain.bridging)}`);
  return { settler: chain.settlement.rounds, bridger: bridging.rounds };
}

/** Mines both chains until the settler and the bridger have each finished `rounds` more rounds than now. */
export async function loopsGoRound(x: CrossChainStack, rounds = 3): Promise<void> {
  const from = await relayerRounds(x);
  await mineBothUntil(
    x,
    async () => {
      const now = await relayerRounds(x);
      return now.settler >= from.settler + rounds && now.bridger >= from.bridger + rounds;
    },
    `${rounds} more rounds of the settler and the bridger`,
  );
}
