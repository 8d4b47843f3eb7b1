import { type Address, getAddress, isAddress } from "viem";
import { type Clock, isoMillis } from "../lib/clock.ts";
import { AuthError, NotFoundError, ValidationError } from "../lib/errors.ts";
import { API_KEY, type IdGenerator } from "../lib/ids.ts";
import { constantTimeEqual, sha256Hex } from "../lib/secrets.ts";
import { isSpeed, SPEEDS, type Speed } from "../lib/speed.ts";
import type { KeyCache } from "./key-cache.ts";
import type { AccountRow, AccountStore, ApiKeyRow, KeyWithAccount } from "./store.ts";

export interface Account {
  id: string;
  name: string;
  payoutAddress: Address;
  /** null: the server-wide STABLEGATE_FEE_BPS applies. */
  feeBps: number | null;
  /** Its speed policy; null: the server's STABLEGATE_SPEED applies. */
  speed: Speed | null;
  /**
   * The API key that authenticated the request; absent where the account was reached otherwise
   * (a session, the CLI).
   */
  keyId?: string;
  /**
   * With `keyId`: the version of keys and accounts that key was read at (`KeyWithAccount.version`).
   * A create stores its payment only while it is still the version (src/payments/insert-store.ts).
   */
  keyVersion?: number;
}

export interface ApiKeyInfo {
  id: string;
  account_id: string;
  hint: string;
  created_at: string;
  revoked_at: string | null;
  /** To the minute (KEY_USE_RESOLUTION_MS); null when the key never authenticated a request. */
  last_used_at: string | null;
}

export interface AccountsDeps {
  store: AccountStore;
  clock: Clock;
  ids: IdGenerator;
  /**
   * The server's STABLEGATE_SPEED, the policy an account without its own shows as in effect;
   * what never shows an account (a test, `stablegate dev`) may leave it out: standard.
   */
  defaultSpeed?: Speed;
  /** Keys resolved recently (src/accounts/key-cache.ts); without it every request reads the store. */
  keyCache?: KeyCache;
}

/**
 * How stale a key's last_used_at may be. Recording every request would turn each API read into
 * a write, and with synchronous=FULL a disk flush, all queued on SQLite's one writer; "last used"
 * only needs to tell a key in use from an idle one, so a key is written at most once a minute.
 */
export const KEY_USE_RESOLUTION_MS = 60_000;

