import type { PasswordHashing } from "../../src/users/service.ts";

/**
 * A light argon2id for tests of the rules around the password check (sign-in, sessions, the
 * throttle), which would otherwise spend most of their time hashing; the real cost is checked
 * once, in test/users/service.test.ts.
 */
export const LIGHT_HASHING: PasswordHashing = { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 };
