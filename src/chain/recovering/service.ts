import { type Address, erc20Abi, getAddress, zeroAddress } from "viem";
import type { Account } from "../../accounts/service.ts";
import type { Clock } from "../../lib/clock.ts";
import { DomainError, NotFoundError, UnavailableError, UnprocessableError, ValidationError } from "../../lib/errors.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import type { PaymentRow } from "../../payments/store.ts";
import { factoryOf, recoverCall } from "../deposit-terms.ts";
import { errorMessage, revertOf } from "../rpc-errors.ts";
import { overGasCap } from "./gas.ts";
import { checkRecoveryLimits } from "./limits.ts";
import type { RecoveryNetwork } from "./networks.ts";
import type { RecoveryRow, RecoveryStore } from "./store.ts";
import { MAX_LOG_QUERIES, transferToDeposit } from "./transfer-proof.ts";

export interface RecoverInput {
  chain: string;
  /** An ERC-20 address; absent or null for the chain's native coin. */
  token?: string | null;
}

export interface RecoveriesDeps {
  store: RecoveryStore;
  /** The account's payment by id (NotFoundError otherwise), and any payment by id. */
  payments: {
    retrieve(account: Account, id: string): Promise<PaymentRow>;
    findById(id: string): Promise<PaymentRow | null>;
  };
  /** The settlement chain first, then the enabled source chains. */
  networks: readonly RecoveryNetwork[];
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** Tells the recoverer a new request is waiting. */
  wake: () => void;
}

export type RecoveriesService = ReturnType<typeof createRecoveriesService>;

/**
 * Requests to return tokens or native coin sent to a deposit address by mistake. A request is
 * checked against the limits (./limits.ts) and the chain (a simulation of `recover`, the token's
 * Transfer to the deposit address, the gas cap of ./gas.ts) before anything is stored, so a
 * refusal changes nothing; the recoverer (./recoverer.ts) then sends and follows the transaction.
 */
