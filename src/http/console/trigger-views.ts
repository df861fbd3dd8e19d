/**
 * A trigger's page in the console (docs/webhooks.md#in-the-console, docs/console.md): its URL, a
 * verified trigger's preset and options (never a secret: how many it holds and when they last
 * changed), its debounce or batch, its last deliveries (verified, or refused with the check that
 * failed) and the form that replaces its secrets.
 */
import type { TriggerDeliveryRecord, TriggerRecord } from '../../registry';
import { html, type Html } from './html';

export interface TriggerPage {
  trigger: TriggerRecord;
  workflowName: string | undefined;
  publicUrl: string;
  csrf: string;
  /** a verified trigger's secrets: how many, and when they last changed */
  secrets?: { count: number; updatedAt: string };
  deliveries: TriggerDeliveryRecord[];
  notice?: string;
  error?: string;
}

/** A preset's options as `name: value` lines (the preset itself shown apart). */
function optionsOf(verify: Record<string, unknown>): Html {
  const entries = Object.entries(verify).filter(([name]) => name !== 'preset');
  if (entries.length === 0) return html`<span class="meta">no options (the preset's defaults)</span>`;
  return html`<ul class="options">${entries.map(([name, value]) => html`<li><code>${name}</code>: <code>${typeof value === 'string' ? value : Array.isArray(value) ? value.map(String).join(', ') : JSON.stringify(value)}</code></li>`)}</ul>`;
}

function shapingOf(trigger: TriggerRecord): Html {
  const shaping = trigger.shaping;
  if (!shaping) return html`<p class="meta" id="shaping">Each call starts its own run.</p>`;
  if ('debounce' in shaping) {
    const d = shaping.debounce;
    return html`<p id="shaping">Debounce: one run once no call came for ${d.quietSeconds} s (at most ${d.maxWaitSeconds} s after the first), collecting ${d.collect === 'last' ? 'the last event' : 'every event'}${d.key ? html`, a window per <code>${d.key}</code>` : ''}.</p>`;
  }
  const b = shaping.batch;
  return html`<p id="shaping">Batch: one run per ${b.size} calls, or with fewer ${b.maxWaitSeconds} s after the first${b.key ? html`, a batch per <code>${b.key}</code>` : ''}.</p>`;
}

function deliveriesTable(deliveries: TriggerDeliveryRecord[]): Html {
  if (deliveries.length === 0) return html`<p class="meta" id="no-deliveries">No deliveries yet.</p>`;
  return html`<table id="deliveries"><caption class="visually-hidden">Last deliveries</caption>
<thead><tr><th scope="col">At</th><th scope="col">Outcome</th><th scope="col">Reason</th><th scope="col">Delivery ID</th><th scope="col">Run</th></tr></thead>
<tbody>${deliveries.map((d) => html`<tr data-outcome="${d.outcome}"><td>${d.at}</td><td>${d.outcome === 'refused' ? html`<strong>refused</strong>` : d.outcome}</td>
<td>${d.reason ?? html`<span class="meta">-</span>`}</td><td>${d.deliveryId ? html`<code>${d.deliveryId}</code>` : html`<span class="meta">-</span>`}</td>
<td>${d.runId ? html`<a href="/console/runs/${encodeURIComponent(d.runId)}"><code>${d.runId}</code></a>` : html`<span class="meta">-</span>`}</td></tr>`)}</tbody></table>`;
}

function secretsForm(page: TriggerPage): Html {
  const action = `/console/triggers/${encodeURIComponent(page.trigger.id)}/secrets`;
  return html`<form method="post" data-needs="triggers.write" action="${action}" id="rotate" class="panel" autocomplete="off"><input type="hidden" name="csrf" value="${page.csrf}">
<h3>Replace the secrets</h3>
<p class="hint">To rotate: give the new secret and the one the sender uses now (both verify), change it at the sender, then give the new one alone. A secret is stored sealed and never shown again.</p>
<label for="secret-new">New secret</label><input id="secret-new" name="secret" type="password" minlength="8" maxlength="1000" required autocomplete="off">
<label for="secret-old">Previous secret (optional, while the sender still signs with it)</label><input id="secret-old" name="previousSecret" type="password" maxlength="1000" autocomplete="off">
<div class="actions"><button type="submit">Replace the secrets</button></div></form>`;
}

export function triggerBody(page: TriggerPage): Html {
  const { trigger } = page;
  const verify: Record<string, unknown> | null = trigger.verify ? { ...trigger.verify } : null;
  const workflowHref = `/console/workflows/${encodeURIComponent(trigger.workflowId)}`;
  return html`<h1>Trigger <code>${trigger.id}</code>${trigger.name ? html` ${trigger.name}` : ''}</h1>
${page.notice ? html`<p class="notice" role="status">${page.notice}</p>` : ''}
${page.error ? html`<p class="error" role="alert">${page.error}</p>` : ''}
<p>Of <a href="${workflowHref}">${page.workflowName ?? trigger.workflowId}</a>: <code>POST ${page.publicUrl}/ext/triggers/${trigger.id}</code>${trigger.disabledAt ? html` <strong>disabled</strong>` : ''}</p>
<h2>Verification</h2>
${verify ? html`<p id="preset">Preset <strong>${String(verify.preset)}</strong>: called without an API key, the sender's signature is the credential.</p>
${optionsOf(verify)}
<p id="secrets">${page.secrets ? html`Holds ${page.secrets.count === 1 ? 'one secret' : `${page.secrets.count} secrets`} (changed ${page.secrets.updatedAt}).` : html`Holds no secret: every call is refused.`}</p>
${secretsForm(page)}` : html`<p class="meta" id="preset">No preset: called with an API key (<code>X-API-KEY</code>).</p>`}
<h2>Burst shaping</h2>
${shapingOf(trigger)}
<h2>Last deliveries</h2>
${deliveriesTable(page.deliveries)}`;
}
