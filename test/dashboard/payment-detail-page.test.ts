/**
 * The payment page's renderer, a pure function of plain data: transactions and addresses link to
 * the chain's block explorer on a built-in chain, and are shown unlinked where there is none.
 */
import { describe, expect, test } from "bun:test";
import { explorerFor } from "../../src/chain/explorer.ts";
import { type PaymentDetailData, paymentDetailBody } from "../../src/dashboard/payment-detail-page.ts";
import type { PaymentDetail } from "../../src/payments/detail.ts";
import { paymentRow } from "../support/payment-rows.ts";

const TRANSFER_TX = `0x${"a1".repeat(32)}`;
const SETTLEMENT_TX = `0x${"b2".repeat(32)}`;
const DEPOSIT = "0x9F1b2C3d4E5f60718293A4b5C6d7E8f901234567";
const NOW = Date.UTC(2026, 10, 23, 12, 0);

function detail(): PaymentDetail {
  return {
    payment: {
      seq: 1,
      ...paymentRow("acct_1", NOW, {
        id: `0x${"c3".repeat(32)}`,
        status: "confirmed",
        amount_received: 25_000_000n,
        fee_bps: 150,
        fee_recipient: "0x2222222222222222222222222222222222222222",
        payout_address: "0x1111111111111111111111111111111111111111",
        chain_id: 8453,
        token_address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        deposit_address: DEPOSIT,
      }),
      amount_settled: 25_000_000n,
      bridge_fee: 0n,
      fee_settled: 375_000n,
      settle_attempts: 1,
      settle_retry_at: null,
      refund_reserved: 0n,
      amount_refunded: 0n,
    },
    lineItems: null,
    split: { fee: 375_000n, net: 24_625_000n },
    transfers: [
      {
        chain: "base",
        onSettlementChain: true,
        txHash: TRANSFER_TX,
        logIndex: 0,
        from: "0x3333333333333333333333333333333333333333",
        amount: 25_000_000n,
        blockNumber: 100,
        confirmed: true,
        reversed: false,
        seenAt: NOW,
      },
    ],
    settlements: [
      {
        txHash: SETTLEMENT_TX,
        state: "mined",
        amount: 25_000_000n,
        blockNumber: 102,
        submittedAt: NOW,
        updatedAt: NOW,
      },
    ],
    crossChain: [],
    history: [],
    deliveries: [],
  };
}

function render(
  chain: { name: string; chainId: number },
  crossChain: PaymentDetail["crossChain"] = [],
  changes: Partial<PaymentDetail> = {},
): string {
  const data: PaymentDetailData = {
    detail: { ...detail(), crossChain, ...changes },
    payUrl: "https://pay.example.test/pay/x",
    chainName: chain.name,
    explorer: explorerFor(chain),
    // As configured: a built-in arbitrum source, and a custom one.
    sourceExplorer: (name) => explorerFor({ name, chainId: name === "arbitrum" ? 42161 : 1337 }),
    qrDataUri: "data:image/svg+xml;base64,",
    created: false,
  };
  return paymentDetailBody(data).toString();
}

describe("explorer links on the payment page", () => {
  test("a transfer on a source chain links to that chain's explorer, named in its row", () => {
    const sourceTx = `0x${"f6".repeat(32)}`;
    const base = detail();
    const transfer = { ...base.transfers[0]!, chain: "arbitrum", onSettlementChain: false, txHash: sourceTx };
    const page = paymentDetailBody({
      detail: { ...base, transfers: [transfer] },
      payUrl: "https://pay.example.test/pay/x",
      chainName: "base",
      explorer: explorerFor({ name: "base", chainId: 8453 }),
      sourceExplorer: (name) => explorerFor({ name, chainId: name === "arbitrum" ? 42161 : 1337 }),
      qrDataUri: "data:image/svg+xml;base64,",
      created: false,
    }).toString();
    expect(page).toContain(`href="https://arbiscan.io/tx/${sourceTx}"`);
    expect(page).not.toContain(`basescan.org/tx/${sourceTx}`);
    expect(page).toContain("<td>arbitrum</td>");
  });

  test("on a built-in chain: the transfer, the settlement and the addresses link to its explorer", () => {
    const page = render({ name: "base", chainId: 8453 });
    expect(page).toContain(`href="https://basescan.org/tx/${TRANSFER_TX}"`);
    expect(page).toContain(`href="https://basescan.org/tx/${SETTLEMENT_TX}"`);
    expect(page).toContain(`href="https://basescan.org/address/${DEPOSIT}"`);
  });

  test("on a custom chain: the same hashes and addresses, linked nowhere", () => {
    const page = render({ name: "custom", chainId: 31337 });
    expect(page).toContain(`title="${TRANSFER_TX}"`);
    expect(page).toContain(`title="${SETTLEMENT_TX}"`);
    expect(page).toContain(DEPOSIT);
    expect(page).not.toMatch(/href="[^"]*\/(tx|address)\//);
  });

  test("a transfer a reorg took off the chain stays listed, marked as reversed, never as credited", () => {
    const [transfer] = detail().transfers;
    const page = render({ name: "base", chainId: 8453 }, [], {
      transfers: [{ ...transfer!, confirmed: false, reversed: true }],
    });
    const row = /<section[^>]*id="pd-transfers"[\s\S]*?<\/section>/.exec(page)![0];
    expect(row).toContain("reversed by a reorg");
    expect(row).not.toContain(">credited<");
    expect(row).toContain(`title="${TRANSFER_TX}"`);
    // Confirmed with less received than asked: said first, where a merchant who ships looks.
    const short = render({ name: "base", chainId: 8453 }, [], {
      payment: { ...detail().payment, amount_received: 0n },
      transfers: [{ ...transfer!, confirmed: false, reversed: true }],
    });
    expect(short).toContain("A reorg took funds of this payment off the chain");
    expect(short).toContain("0.00 of 25.00 USDC is still received");
    expect(page).not.toContain('id="pd-reversed"');
  });

  test("fee and net are those of the received amount at the payment's fee", () => {
    const page = render({ name: "base", chainId: 8453 });
    expect(page).toContain('<dt>Fee</dt><dd>0.375 USDC <span class="muted">(1.50%)</span></dd>');
    expect(page).toContain("<dt>Net to you</dt><dd>24.625 USDC</dd>");
    // The speed policy it runs under (docs/speed.md).
    expect(page).toContain("<dt>Speed</dt><dd>standard</dd>");
  });

  test("a cross-chain burn links to its source chain's explorer, its mint to the settlement chain's", () => {
    const burn = (chain: string, tx: string) => ({
      id: "burn_1",
      chain,
      tx_hash: tx,
      state: "redeemed" as const,
      amount: "25.00",
      redeem_tx_hash: SETTLEMENT_TX,
      error: null,
      created_at: new Date(NOW).toISOString(),
      updated_at: new Date(NOW).toISOString(),
    });
    const burnTx = `0x${"d4".repeat(32)}`;
    const customTx = `0x${"e5".repeat(32)}`;
    const page = render({ name: "base", chainId: 8453 }, [burn("arbitrum", burnTx), burn("my-l2", customTx)]);
    expect(page).toContain(`href="https://arbiscan.io/tx/${burnTx}"`);
    expect(page).toContain(`href="https://basescan.org/tx/${SETTLEMENT_TX}"`);
    expect(page).toContain(`<span class="mono" title="${customTx}">`);
    expect(page).not.toContain(`/tx/${customTx}`);
  });

  test("no cross-chain section for a payment without burns", () => {
    expect(render({ name: "base", chainId: 8453 })).not.toContain("Cross-chain funding");
  });
});
