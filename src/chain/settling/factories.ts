import type { Account, Chain, PublicClient, Transport, WalletClient } from "viem";
import { ensureFactoryFor, factoryOf } from "../deposit-terms.ts";
import type { NonceManager } from "../nonces.ts";

/**
 * The settler's knowledge of the factories it calls. A settle sent to an address without code
 * "succeeds" without doing anything and still costs its gas, and a reorg may take a factory's
 * deployment: so the factories are deployed (or found) before the first settlement is sent, and
 * again after a settlement was mined to a factory without code.
 */
export function createFactories(deps: {
  client: PublicClient;
  wallet: WalletClient<Transport, Chain | undefined, Account>;
  nonces: NonceManager;
  /** Deploy the version 2 factory too (SettlerDeps.factoryV2). */
  factoryV2?: boolean;
}) {
  let ready = false;
  return {
    /** Deploys each factory that has no code, unless all were found since the last loss. */
    async ensure(): Promise<void> {
      if (ready) return;
      const deployer = { publicClient: deps.client, walletClient: deps.wallet, nonces: deps.nonces };
      // Version 3 makes every new payment's address; older payments still settle through theirs.
      await ensureFactoryFor(3, deployer);
      await ensureFactoryFor(1, deployer);
      if (deps.factoryV2) await ensureFactoryFor(2, deployer);
      ready = true;
    },
    /** A settlement was mined to a factory without code: look again before the next one is sent. */
    lost(): void {
      ready = false;
    },
    /** For /readyz, with the settler's status. */
    status: () => ({
      factory: factoryOf({ factory_version: 1 }),
      factory_v2: deps.factoryV2 ? factoryOf({ factory_version: 2 }) : null,
      factory_v3: factoryOf({ factory_version: 3 }),
      factory_ready: ready,
    }),
  };
}
