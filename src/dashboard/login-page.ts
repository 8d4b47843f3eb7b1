import { html } from "../html/template.ts";
import { publicDashboardPage } from "./layout.ts";

export interface SignInView {
  /** The token the form echoes back (see session-cookie.ts). */
  csrf: string;
  /** Where to go after signing in (already checked to be a path on this site). */
  next: string;
  email?: string;
  /** Why the last attempt did not sign in, shown above the form. */
  error?: string;
  status?: number;
}

/** The sign-in form; it works without JavaScript, as every dashboard page does. */
export function signInPage(view: SignInView): Response {
  // The cursor starts where there is something to type: the email, or after a refusal the password.
  const focusEmail = view.email ? "" : html` autofocus`;
  const focusPassword = view.email ? html` autofocus` : "";
  const notice = view.error ? html`<p class="notice bad" role="alert">${view.error}</p>` : "";
  const body = html`<section class="card signin">
  <h1>Sign in</h1>
  <p class="muted">Stablegate dashboard</p>
  ${notice}
  <form method="post" action="/dashboard/login">
    <input type="hidden" name="csrf" value="${view.csrf}">
    <input type="hidden" name="next" value="${view.next}">
    <div class="field">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required
        value="${view.email ?? ""}"${focusEmail}>
    </div>
    <div class="field">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required${focusPassword}>
    </div>
    <button class="btn" type="submit">Sign in</button>
  </form>
</section>`;
  return publicDashboardPage("Sign in", body, view.status ?? 200);
}
