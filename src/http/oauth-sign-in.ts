/**
 * How a person signs in on the authorization server's page (src/http/routes/oauth-authorize.ts).
 * Today one method: the organization's admin token, pasted (the bootstrap credential; it is not
 * kept, only its hash, so that rotating the token ends the grants made with it).
 *
 * The seam for other methods (used by the members' OpenID Connect sign-in, src/http/routes/oauth-oidc.ts):
 * a method either authenticates the posted sign-in form (`authenticate`), or sends
 * the browser elsewhere and later, back on a route of its own, hands the still-sealed
 * authorization request and the SignedInSubject to `continueToConsent` (exported by the
 * authorize routes), which shows the consent step. Either way the rest (consent, code, tokens) is
 * the same.
 */
import type { Context } from 'koa';
import type { Registry } from '../registry';
import { hashSecret } from '../crypto/secrets';
import { credentialFingerprint } from '../audit/audit-trail';
import type { SignedInSubject } from '../oauth/tickets';
import { html, type Html } from './console/html';

export interface OAuthSignInMethod {
  /** the form's fields, inside the sign-in form */
  fields(): Html;
  /** who the posted form signs in, or undefined (a refusal, told as "not signed in") */
  authenticate(form: Record<string, unknown>): Promise<SignedInSubject | undefined>;
}

/** An organization ID as the authorization page takes it (a query parameter, a form field). */
export const ORG_ID = /^[A-Za-z0-9_.-]{1,100}$/;

/** What the authorize routes lend a sign-in method that sends the browser elsewhere (the members' OpenID Connect sign-in): app.ts hands it over. */
export interface OAuthOidcPages {
  browserIdOf(ctx: Context): string | undefined;
  errorPage(ctx: Context, status: number, message: string): void;
  continueToConsent(ctx: Context, requestTicket: string, subject: SignedInSubject): Promise<void>;
}

const PLAUSIBLE_SECRET = /^[A-Za-z0-9._~-]{16,256}$/;

export function adminTokenSignIn(registry: Registry): OAuthSignInMethod {
  return {
    fields: () => html`<label for="token">Organization admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false">
<p class="hint">The token the management API takes (<code>fga_…</code>). It is not kept, nor given to the client.</p>`,
    async authenticate(form) {
      const token = typeof form.token === 'string' ? form.token.trim() : '';
      if (!PLAUSIBLE_SECRET.test(token)) return undefined;
      const hash = hashSecret(token);
      const found = await registry.orgs.findAdminToken(hash);
      return found && { orgId: found.orgId, subject: `admin-token:${credentialFingerprint('adm_', hash)}`, adminTokenHash: hash };
    },
  };
}