export function createAccountsService({ store, clock, ids, defaultSpeed = "standard", keyCache }: AccountsDeps) {
  const toJson = (row: AccountRow) => toAccountJson(row, defaultSpeed);

  async function issueKey(accountId: string): Promise<{ id: string; api_key: string }> {
    const apiKey = ids.apiKey();
    const id = ids.prefixed("key");
    await store.insertKey({
      id,
      account_id: accountId,
      key_hash: sha256Hex(apiKey),
      key_hint: apiKey.slice(-4),
      created_at: clock.now(),
    });
    return { id, api_key: apiKey };
  }

  /** The hash of the API key an Authorization header carries; one that carries none is a 401. */
  function keyHashOf(header: string | null | undefined): string {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    const key = match?.[1];
    if (!key || !API_KEY.test(key))
      throw new AuthError(header ? "invalid API key" : "missing API key: send Authorization: Bearer <API_KEY>");
    return sha256Hex(key);
  }

  /**
   * The account of the key `row` (read by its `hash`, null when there is none), or the same 401 as
   * for any bad key; records the key's use, once a minute at most. `authenticate` reads the row;
   * a read that brings the key along with what the request asks for (src/payments/retrieve.ts) hands it here.
   */
  async function admit(hash: string, row: KeyWithAccount | null): Promise<Account> {
    if (!row || !constantTimeEqual(row.key_hash, hash) || row.revoked_at !== null)
      throw new AuthError("invalid API key");
    const now = clock.now();
    if (row.last_used_at === null || now - row.last_used_at >= KEY_USE_RESOLUTION_MS) {
      await store.touchKey(row.id, now, now - KEY_USE_RESOLUTION_MS);
      row.last_used_at = now; // the cached row too: the next request within the minute writes nothing
    }
    return {
      id: row.account_id,
      name: row.account_name,
      payoutAddress: row.payout_address as Address,
      feeBps: row.fee_bps,
      speed: row.speed,
      keyId: row.id,
      keyVersion: row.version,
    };
  }

  return {
    /** Creates an account with its first API key; the key is returned here and never again. */
    async createAccount(input: { name: string; payoutAddress: string; feeBps?: number }) {
      const name = input.name.trim();
      if (!name || name.length > 200) throw new ValidationError("name must be 1 to 200 characters");
      const payoutAddress = payoutAddressFrom(input.payoutAddress);
      const feeBps = input.feeBps;
      if (feeBps !== undefined && (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000)) {
        throw new ValidationError("fee bps must be a whole number from 0 to 10000");
      }
      const row: AccountRow = {
        id: ids.prefixed("acct"),
        name,
        payout_address: payoutAddress,
        fee_bps: feeBps ?? null,
        speed: null,
        created_at: clock.now(),
      };
      const key = await store.transaction(async () => {
        await store.insertAccount(row);
        return issueKey(row.id);
      });
      return { account: toJson(row), api_key: key.api_key, key_id: key.id };
    },

    async createKey(accountId: string) {
      if (!(await store.findAccount(accountId))) throw new NotFoundError(`no account ${accountId}`);
      return issueKey(accountId);
    },

    async listAccounts() {
      return (await store.listAccounts()).map(toJson);
    },

    async showAccount(accountId: string) {
      const row = await store.findAccount(accountId);
      if (!row) throw new NotFoundError(`no account ${accountId}`);
      return toJson(row);
    },

    /**
     * Sets the speed policy of the account's new payments from `text`: fast, standard, final, or
     * default (follow STABLEGATE_SPEED again). Each payment keeps the policy it was created with.
     * A bad value or an unknown account changes nothing.
     */
    async setSpeed(accountId: string, text: string) {
      const speed = speedSetting(text);
      const row = await store.setSpeed(accountId, speed);
      if (!row) throw new NotFoundError(`no account ${accountId}`);
      return toJson(row);
    },

    async listKeys(accountId?: string): Promise<ApiKeyInfo[]> {
      return (await store.listKeys(accountId)).map(toKeyInfo);
    },

    /**
     * Revokes a key; with `accountId`, only one of that account's (another's is 404). Revoking
     * twice keeps the first time.
     */
    async revokeKey(keyId: string, accountId?: string): Promise<ApiKeyInfo> {
      const row = await store.revokeKey(keyId, clock.now(), accountId);
      if (!row) throw new NotFoundError(`no key ${keyId}`);
      return toKeyInfo(row);
    },

    /**
     * Resolves an Authorization header to its account. Every failure is the same 401 so a
     * caller learns nothing about which keys exist. A revocation bites on the next request, cache
     * or not (src/accounts/key-cache.ts says how); `confirmedByStatement` is for a request whose one
     * statement checks the key and its account's terms itself (a payment create), which may then
     * be answered from the cache on PostgreSQL too.
     */
    async authenticate(
      header: string | null | undefined,
      options?: { confirmedByStatement?: boolean },
    ): Promise<Account> {
      const hash = keyHashOf(header);
      const read = () => store.findKeyByHash(hash);
      return admit(hash, keyCache ? await keyCache.resolve(hash, read, options) : await read());
    },

    keyHashOf,
    admit,
    /** The key recently resolved here, for a statement that confirms it itself (key-cache.ts); PostgreSQL only. */
    recentKey: (hash: string): Promise<KeyWithAccount | undefined> =>
      keyCache?.recent(hash) ?? Promise.resolve(undefined),
    /** Keeps a key read together with something else (the retrieve's statement) for `recentKey`. */
    rememberKey: (hash: string, row: KeyWithAccount | null): void => keyCache?.remember(hash, row),

    /**
     * Whether a key still authenticates (exists and is not revoked), read from the store each
     * time: what holds a connection open on a key asks again, so a revocation by any process ends it.
     */
    keyIsLive(keyId: string): Promise<boolean> {
      return store.isKeyLive(keyId);
    },

    async findAccount(id: string): Promise<Account | null> {
      const row = await store.findAccount(id);
      return row
        ? {
            id: row.id,
            name: row.name,
            payoutAddress: row.payout_address as Address,
            feeBps: row.fee_bps,
            speed: row.speed,
          }
        : null;
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;

/**
 * Funds can only ever go to this address, so a typo must not pass: a mixed-case address must
 * carry a valid EIP-55 checksum (all lower case has none to check).
 */
export function payoutAddressFrom(text: string): Address {
  if (!isAddress(text, { strict: false }))
    throw new ValidationError("payout address must be a 0x-prefixed 20-byte address");
  if (!isAddress(text, { strict: true })) {
    throw new ValidationError(
      "payout address has mixed case but a wrong EIP-55 checksum: check it for a typo, or give it in lower case",
    );
  }
  if (/^0x0{40}$/i.test(text)) throw new ValidationError("payout address must not be the zero address");
  return getAddress(text);
}

/** What `setSpeed` takes besides a policy: the account follows the server's default again. */
export const FOLLOW_DEFAULT = "default";

/** A speed setting as the CLI and the dashboard send it; null is `default`. */
export function speedSetting(text: string): Speed | null {
  if (text === FOLLOW_DEFAULT) return null;
  if (isSpeed(text)) return text;
  throw new ValidationError(
    `speed must be one of ${SPEEDS.join(", ")}, or ${FOLLOW_DEFAULT} to follow the server's STABLEGATE_SPEED`,
  );
}

/**
 * The account as the CLI prints it and events carry it. `speed` is the policy in effect for its
 * new payments; `speed_source` says whether it is the account's own or the server's default
 * (`defaultSpeed`, STABLEGATE_SPEED), as the settings page says of the fee.
 */
export function toAccountJson(row: AccountRow, defaultSpeed: Speed) {
  return {
    id: row.id,
    name: row.name,
    payout_address: row.payout_address,
    fee_bps: row.fee_bps,
    speed: row.speed ?? defaultSpeed,
    speed_source: (row.speed === null ? "server" : "account") as "server" | "account",
    created_at: isoMillis(row.created_at),
  };
}

function toKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    account_id: row.account_id,
    hint: `sk_live_...${row.key_hint}`,
    created_at: isoMillis(row.created_at),
    revoked_at: isoMillis(row.revoked_at),
    last_used_at: isoMillis(row.last_used_at),
  };
}
