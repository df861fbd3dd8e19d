/**
 * The audit trail (docs/audit.md): who did what, with which credential, from where, and how it
 * went. Built once (src/app/services.ts); the gateway's admin routes, approval decisions and the
 * tool gateway record through it, and GET /api/v1/audit reads through it.
 *
 * A write happens before the caller is answered. When it fails, the caller's answer stays what it
 * was (the change has been made: answering 503 would invite a retry that makes it twice, a second
 * API key or workflow), and the record goes whole to the log at error level instead, counted as
 * `flowgate_audit_records_total{result="failed"}` so that an alert can fire; records hold no
 * secret, so the log line may carry them.
 */
import { hash } from 'node:crypto';
import { LruCache } from '../cache/lru-cache';
import type { Logger } from '../observability/logger';
import type { FlowgateMetrics } from '../observability/metrics';
import type { AuditDurability, AuditFilter, AuditOutcome, AuditRecord, AuditStore, NewAuditRecord } from '../registry';
import { canonicalJson } from '../registry';
import { APPROVAL_DECIDED, TOOL_CALLED } from './actions';

export type { AuditFilter, AuditOutcome, AuditRecord } from '../registry';

/** Which kind of credential a record's actor presented. */
export type CredentialKind = 'admin_token' | 'api_key' | 'runtime_token' | 'approval_link' | 'console_session' | 'oauth_token' | 'member_token' | 'webhook_signature' | 'alert_rule';

/** Who acted, and with what: never the credential itself. */
export interface AuditActor {
  actor: string;
  actorName: string | null;
  credentialKind: CredentialKind;
  credentialId: string;
}

/** Where a request came from. */
export interface AuditSource {
  sourceIp: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export interface AuditEvent {
  orgId: string;
  action: string;
  target?: { type: string; id?: string | null };
  status: number;
  /** when the HTTP status alone does not say it (a tool that ran and failed is answered 200) */
  outcome?: AuditOutcome;
  details?: Record<string, unknown>;
}

/** An approval decision answered to an MCP elicitation. */
export interface McpApprovalEvent {
  orgId: string;
  keyId: string;
  /** the task, which is the run */
  taskId: string;
  stepIndex: number;
  decision: 'approve' | 'reject';
  approver?: string;
  /** a member signed in by URL: the decision is theirs */
  member?: { id: string; email: string };
  ok: boolean;
  refusal?: string;
  /** the decision's ID, once sent to the run; false: recorded in its history, to be applied when it resumes */
  decisionId?: string;
  applied?: boolean;
}

/** One tool call through the tool gateway, as the MCP method table saw it. */
export interface ToolCallEvent {
  orgId: string;
  /** the API key the runtime token was minted from (or the OAuth grant, `oauth:<id>`) */
  keyId: string;
  /** a member signed in by URL: the call is theirs */
  member?: { id: string; email: string };
  server: string;
  tool: string;
  /** digested, never kept */
  arguments: unknown;
  durationMs: number;
  /** false: the tool ran and reported an error; undefined: it did not run (see errorCode) */
  ran: boolean;
  isError?: boolean;
  /** the ToolCallError code or JSON-RPC error code of a call that did not run */
  errorCode?: string;
  /** the call was refused before it ran (unknown tool, bad params), rather than failed */
  refused?: boolean;
  /** started as an MCP task */
  task?: boolean;
}

/** The outcome a caller's HTTP status means: 2xx/3xx success, 4xx refused, 5xx failed. */
export function outcomeOf(status: number): AuditOutcome {
  if (status >= 500) return 'failed';
  return status >= 400 ? 'refused' : 'success';
}

/** A short, stable, one-way fingerprint of a credential that has no id of its own (an admin token, a link). */
export function credentialFingerprint(prefix: string, secretHash: string): string {
  return `${prefix}${secretHash.slice(0, 12)}`;
}

/** The SHA-256 of a value's canonical JSON: tells equal arguments apart from different ones without showing them. */
export function argumentsDigest(value: unknown): string {
  return `sha256:${hash('sha256', canonicalJson(value ?? {}), 'hex')}`;
}

/** A user agent is the caller's to choose: kept short. */
const MAX_USER_AGENT = 256;
const KEY_NAMES_CACHED = 10_000;
const KEY_NAME_TTL_MS = 60_000;

export interface AuditTrailDeps {
  store: AuditStore;
  /** an API key's name, revoked or not */
  keyName(keyId: string): Promise<string | null | undefined>;
  log: Logger;
  metrics?: Pick<FlowgateMetrics, 'auditRecord'>;
}

export class AuditTrail {
  private readonly keyNames = new LruCache<string, string | null>({ maxEntries: KEY_NAMES_CACHED, ttlMs: KEY_NAME_TTL_MS });

