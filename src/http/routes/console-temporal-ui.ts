/**
 * "Open in the Temporal Web UI" from a run's console page (docs/console.md "The Temporal Web UI"):
 * `POST /console/runs/:runId/temporal-ui` signs the browser in to the codec endpoint with the
 * console session's identity and sends it on (a page that refreshes at once) to the run's page in the embedded Web UI, which then
 * decodes the run's payloads through flowgate's `/codec` (the UI is configured to send the
 * browser's credentials there). The codec opens every organization's data, so only a session of the
 * instance administrator may do this; another session is refused with the reason, and the plain
 * link (payloads sealed) stays on its page. Recorded as `codec.signed_in` (or
 * `codec.sign_in_refused`) with the console session as actor and the run as target.
 *
 * The cookie is set on this gateway's host for /codec: the Web UI's calls reach the codec endpoint
 * it was started with, so the console must be open on that endpoint's origin (an operator on
 * `localhost` while the UI calls `127.0.0.1` would send no cookie); another origin is refused with
 * a link to the same page there.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { CODEC_SIGN_IN_REFUSED, CODEC_SIGNED_IN } from '../../audit/actions';
import { CODEC_SESSION_SECONDS, codecCookie } from '../../crypto/codec-sessions';
import { consoleActor } from '../console/audit';
import { href, html } from '../console/html';
import { page, send } from '../console/layout';
import { consoleState, refusePage } from '../console/guard';
import { temporalUiRunUrl } from '../console/run-views';
import type { ConsoleRouteKit } from '../console/kit';
import type { GatewayDeps } from '../deps';
import { sourceOf } from '../middleware/audit';
import { routeTemplate } from '../middleware/observe';
import { callTemporal } from '../temporal-errors';

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export function consoleTemporalUiRoutes(router: Router, deps: GatewayDeps, kit: ConsoleRouteKit): void {
  const runs = deps.console?.runs;
  if (!runs) return;
  const secure = deps.config.publicUrl?.startsWith('https:') ?? false;

  const record = async (ctx: Context, action: string, status: number, runId: string, reason?: string): Promise<void> => {
    const { session } = consoleState(ctx);
    await deps.audit.record({
      orgId: session.orgId, action, target: { type: 'run', id: runId }, status,
      details: { via: 'console', method: ctx.method, route: routeTemplate(ctx), ...(reason ? { reason } : {}) },
    }, consoleActor(session), sourceOf(ctx));
  };

  router.post('/runs/:runId/temporal-ui', kit.session, kit.parseForm, kit.csrf, async (ctx) => {
    const { session } = consoleState(ctx);
    const runId = String(ctx.params.runId ?? '');
    const brief = await callTemporal(() => runs.brief(session.orgId, runId));
    if (!brief) return refusePage(ctx, 404, 'No such run', 'This organization has no run with that ID.');
    const target = temporalUiRunUrl(deps, brief.runId);
    const endpoint = deps.codec?.endpoint;
    if (!target || !deps.codec || !endpoint) {
      return refusePage(ctx, 404, 'No Temporal Web UI to open', 'This gateway started no Temporal Web UI with a codec endpoint (an external Temporal, or PORT=0): open your own Web UI and sign in at /codec/sign-in.');
    }
    if (!session.instanceAdmin) {
      await record(ctx, CODEC_SIGN_IN_REFUSED, 403, brief.runId, 'not the instance administrator');
      return refusePage(ctx, 403, 'Decoding needs the instance administrator',
        'The Temporal Web UI decodes run data through a codec that opens every organization\'s data, so only a console session of the instance administrator signs in to it.',
        'Nothing was changed. The plain link on the run\'s page opens the run in the Web UI with its data sealed.');
    }
    const codecOrigin = originOf(endpoint);
    if (codecOrigin !== `${ctx.protocol}://${ctx.host}`) {
      // the cookie would be set on a host the Web UI's calls do not go to
      return refusePage(ctx, 409, 'Open the console at the codec\'s address',
        `The Temporal Web UI decodes through ${endpoint}; its sign-in must be made at ${codecOrigin ?? endpoint}. Sign in to the console at ${codecOrigin ?? endpoint}/console and open the run there.`);
    }
    await record(ctx, CODEC_SIGNED_IN, 200, brief.runId);
    ctx.append('Set-Cookie', codecCookie(deps.codec.sessions.issue(session.adminTokenHash, CODEC_SESSION_SECONDS), CODEC_SESSION_SECONDS, secure));
    ctx.set('Cache-Control', 'no-store');
    // a page that goes on at once (form-action 'self' stops a redirect of this POST to the Web UI's origin)
    send(ctx, 200, page({ title: 'Opening the Temporal Web UI', csrf: session.csrfToken, section: 'runs', refresh: target },
      html`<h1>Opening the Temporal Web UI</h1><p>Signed in to the codec for an hour. <a id="temporal-ui-go" href="${href(target)}">Open run ${brief.runId} in the Temporal Web UI</a> if it does not open by itself.</p>`));
  });
}
