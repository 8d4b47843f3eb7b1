import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, createPublicClient, createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { foundry } from "viem/chains";
import { createAccountsService } from "../accounts/service.ts";
import { createAccountStore } from "../accounts/store.ts";
import { artifacts, ensureFactory } from "../chain/contracts.ts";
import { ensureFactoryV2 } from "../chain/deposit-v2.ts";
import { ensureFactoryV3 } from "../chain/deposit-v3.ts";
import { loadConfig } from "../config.ts";
import { openDb } from "../db/index.ts";
import { ANVIL_KEYS, startAnvil } from "../dev/anvil.ts";
import { LOCAL_SOURCE, startLocalCrossChain } from "../dev/crosschain-stack.ts";
import { type DevChain, payCrossChainFromDevWallet, payFromDevWallet } from "../dev/pay.ts";
import { startSmtpCatcher } from "../dev/smtp-catcher.ts";
import { systemClock } from "../lib/clock.ts";
import { randomIds } from "../lib/ids.ts";
import { describeSmtp } from "../lib/smtp-url.ts";
import { settingUp, stopAll } from "../lib/teardown.ts";
import { startServer } from "../server.ts";
import { parseArgs, UsageError } from "./args.ts";
import { usersService } from "./users.ts";

type Env = Record<string, string | undefined>;

// Where a running `stablegate dev` leaves what `stablegate dev pay` needs: the working
// directory, so two checkouts on one machine each find their own stack.
const STATE_FILE = join(process.cwd(), ".stablegate-dev.json");
const [DEPLOYER_KEY, PAYER_KEY, RELAYER_KEY, MERCHANT_KEY] = ANVIL_KEYS;
const DEV_USER_EMAIL = "dev@stablegate.test";

export async function runDev(argv: string[], env: Env): Promise<number> {
  if (argv[0] === "pay") return devPay(argv.slice(1));
  if (argv.length > 0) throw new UsageError(`unknown dev command "${argv[0]}"`);
  return devStack(env);
}

/** A local chain, test USDC, the server, an account and a paid example payment. */
async function devStack(env: Env): Promise<number> {
  const stops: Array<() => unknown> = [];
  // A step that fails half-way stops the chains and the server already started.
  await settingUp(async (undo) => {
    const onStop = (step: () => unknown) => {
      undo(step);
      stops.unshift(step);
    };
    await startDevStack(env, onStop);
  });
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await stopAll(...stops);
  return 0;
}