  constructor(private readonly deps: AuditTrailDeps) {
    // a journaled tool-call record the table refused when it was inserted (a file registry; audit-journal.ts)
    deps.store.onUnwritten ??= (error) => {
      deps.metrics?.auditRecord(false);
      deps.log.error('journaled audit record not written: the table refused it', { error });
    };
  }

  /**
   * The actor of an API key (or a runtime token minted from one), named when the key has a name;
   * of an OAuth grant for a tool gateway caller signed in by URL (keyId `oauth:<grant id>`, src/oauth/):
   * the member when a member's grant (`member:<id>`, their e-mail as the name), else the grant.
   */
  async keyActor(keyId: string, credentialKind: 'api_key' | 'runtime_token', member?: { id: string; email: string }): Promise<AuditActor> {
    if (keyId.startsWith('oauth:')) {
      const grant = keyId.slice('oauth:'.length);
      return member
        ? { actor: `member:${member.id}`, actorName: member.email, credentialKind: 'oauth_token', credentialId: grant }
        : { actor: keyId, actorName: null, credentialKind: 'oauth_token', credentialId: grant };
    }
    let name: string | null = null;
    try {
      name = (await this.keyNames.getOrLoad(keyId, async () => (await this.deps.keyName(keyId)) ?? null)) ?? null;
    } catch {
      // the record is written without the name rather than not at all
    }
    return { actor: `api-key:${keyId}`, actorName: name, credentialKind, credentialId: keyId };
  }

  /**
   * Appends one record; never throws. False when it could not be written: then it is in the log
   * (see the header for why the caller's answer stands).
   */
  async record(event: AuditEvent, actor: AuditActor, source: AuditSource, durability: AuditDurability = 'synced'): Promise<boolean> {
    const record: NewAuditRecord = {
      orgId: event.orgId, ...actor, action: event.action,
      targetType: event.target?.type ?? null, targetId: event.target?.id ?? null,
      outcome: event.outcome ?? outcomeOf(event.status), status: event.status,
      sourceIp: source.sourceIp, userAgent: source.userAgent?.slice(0, MAX_USER_AGENT) ?? null, requestId: source.requestId,
      details: event.details ?? {},
    };
    try {
      await this.deps.store.append(record, durability);
      this.deps.metrics?.auditRecord(true);
      return true;
    } catch (error) {
      this.deps.metrics?.auditRecord(false);
      this.deps.log.error('audit record not written: it is in this log line only', { audit: record, error });
      return false;
    }
  }

  /**
   * A tool call: server, tool, a digest of the arguments, how long, how it went; never the
   * arguments. Committed before the answer but not waited onto the disk (`committed`, see
   * AuditDurability): one per call on the data plane, where a synced commit would be most of a
   * proxied call's cost.
   */
  async toolCalled(event: ToolCallEvent, source: AuditSource): Promise<boolean> {
    const outcome: AuditOutcome = event.refused ? 'refused' : (!event.ran || event.isError) ? 'failed' : 'success';
    return this.record({
      orgId: event.orgId, action: TOOL_CALLED, target: { type: 'tool', id: `${event.server}/${event.tool}` }, status: 200, outcome,
      details: {
        server: event.server, tool: event.tool, argumentsDigest: argumentsDigest(event.arguments), durationMs: Math.round(event.durationMs),
        ...(event.task ? { task: true } : {}), ...(event.errorCode ? { errorCode: event.errorCode } : {}),
      },
    }, await this.keyActor(event.keyId, 'runtime_token', event.member), source, 'committed');
  }

  /**
   * An approval decided through an MCP task (the client's answer to an approval elicitation), by
   * the API key behind the runtime token. The answer itself is not answered (202).
   */
  async approvalDecided(event: McpApprovalEvent, source: AuditSource): Promise<boolean> {
    return this.record({
      orgId: event.orgId, action: APPROVAL_DECIDED, target: { type: 'run', id: event.taskId }, status: 202, outcome: event.ok ? 'success' : 'refused',
      details: {
        decision: event.decision, via: 'mcp', stepIndex: event.stepIndex,
        ...(event.approver ? { approver: event.approver } : {}), ...(event.ok ? {} : { refusal: event.refusal ?? 'refused' }),
        ...(event.decisionId ? { decisionId: event.decisionId } : {}), ...(event.applied === undefined ? {} : { applied: event.applied }),
      },
    }, await this.keyActor(event.keyId, 'runtime_token', event.member), source);
  }

  /** One page of the organization's records, newest first, and the cursor of the next page. */
  async list(orgId: string, filter: AuditFilter, limit: number): Promise<{ records: AuditRecord[]; nextCursor: string | null }> {
    const records = await this.deps.store.list(orgId, filter, limit + 1);
    const more = records.length > limit;
    const page = more ? records.slice(0, limit) : records;
    return { records: page, nextCursor: more ? page[page.length - 1]?.id ?? null : null };
  }
}
