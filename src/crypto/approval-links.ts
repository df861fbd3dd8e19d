/**
 * Approval links: one per approver and approval step, signed, expiring with the step. The link
 * alone authorizes that approver's one decision; single use is enforced by the workflow, which
 * refuses a second decision by the same approver.
 */
import { hmac, safeEqual } from './secrets';

export interface ApprovalLinkClaims {
  runId: string;
  stepIndex: number;
  approver: string;
  /** unix seconds: the step's deadline */
  exp: number;
}

export interface ApprovalLinks {
  url(claims: ApprovalLinkClaims): string;
  verify(token: string): { status: 'ok'; claims: ApprovalLinkClaims } | { status: 'expired'; claims: ApprovalLinkClaims } | { status: 'invalid' };
}

export function createApprovalLinks(secret: Buffer, publicUrl: string, now: () => number = Date.now): ApprovalLinks {
  const sign = (body: string): string => hmac(secret, JSON.stringify(['approval', body]));
  return {
    url(claims) {
      const body = Buffer.from(JSON.stringify([claims.runId, claims.stepIndex, claims.approver, claims.exp])).toString('base64url');
      return `${publicUrl}/approvals/${body}.${sign(body)}`;
    },
    verify(token) {
      const [body, signature, extra] = token.split('.');
      if (!body || !signature || extra !== undefined || !safeEqual(signature, sign(body))) return { status: 'invalid' };
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return { status: 'invalid' };
      }
      if (!Array.isArray(parsed) || parsed.length !== 4) return { status: 'invalid' };
      const [runId, stepIndex, approver, exp]: unknown[] = parsed;
      if (typeof runId !== 'string' || typeof stepIndex !== 'number' || typeof approver !== 'string' || typeof exp !== 'number') return { status: 'invalid' };
      const claims = { runId, stepIndex, approver, exp };
      return exp * 1000 < now() ? { status: 'expired', claims } : { status: 'ok', claims };
    },
  };
}
