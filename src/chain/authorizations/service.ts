import { type Address, getAddress, type Hex, isAddressEqual, type PublicClient, recoverTypedDataAddress } from "viem";
import type { Clock } from "../../lib/clock.ts";
import { ConflictError, UnavailableError, ValidationError } from "../../lib/errors.ts";
import type { IdGenerator } from "../../lib/ids.ts";
import type { Logger } from "../../lib/log.ts";
import { errorMessage, revertOf } from "../rpc-errors.ts";
import { AUTHORIZATION_GAS_CAP, floorOf } from "./floor.ts";
import { type AuthorizationLimits, checkAuthorizationLimits } from "./limits.ts";
import { revertVerdict, say } from "./messages.ts";
import { recordOf } from "./record.ts";
import type { AuthorizationStore } from "./store.ts";
import { eip3009Abi, transferCall, typedDataOf } from "./token.ts";
import type {
  AcceptAsk,
  AuthorizationFailure,
  AuthorizationRecord,
  Authorizations,
  TokenDomain,
  TransferAuthorization,
  Verdict,
} from "./types.ts";

/** A refusal of an authorization, in the payer's words, with its code for programs (x402's invalidReason). */
export class AuthorizationRefused extends ValidationError {
  constructor(
    readonly code: AuthorizationFailure,
    message: string,
  ) {
    super(message);
  }
}

/** The settlement chain as gasless payments see it. */
export interface AuthorizationChain {
  chainId: number;
  name: string;
  usdc: Address;
  sweepFloor: bigint;
  nativePrice: bigint | null;
}

export interface AuthorizationsDeps {
  store: AuthorizationStore;
  chain: AuthorizationChain;
  client: PublicClient;
  /** The relayer's address: what the simulation calls from. */
  relayer: Address;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /** An authorization must stay valid this long past now to be accepted: the time to send and mine it. */
  marginSeconds: number;
  /** Tells the submitter a new authorization is waiting. */
  wake: () => void;
  /** How many are accepted (./limits.ts); the built-in figures unless a test sets others. */
  limits?: AuthorizationLimits;
  /** Resolves when a record may have changed (the submitter saved one), or after `ms`. */
  changed: (ms: number) => Promise<void>;
}

/** How long a gas price read serves the floor. */
const GAS_PRICE_TTL_MS = 15_000;
/** How often outcome() looks again without word from the submitter (another replica may hold the lease). */
const OUTCOME_POLL_MS = 500;

const refuse = (code: AuthorizationFailure, message: string): Verdict => ({ ok: false, code, message });

/**
 * Gasless payments: checks of signed EIP-3009 authorizations and their records (./store.ts). A
 * refusal changes nothing; an accepted one is stored and the submitter (./submitter.ts) sends it.
 * Only the settlement chain's USDC is served (source chains: not yet).
 */
