import { constantTimeEqual } from "../lib/secrets.ts";
import type { UsersService } from "../users/service.ts";
import type { SessionGate } from "./routes.ts";
import { readCookie, SESSION_COOKIE } from "./session-cookie.ts";

/** The gate routes.ts puts in front of every signed-in page: the session cookie, checked by the users service. */
export function createSessionGate(users: UsersService): SessionGate {
  return {
    async resolve(request) {
      const token = readCookie(request, SESSION_COOKIE);
      return token ? users.resolveSession(token) : null;
    },
    csrfValid: (session, token) => token !== null && constantTimeEqual(token, session.csrfToken),
  };
}
