/**
 * The codec endpoint: `POST /codec/decode` and `POST /codec/encode` in the format the Temporal Web
 * UI and the `temporal` CLI (`--codec-endpoint`) use, so that an operator reads runs' payloads in
 * clear there while Temporal holds them sealed (src/crypto/payload-codec.ts). It opens every
 * organization's data, so only the instance administrator may call it: with the token as a bearer
 * (the CLI: `--codec-auth 'Bearer …'`), or, from a browser, with the short-lived cookie that
 * `/codec/sign-in` sets (the Web UI's "include cross-origin credentials"). Cross-origin calls are
 * allowed only from the configured Temporal Web UI origins (the embedded UI's by default); other
 * origins get no CORS headers, and a cookie presented from one is refused.
 */
import Router from '@koa/router';
import type { Payload } from '@temporalio/common';
import { koaBody } from 'koa-body';
import type { Next } from 'koa';
import { z } from 'zod';
import { CodecPayloadsSchema, type CodecPayloadJson } from '../../contracts/codec-bodies';
import { CODEC_SIGN_IN_REFUSED, CODEC_SIGNED_IN, CODEC_SIGNED_OUT } from '../../audit/actions';
import { credentialFingerprint } from '../../audit/audit-trail';
import { DataDecryptionError } from '../../crypto/payload-codec';
import { CODEC_SESSION_COOKIE, CODEC_SESSION_SECONDS, codecCookie } from '../../crypto/codec-sessions';
import { hashSecret } from '../../crypto/secrets';
import type { GatewayDeps } from '../deps';
import { badRequest, forbidden, HttpError, unauthorized } from '../http-error';
import { sourceOf } from '../middleware/audit';
import { jsonBody } from '../middleware/json-body';
import type { GatewayContext, GatewayRouter, GatewayState } from '../state';
import { parseBody } from '../validate';
import { escapeHtml, sendStandalonePage } from '../standalone-page';
import { ErrorBodySchema } from '../../contracts/http-bodies';
import { mount, type Operations } from '../operation';
import { admin, errors, json, jsonRequest } from '../openapi-kit';

export { CODEC_SESSION_COOKIE, CODEC_SESSION_SECONDS };
const PLAUSIBLE_SECRET = /^[A-Za-z0-9._~-]{16,256}$/;
/** The UI decodes a history's payloads in a few calls; a large one holds many. */
const CODEC_BODY_LIMIT = '16mb';

const SignInFormSchema = z.object({ token: z.string().max(300) });

const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

export const CODEC_OPERATIONS = {
  codecDecode: {
    method: 'post', path: '/codec/decode', tags: ['operations'], security: [...admin, { codecSession: [] }],
    summary: 'Decrypt Temporal payloads (the codec endpoint of the Temporal Web UI and CLI; instance administrator token or codec sign-in)',
    requestParams: { header: z.object({ 'X-Namespace': z.string().optional().meta({ description: 'the Temporal namespace; another than flowgate\'s is refused' }) }) },
    requestBody: jsonRequest(CodecPayloadsSchema),
    responses: { '200': json(CodecPayloadsSchema, 'the payloads in clear (those already in clear unchanged)'), ...errors(400, 401, 403, 413, 415), '422': json(ErrorBodySchema, 'a payload sealed with a key this instance does not have, or altered') },
  },
  codecEncode: {
    method: 'post', path: '/codec/encode', tags: ['operations'], security: [...admin, { codecSession: [] }],
    summary: 'Encrypt Temporal payloads with the newest data key (the Web UI sends signals and starts so)',
    requestParams: { header: z.object({ 'X-Namespace': z.string().optional() }) }, requestBody: jsonRequest(CodecPayloadsSchema),
    responses: { '200': json(CodecPayloadsSchema, 'the payloads sealed (unchanged when FLOWGATE_DATA_ENCRYPTION=off)'), ...errors(400, 401, 403, 413, 415) },
  },
  codecSignInPage: {
    method: 'get', path: '/codec/sign-in', tags: ['operations'], summary: 'The codec sign-in page (a form for the instance administrator token)', security: [],
    responses: { '200': html('an HTML page') },
  },
  codecSignIn: {
    method: 'post', path: '/codec/sign-in', tags: ['operations'], security: [],
    summary: 'Sign in to the codec endpoint: sets an HttpOnly, SameSite=Strict cookie for an hour',
    requestBody: { content: { 'application/x-www-form-urlencoded': { schema: z.object({ token: z.string() }) } } },
    responses: { '200': html('signed in (an HTML page; Set-Cookie)'), '401': html('not the instance administrator token (the form again)') },
  },
  codecSignOut: {
    method: 'post', path: '/codec/sign-out', tags: ['operations'], summary: 'End the codec sign-in (clears the cookie)', security: [],
    responses: { '200': { description: 'signed out (an HTML page)', content: { 'text/html': { schema: z.string() } } } },
  },
} satisfies Operations;
const OPS = CODEC_OPERATIONS;