async function startDevStack(env: Env, onStop: (step: () => unknown) => void): Promise<void> {
  // Blocks come with each transaction while the contracts are deployed, then every second.
  const anvil = await startAnvil({ port: 8545 });
  onStop(() => anvil.stop());
  const transport = http(anvil.rpcUrl);
  const publicClient = createPublicClient({ chain: foundry, transport, pollingInterval: 100 });
  const deployer = createWalletClient({ chain: foundry, transport, account: privateKeyToAccount(DEPLOYER_KEY) });
  const usdcHash = await deployer.deployContract({
    abi: artifacts.TestUSDC.abi,
    bytecode: artifacts.TestUSDC.bytecode,
  });
  const usdc = (await publicClient.waitForTransactionReceipt({ hash: usdcHash })).contractAddress!;
  const payer = privateKeyToAccount(PAYER_KEY).address;
  await publicClient.waitForTransactionReceipt({
    hash: await deployer.writeContract({
      address: usdc,
      abi: artifacts.TestUSDC.abi,
      functionName: "mint",
      args: [payer, 1_000_000_000_000n],
    }),
  });
  await ensureFactory({ publicClient, walletClient: deployer });
  await ensureFactoryV2({ publicClient, walletClient: deployer });
  await ensureFactoryV3({ publicClient, walletClient: deployer });
  const crossChain = await startLocalCrossChain({
    destination: { rpcUrl: anvil.rpcUrl, usdc },
    deployerKey: DEPLOYER_KEY,
    payer,
    port: 8546,
  });
  onStop(() => crossChain.stop());
  // On the source chain too, so a plain transfer there gets its confirmations (`dev pay --chain`).
  for (const chain of [anvil, crossChain.source]) await chain.rpc("evm_setIntervalMining", [1]);

  const dataDir = env.STABLEGATE_DATA_DIR ?? mkdtempSync(join(tmpdir(), "stablegate-dev-"));
  // Emails go to a local catcher unless the developer names an SMTP server of their own.
  const catcher = env.STABLEGATE_SMTP_URL ? null : await startSmtpCatcher(join(dataDir, "emails"));
  if (catcher) onStop(() => catcher.stop());
  const config = loadConfig({
    STABLEGATE_PORT: "8080",
    STABLEGATE_PAYMENT_WINDOW: "60m",
    ...env,
    STABLEGATE_DATA_DIR: dataDir,
    STABLEGATE_CHAIN: "custom",
    STABLEGATE_CHAIN_ID: String(anvil.chainId),
    STABLEGATE_USDC_ADDRESS: usdc,
    STABLEGATE_RPC_URL: anvil.rpcUrl,
    STABLEGATE_CONFIRMATIONS: env.STABLEGATE_CONFIRMATIONS ?? "2",
    STABLEGATE_POLL_INTERVAL_MS: env.STABLEGATE_POLL_INTERVAL_MS ?? "500",
    STABLEGATE_RELAYER_KEY: RELAYER_KEY,
    STABLEGATE_WEBHOOK_ALLOW_PRIVATE: "on",
    STABLEGATE_LOG_LEVEL: env.STABLEGATE_LOG_LEVEL ?? "warn",
    ...(catcher ? { STABLEGATE_SMTP_URL: catcher.url, STABLEGATE_SMTP_FROM: "billing@stablegate.test" } : {}),
    ...crossChain.env,
  });
  const db = openDb(dataDir);
  const merchant = privateKeyToAccount(MERCHANT_KEY).address;
  const { account, api_key } = await createAccountsService({
    store: createAccountStore(db),
    clock: systemClock,
    ids: randomIds,
  }).createAccount({
    name: "Dev Shop",
    payoutAddress: merchant,
  });
  const users = usersService(db);
  // A data dir kept from an earlier run has that user already, on the earlier run's account.
  const taken = (await users.listUsers()).some((user) => user.email === DEV_USER_EMAIL);
  const email = taken ? `dev+${account.id.slice(-6).toLowerCase()}@stablegate.test` : DEV_USER_EMAIL;
  const dashboard = await users.createUser({ accountId: account.id, email }).finally(() => db.close());

  // The catcher's certificate is smtp-server's throwaway one for localhost: trusted here only.
  const server = await startServer(config, catcher ? { smtpTls: { trustAnyCertificate: true } } : {});
  onStop(() => server.stop());
  const dev: DevState = {
    rpcUrl: anvil.rpcUrl,
    usdc,
    payerKey: PAYER_KEY,
    serverUrl: server.url,
    sourceRpcUrl: crossChain.source.rpcUrl,
    sourceChainId: LOCAL_SOURCE.chainId,
    sourceName: LOCAL_SOURCE.name,
    sourceUsdc: crossChain.sourceUsdc,
    settlementName: config.chain.name,
  };
  writeFileSync(STATE_FILE, JSON.stringify(dev), { mode: 0o600 });
  onStop(() => rmSync(STATE_FILE, { force: true }));

  const created = await fetch(`${server.url}/api/v1/payments`, {
    method: "POST",
    headers: { authorization: `Bearer ${api_key}`, "content-type": "application/json" },
    body: JSON.stringify({
      amount: "25.00",
      description: "Example order",
      reference: "order-1001",
      invoice_number: "DEV-1001",
      customer_email: "customer@stablegate.test",
      customer_name: "Dev Customer",
      metadata: { order_id: "1001" },
    }),
  });
  const example = (await created.json()) as { id: string; pay_url: string };
  const paid = await payFromDevWallet(dev, example.id);
  const base = config.baseUrl;
  const source = `anvil ${crossChain.source.rpcUrl} (chain id ${LOCAL_SOURCE.chainId}), "${LOCAL_SOURCE.name}"`;
  const createExample = [
    `curl -s ${base}/api/v1/payments -H "Authorization: Bearer ${api_key}"`,
    `-H "Content-Type: application/json" -d '{"amount":"10.00","description":"My first payment"}'`,
  ].join(" ");
  const emailsLine = catcher
    ? `${catcher.dir}  (one .eml file per email; local SMTP catcher ${catcher.url})`
    : `sent through ${describeSmtp(config.email!.smtp)}`;
  console.log(`
Stablegate dev stack is running.

  chain      anvil ${anvil.rpcUrl} (chain id ${anvil.chainId}, 1 s blocks, ${config.chain.confirmations} confirmations)
  source     ${source} for CCTP cross-chain payments
  attester   ${crossChain.attestation.url} (local CCTP attestation service)
  USDC       ${usdc} (test token; the dev payer holds 1,000,000)
  server     ${base}  (data in ${dataDir})
  account    ${account.id}, payout to ${merchant}
  API key    ${api_key}
  API docs   ${base}/docs  (OpenAPI document: ${base}/openapi.json)
  emails     ${emailsLine}

Dashboard ${base}/dashboard/login
  email      ${dashboard.user.email}
  password   ${dashboard.password}

Example payment ${example.id}
  paid 25.00 USDC in ${paid.txHash}; it reaches "confirmed" in a few seconds:
  curl -s ${base}/api/v1/payments/${example.id} -H "Authorization: Bearer ${api_key}"
  checkout page: ${example.pay_url}

Try it yourself:
  ${createExample}
  npx --yes bun@1.4.5 run dev pay <payment_id> [amount]      (or: stablegate dev pay ...)
  npx --yes bun@1.4.5 run dev pay <payment_id> [amount] --chain ${LOCAL_SOURCE.name}  (a plain transfer there)
  npx --yes bun@1.4.5 run dev pay <payment_id> --cross-chain  (burn on ${LOCAL_SOURCE.name}, minted here through CCTP)

Ctrl-C stops everything.`);
}