export function createRecoveriesService(deps: RecoveriesDeps) {
  const { store, networks, clock, ids } = deps;
  const settlement = networks.find((n) => n.settlement)!;

  function networkNamed(name: string): RecoveryNetwork {
    const network = networks.find((n) => n.name === name);
    if (!network) throw new ValidationError(`chain must be one of: ${networks.map((n) => n.name).join(", ")}`);
    return network;
  }

  /**
   * Refuses in words what `recover` could not or must not do now, RPC trouble as 503: it must
   * move something; a token must have been sent to the deposit address (its own Transfer log says
   * so); and it must fit the gas cap, since the relayer pays for whatever the token's `transfer` does.
   */
  async function check(payment: PaymentRow, network: RecoveryNetwork, token: Address | null): Promise<void> {
    const { publicClient, account } = network.clients;
    const what = token ? `token ${token}` : "the native coin";
    const call = { ...recoverCall(payment, token ?? zeroAddress), account } as Parameters<
      typeof publicClient.simulateContract
    >[0];
    try {
      const code = await publicClient.getCode({ address: factoryOf(payment) });
      if (!code || code === "0x")
        throw new UnavailableError(
          `the deposit contracts are not deployed on ${network.name} yet; try again shortly`,
          5,
        );
      const { result } = await publicClient.simulateContract(call);
      if (result === 0n)
        throw new UnprocessableError(
          `nothing to recover: the deposit address holds no ${token ? `token ${token}` : "native coin"} ` +
            `on ${network.name}`,
        );
      if (token) {
        const deposit = getAddress(payment.deposit_address);
        const search = await transferToDeposit(publicClient, token, deposit, payment.created_at);
        if (search === "none")
          throw new UnprocessableError(
            `${what} has logged no Transfer to the deposit address ${deposit} on ${network.name} since the ` +
              "payment was created: only a token sent there can be recovered",
          );
        if (search === "too_far")
          throw new UnprocessableError(
            `no Transfer of ${what} to the deposit address ${deposit} found in the ${MAX_LOG_QUERIES} log queries ` +
              `a request may make on ${network.name}, which do not reach back to the payment's creation: ` +
              "its RPC endpoint answers narrow block ranges only",
          );
      }
      const gas = await publicClient.estimateContractGas(
        call as Parameters<typeof publicClient.estimateContractGas>[0],
      );
      const over = overGasCap(gas, what, network.name);
      if (over) throw new UnprocessableError(over);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      const revert = revertOf(error);
      if (revert?.data?.errorName === "BridgeableToken" || revert?.data?.errorName === "CommittedToken")
        throw refusedUsdc(network, token!);
      if (revert)
        throw new UnprocessableError(`recovering ${what} on ${network.name} would revert: ${reasonOf(error)}`);
      deps.log.warn("recover check: chain unreachable", { chain: network.name, error: errorMessage(error) });
      throw new UnavailableError(`${network.name} cannot be reached right now; try again shortly`, 5);
    }
  }

  /** The token's decimals when it says (18 for native coin), else null: the amount is shown in raw units. */
  async function decimalsOf(network: RecoveryNetwork, token: Address | null): Promise<number | null> {
    if (!token) return 18;
    try {
      return await network.clients.publicClient.readContract({
        address: token,
        abi: erc20Abi,
        functionName: "decimals",
      });
    } catch {
      return null;
    }
  }

  async function ownedBy(account: Account, row: RecoveryRow | null): Promise<RecoveryRow | null> {
    return row && (await deps.payments.findById(row.payment_id))?.account_id === account.id ? row : null;
  }

  return {
    /**
     * Checks and records a request; `commit(row, created)` runs in the insert's transaction (for
     * the idempotency key). A recovery of the same token on the same chain still under way is
     * answered instead of a second one (`created` false): its transaction will move it all. The
     * limits come before the chain is asked anything, and again in the insert's transaction.
     */
    async request(
      account: Account,
      paymentId: string,
      input: RecoverInput,
      commit: (row: RecoveryRow, created: boolean) => Promise<void> = async () => {},
    ): Promise<{ row: RecoveryRow; created: boolean }> {
      const payment = await deps.payments.retrieve(account, paymentId);
      const network = networkNamed(input.chain);
      const token = tokenAddress(input.token);
      if (payment.factory_version === 1 && !network.settlement)
        throw new ValidationError(
          `chain must be ${settlement.name} for this payment: its deposit address is a version 1 address, ` +
            `which exists on ${settlement.name} only`,
        );
      if (network.settlement && token && token === getAddress(payment.token_address)) throw refusedUsdc(network, token);

      const open = () => store.openFor(payment.id, network.chainId, token);
      const earlier = await open();
      if (earlier) {
        await commit(earlier, false);
        return { row: earlier, created: false };
      }
      const limits = { account, paymentId: payment.id, chainId: network.chainId, chainName: network.name, token };
      await checkRecoveryLimits(store, { ...limits, now: clock.now() });
      await check(payment, network, token);
      const decimals = await decimalsOf(network, token);
      const outcome = await store.transaction(async () => {
        // Asked twice at once: the second finds the first's row here, or its count.
        await store.lockAccount(account.id);
        const raced = await open();
        if (raced) {
          await commit(raced, false);
          return { row: raced, created: false };
        }
        await checkRecoveryLimits(store, { ...limits, now: clock.now() });
        const id = ids.prefixed("rcv");
        await store.insert({
          id,
          payment_id: payment.id,
          chain_id: network.chainId,
          token,
          decimals,
          payout_address: payment.payout_address,
          now: clock.now(),
        });
        const row = (await store.findById(id))!;
        await commit(row, true);
        return { row, created: true };
      });
      if (outcome.created) deps.wake();
      return outcome;
    },

    /** One recovery of the account's (another's or an unknown id: 404). */
    async retrieve(account: Account, id: string): Promise<RecoveryRow> {
      const row = await ownedBy(account, await store.findById(id));
      if (!row) throw new NotFoundError(`no recovery ${id}`);
      return row;
    },

    /** The recoveries of one of the account's payments, newest first. */
    async forPayment(account: Account, paymentId: string): Promise<RecoveryRow[]> {
      return store.forPayment((await deps.payments.retrieve(account, paymentId)).id);
    },

    /** A chain's name by id, for the recovery's JSON. */
    chainName: (chainId: number) => networks.find((n) => n.chainId === chainId)?.name ?? `chain ${chainId}`,
    /** The chains a recovery of the payment may be asked on, the settlement chain first. */
    chainsFor: (payment: Pick<PaymentRow, "factory_version">) =>
      // Version 1 addresses exist on the settlement chain only; versions 2 and 3 on every chain.
      networks.filter((n) => n.settlement || payment.factory_version !== 1).map((n) => n.name),
  };
}

/**
 * An ERC-20 address in any letter case (a form's input has no schema in front of it), or null
 * for the native coin.
 */
function tokenAddress(text: string | null | undefined): Address | null {
  if (text == null || text === "") return null;
  if (!/^0x[0-9a-fA-F]{40}$/.test(text))
    throw new ValidationError(
      "token must be an ERC-20 contract address (0x and 40 hex digits), or empty for the native coin",
    );
  return getAddress(text);
}

function refusedUsdc(network: RecoveryNetwork, token: Address): ValidationError {
  return new ValidationError(
    network.settlement
      ? `token ${token} is the USDC this payment settles in on ${network.name}: it goes to the payout ` +
          "address only through settlement, which the server does by itself"
      : `token ${token} is USDC that the deposit address bridges from ${network.name} to the settlement ` +
          "chain, where it settles; it cannot be recovered",
  );
}

/** The contract's refusal in a line: its custom error and arguments, or its message. */
export function reasonOf(error: unknown): string {
  const revert = revertOf(error);
  if (revert?.data?.errorName) {
    const args = (revert.data.args ?? []).map(String).join(", ");
    return `${revert.data.errorName}(${args})`;
  }
  return revert?.reason ?? errorMessage(error);
}