const SIGN_IN_STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}
input{width:100%;font-size:1rem;padding:.4rem}button{font-size:1rem;padding:.5rem 1.5rem;margin-top:1rem;cursor:pointer}
code{background:#f2f2f2;padding:0 .2rem}.error{color:#b3261e}`;

function page(ctx: GatewayContext, status: number, body: string): void {
  sendStandalonePage(ctx, status, { title: 'flowgate codec sign-in', heading: 'Decode run data in the Temporal Web UI', style: SIGN_IN_STYLE, body });
}

function signInForm(error?: string): string {
  return `${error ? `<p class="error">${escapeHtml(error)}</p>` : ''}
<p>Run data is encrypted before it reaches Temporal. Sign in with the instance administrator token
(<code>FLOWGATE_ADMIN_TOKEN</code>, or the data dir's <code>admin-token</code>) to let the Temporal Web UI in this
browser decode it through this gateway for an hour.</p>
<form method="post" action="sign-in"><label for="token">Administrator token</label>
<input id="token" name="token" type="password" autocomplete="off" required>
<button type="submit">Sign in</button></form>`;
}

function toPayload(json: CodecPayloadJson): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(json.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(json.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): CodecPayloadJson {
  return {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

export function codecRoutes(deps: GatewayDeps): GatewayRouter {
  const router = new Router<GatewayState>();
  const settings = deps.codec;
  if (!settings) return router;
  const { codec, sessions } = settings;
  const origins = new Set(settings.origins);
  const secure = deps.config.publicUrl?.startsWith('https:') ?? false;

  /** An allowed Web UI's origin gets the CORS headers that let its page read the answer (a 401 too). */
  async function cors(ctx: GatewayContext, next: Next): Promise<void> {
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    if (origin !== '' && origins.has(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Credentials', 'true');
    }
    await next();
  }

  /** The instance administrator's bearer token, or a sign-in cookie (from no page but an allowed UI's). */
  async function instanceAdminOnly(ctx: GatewayContext, next: Next): Promise<void> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'))?.[1];
    let tokenHash: string | undefined;
    if (bearer !== undefined) {
      if (!PLAUSIBLE_SECRET.test(bearer)) throw unauthorized('unknown admin token');
      tokenHash = hashSecret(bearer);
    } else {
      const cookie = ctx.cookies.get(CODEC_SESSION_COOKIE);
      if (!cookie) throw unauthorized('the instance administrator token is required (a bearer token, or sign in at /codec/sign-in)');
      tokenHash = sessions.verify(cookie);
      if (!tokenHash) throw unauthorized('the codec sign-in has expired or is not valid: sign in again at /codec/sign-in');
      const origin = ctx.get('Origin');
      if (origin !== '' && !origins.has(origin)) throw forbidden('this origin is not a Temporal Web UI this gateway serves (FLOWGATE_TEMPORAL_UI_ORIGIN)');
    }
    const found = await deps.registry.orgs.findAdminToken(tokenHash);
    if (!found) throw unauthorized('unknown admin token');
    if (!found.instanceAdmin) throw forbidden('only the instance administrator may decode run data: it holds every organization\'s');
    await next();
  }

  /** A codec sign-in, refusal or sign-out in the organization's audit trail (never the token: its fingerprint). */
  async function recordCodec(ctx: GatewayContext, orgId: string, tokenHash: string, action: string, status: number): Promise<void> {
    const credentialId = credentialFingerprint('adm_', tokenHash);
    await deps.audit.record(
      { orgId, action, target: { type: 'codec_session', id: null }, status, details: { method: ctx.method, route: ctx.path } },
      { actor: action === CODEC_SIGN_IN_REFUSED ? 'admin' : 'instance-admin', actorName: null, credentialKind: 'admin_token', credentialId },
      sourceOf(ctx),
    );
  }

  function namespaceChecked(ctx: GatewayContext): void {
    const namespace = ctx.get('X-Namespace');
    if (namespace !== '' && namespace !== deps.config.temporal.namespace) {
      throw badRequest('wrong_namespace', `this codec serves Temporal namespace ${deps.config.temporal.namespace}, not ${namespace}`);
    }
  }

  const preflight = async (ctx: GatewayContext): Promise<void> => {
    const origin = ctx.get('Origin');
    if (origin === '' || !origins.has(origin)) {
      ctx.status = 403;
      return;
    }
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
  };
  router.options('/codec/decode', cors, preflight);
  router.options('/codec/encode', cors, preflight);

  mount(router, OPS.codecDecode, cors, instanceAdminOnly, jsonBody({ limit: CODEC_BODY_LIMIT }), async (ctx) => {
    namespaceChecked(ctx);
    const { payloads } = parseBody(ctx, CodecPayloadsSchema);
    try {
      ctx.body = { payloads: (await codec.decode(payloads.map(toPayload))).map(toJson) };
    } catch (err) {
      if (err instanceof DataDecryptionError) throw new HttpError(422, 'undecryptable', err.message);
      throw err;
    }
    ctx.set('Cache-Control', 'no-store');
  });
  mount(router, OPS.codecEncode, cors, instanceAdminOnly, jsonBody({ limit: CODEC_BODY_LIMIT }), async (ctx) => {
    namespaceChecked(ctx);
    const { payloads } = parseBody(ctx, CodecPayloadsSchema);
    ctx.body = { payloads: (await codec.encode(payloads.map(toPayload))).map(toJson) };
    ctx.set('Cache-Control', 'no-store');
  });

  mount(router, OPS.codecSignInPage, async (ctx) => page(ctx, 200, signInForm()));
  const form = koaBody({
    json: false, urlencoded: true, multipart: false, text: false, formLimit: '4kb',
    onError() {
      throw badRequest('invalid_form', 'the sign-in form could not be read');
    },
  });
  mount(router, OPS.codecSignIn, form, async (ctx) => {
    const parsed = SignInFormSchema.safeParse(ctx.request.body);
    const token = parsed.success ? parsed.data.token.trim() : '';
    const found = PLAUSIBLE_SECRET.test(token) ? await deps.registry.orgs.findAdminToken(hashSecret(token)) : undefined;
    if (!found?.instanceAdmin) {
      // An organization's token is recorded in its own trail (a token that is no one's has no organization to go to).
      if (found) await recordCodec(ctx, found.orgId, hashSecret(token), CODEC_SIGN_IN_REFUSED, 401);
      page(ctx, 401, signInForm(found ? 'That is an organization\'s token: only the instance administrator may decode run data.' : 'That is not the instance administrator token.'));
      return;
    }
    await recordCodec(ctx, found.orgId, hashSecret(token), CODEC_SIGNED_IN, 200);
    const value = sessions.issue(hashSecret(token), CODEC_SESSION_SECONDS);
    ctx.append('Set-Cookie', codecCookie(value, CODEC_SESSION_SECONDS, secure));
    const uis = [...origins];
    page(ctx, 200, `<p id="signed-in">Signed in for an hour. The Temporal Web UI${uis.length > 0 ? ` at ${uis.map((o) => `<code>${escapeHtml(o)}</code>`).join(' or ')}` : ''}
in this browser can now decode run data: its codec endpoint is this gateway's <code>/codec</code>, with
"include cross-origin credentials" on (the data encoder settings, top right of the UI).</p>
<form method="post" action="sign-out"><button type="submit">Sign out</button></form>`);
  });
  mount(router, OPS.codecSignOut, async (ctx) => {
    const cookie = ctx.cookies.get(CODEC_SESSION_COOKIE);
    const tokenHash = cookie ? sessions.verify(cookie) : undefined;
    const signedIn = tokenHash ? await deps.registry.orgs.findAdminToken(tokenHash) : undefined;
    if (tokenHash && signedIn) await recordCodec(ctx, signedIn.orgId, tokenHash, CODEC_SIGNED_OUT, 200);
    ctx.append('Set-Cookie', codecCookie('', 0, secure));
    page(ctx, 200, `<p>Signed out.</p>${signInForm()}`);
  });
  return router;
}