export function createAuthorizationsService(deps: AuthorizationsDeps): Authorizations {
  const { store, chain, client, clock, ids, log } = deps;
  let domainCache: Promise<TokenDomain> | null = null;
  let gasPrice: { wei: bigint; at: number } | null = null;

  const unavailable = (what: string, error: unknown): never => {
    log.warn("gasless: chain unreachable", { what, error: errorMessage(error) });
    throw new UnavailableError("the chain cannot be reached right now; try again shortly", 5);
  };

  function onChain(chainId: number): void {
    if (chainId !== chain.chainId) throw new AuthorizationRefused("wrong_chain", say.wrongChain(chainId, chain.name));
  }

  async function domain(chainId: number): Promise<TokenDomain> {
    onChain(chainId);
    domainCache ??= (async () => {
      const read = (functionName: "name" | "version") =>
        client.readContract({ address: chain.usdc, abi: eip3009Abi, functionName });
      try {
        const [name, version] = await Promise.all([read("name"), read("version")]);
        return { name, version, chainId: chain.chainId, verifyingContract: getAddress(chain.usdc) };
      } catch (error) {
        if (revertOf(error) || /returned no data|reverted/i.test(errorMessage(error)))
          throw new AuthorizationRefused("unsupported_token", say.unsupportedToken());
        return unavailable("domain", error);
      }
    })();
    try {
      return await domainCache;
    } catch (error) {
      domainCache = null; // a failed read is asked again next time
      throw error;
    }
  }

  async function floor(chainId: number): Promise<bigint> {
    onChain(chainId);
    if (!gasPrice || clock.now() - gasPrice.at > GAS_PRICE_TTL_MS) {
      const wei = await client.getGasPrice().catch((error) => unavailable("gas price", error));
      gasPrice = { wei, at: clock.now() };
    }
    return floorOf({ sweepFloor: chain.sweepFloor, nativePrice: chain.nativePrice, gasPriceWei: gasPrice.wei });
  }

  async function verify(ask: {
    chainId: number;
    authorization: TransferAuthorization;
    signature: Hex;
    expect: { to: Address; value: bigint };
  }): Promise<Verdict> {
    const a = ask.authorization;
    const now = clock.now();
    const nowS = Math.floor(now / 1000);
    if (ask.chainId !== chain.chainId) return refuse("wrong_chain", say.wrongChain(ask.chainId, chain.name));
    if (!isAddressEqual(a.to, ask.expect.to)) return refuse("wrong_recipient", say.wrongRecipient(a.to));
    if (a.value !== ask.expect.value) return refuse("wrong_amount", say.wrongAmount(a.value, ask.expect.value));
    if (a.validBefore <= BigInt(nowS)) return refuse("expired", say.expired(Number(a.validBefore), now));
    if (a.validBefore <= BigInt(nowS + deps.marginSeconds))
      return refuse("expired", say.expiresTooSoon(Number(a.validBefore), now));
    if (a.validAfter >= BigInt(nowS)) return refuse("not_yet_valid", say.notYetValid(Number(a.validAfter), now));
    let tokenDomain: TokenDomain;
    try {
      tokenDomain = await domain(ask.chainId);
    } catch (error) {
      if (error instanceof AuthorizationRefused) return refuse(error.code, error.message);
      throw error;
    }
    const signer = await recoverTypedDataAddress({ ...typedDataOf(tokenDomain, a), signature: ask.signature }).catch(
      () => null,
    );
    if (!signer || !isAddressEqual(signer, a.from)) return refuse("invalid_signature", say.invalidSignature());
    const least = await floor(ask.chainId);
    if (a.value < least) return refuse("below_floor", say.belowFloor(least));
    const [used, held] = await Promise.all([
      client.readContract({
        address: chain.usdc,
        abi: eip3009Abi,
        functionName: "authorizationState",
        args: [a.from, a.nonce],
      }),
      client.readContract({ address: chain.usdc, abi: eip3009Abi, functionName: "balanceOf", args: [a.from] }),
    ]).catch((error) => unavailable("authorization state", error));
    if (used) return refuse("used", say.used());
    if (held < a.value) return refuse("insufficient_funds", say.insufficientFunds(held, a.value));
    try {
      const gas = await client.estimateContractGas({
        ...transferCall(chain.usdc, a, ask.signature),
        account: deps.relayer,
      });
      if (gas > AUTHORIZATION_GAS_CAP) return refuse("reverted", say.tooCostly());
    } catch (error) {
      const verdict = revertVerdict(error, {
        validAfter: Number(a.validAfter),
        validBefore: Number(a.validBefore),
        held,
        needed: a.value,
        nowMs: now,
      });
      if (verdict) return refuse(verdict.code, verdict.message);
      return unavailable("simulation", error);
    }
    return { ok: true, payer: getAddress(a.from) };
  }

  async function accept(ask: AcceptAsk): Promise<AuthorizationRecord> {
    const a = ask.authorization;
    const from = getAddress(a.from);
    const nonce = a.nonce.toLowerCase() as Hex;
    const token = getAddress(chain.usdc);
    // The same authorization again (a page's retry, a replay): the record it made, whatever it became.
    const again = async () => {
      const existing = await store.findByKey(ask.chainId, token, from, nonce);
      if (!existing) return null;
      const same =
        existing.payment_id === ask.paymentId &&
        isAddressEqual(existing.to_address as Address, a.to) &&
        BigInt(existing.value) === a.value &&
        existing.signature.toLowerCase() === ask.signature.toLowerCase();
      if (!same) throw new AuthorizationRefused("used", say.used());
      return recordOf(existing);
    };
    const before = await again();
    if (before) return before;

    const verdict = await verify(ask);
    if (!verdict.ok) {
      // The same authorization posted at once (a double submit) may have been accepted, sent and
      // mined while this one was checked: its nonce is used then, by that record, which is the answer.
      const meanwhile = await again();
      if (meanwhile) return meanwhile;
      throw new AuthorizationRefused(verdict.code, verdict.message);
    }
    const head = await client.getBlockNumber({ cacheTime: 0 }).catch((error) => unavailable("head", error));
    const id = ids.prefixed("auth");
    const stored = await store.transaction(async () => {
      await store.lockKeys([`payment:${ask.paymentId}`, `client:${ask.client}`, `account:${ask.accountId}`]);
      const raced = await again();
      if (raced) return raced;
      // One at a time per payment: each is for the whole amount due, so a second would pay twice.
      if (ask.paymentId !== null && (await store.openForPayment(ask.paymentId)))
        throw new ConflictError(say.onItsWay());
      await checkAuthorizationLimits(store, { ...ask, now: clock.now() }, deps.limits);
      await store.insert({
        id,
        payment_id: ask.paymentId,
        account_id: ask.accountId,
        chain_id: ask.chainId,
        token,
        from_address: from,
        to_address: getAddress(a.to),
        value: a.value.toString(),
        valid_after: a.validAfter.toString(),
        valid_before: a.validBefore.toString(),
        nonce,
        signature: ask.signature,
        source: ask.source,
        client: ask.client,
        resource: ask.resource ?? null,
        // A few blocks back: the node that answered may be ahead of the one the submitter asks.
        from_block: Math.max(0, Number(head) - 10),
        created_at: clock.now(),
      });
      return recordOf((await store.findById(id))!);
    });
    if (stored.id === id) {
      log.info("gasless authorization accepted", {
        authorization_id: id,
        payment_id: ask.paymentId,
        source: ask.source,
      });
      deps.wake();
    }
    return stored;
  }

  async function find(id: string): Promise<AuthorizationRecord | null> {
    const row = await store.findById(id);
    return row ? recordOf(row) : null;
  }

  async function outcome(id: string, deadlineMs: number): Promise<AuthorizationRecord> {
    for (;;) {
      const record = await find(id);
      if (!record) throw new ValidationError("no such authorization");
      const left = deadlineMs - clock.now();
      if (record.status === "succeeded" || record.status === "failed" || left <= 0) return record;
      await deps.changed(Math.min(left, OUTCOME_POLL_MS));
    }
  }

  async function findSigned(chainId: number, from: Address, nonce: Hex): Promise<AuthorizationRecord | null> {
    const row = await store.findByKey(chainId, getAddress(chain.usdc), getAddress(from), nonce.toLowerCase());
    return row ? recordOf(row) : null;
  }

  return {
    domain,
    floor,
    verify,
    accept,
    outcome,
    find,
    findSigned,
    forPayment: async (paymentId) => (await store.forPayment(paymentId)).map(recordOf),
  };
}