/**
 * `stablegate dev pay <payment_id> [amount] [--chain <name>]`: pays from the running dev stack's
 * payer wallet, on the settlement chain or with a plain transfer on the local source chain.
 */
async function devPay(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, { "cross-chain": { type: "boolean" }, chain: { type: "string" } }, 2);
  const [paymentId, amount] = positionals;
  if (!paymentId)
    throw new UsageError(
      "usage: stablegate dev pay <payment_id> [amount] [--chain <name>] | " +
        "stablegate dev pay <payment_id> --cross-chain",
    );
  if (flags.has("chain") && flags.has("cross-chain"))
    throw new UsageError(
      "--chain and --cross-chain do not go together: --cross-chain always burns on the source chain",
    );
  if (!existsSync(STATE_FILE)) throw new UsageError("no dev stack found: start one with `stablegate dev` first");
  const dev = JSON.parse(readFileSync(STATE_FILE, "utf8")) as DevState;
  const chain = flags.get("chain") as string | undefined;
  if (chain !== undefined && chain !== dev.sourceName && chain !== dev.settlementName)
    throw new UsageError(
      `unknown chain "${chain}": the dev stack's chains are ${dev.settlementName} (the default) and ${dev.sourceName}`,
    );
  if (flags.has("cross-chain")) {
    const { burnTxHash, record } = await payCrossChainFromDevWallet(dev, paymentId);
    console.log(JSON.stringify({ payment_id: paymentId, burn_tx_hash: burnTxHash, burn: record }, null, 2));
    return 0;
  }
  const on =
    chain === dev.sourceName
      ? { ...dev, rpcUrl: dev.sourceRpcUrl, usdc: dev.sourceUsdc, chainId: dev.sourceChainId, chainName: chain }
      : dev;
  const { txHash, units } = await payFromDevWallet(on, paymentId, amount);
  const paid = { payment_id: paymentId, chain: chain ?? dev.settlementName, tx_hash: txHash };
  console.log(JSON.stringify({ ...paid, amount_units: units.toString() }, null, 2));
  return 0;
}

type DevState = DevChain & {
  sourceRpcUrl: string;
  sourceChainId: number;
  sourceName: string;
  sourceUsdc: Address;
  settlementName: string;
};
