/**
 * The console's definition editor (a new workflow, a workflow's draft) with its validation problems
 * shown where they are, and the diff of two versions (docs/console.md "Workflows").
 */
import type { DiffLine } from '../../console/line-diff';
import { html, type Html } from './html';

/** A validation problem placed in the submitted text. */
export interface PlacedProblem {
  /** `steps[2].url`, `(definition)`, or `JSON` for a syntax error */
  path: string;
  message: string;
  line: number;
}

export interface EditorData {
  /** absent: a new workflow */
  workflow?: { id: string; name: string };
  csrf: string;
  text: string;
  problems?: PlacedProblem[];
}

/** The submitted text, numbered, with the lines that have a problem marked (each an anchor the problem list links to). */
function listing(text: string, problems: PlacedProblem[]): Html {
  const bad = new Map<number, PlacedProblem[]>();
  for (const p of problems) bad.set(p.line, [...(bad.get(p.line) ?? []), p]);
  return html`<ol class="listing" aria-label="The submitted definition, line by line">${text.split('\n').map((line, i) => {
    const here = bad.get(i + 1);
    return html`<li id="line-${i + 1}"${here ? html` class="bad"` : ''}><code>${line || ' '}</code>${here ? html` <span class="problem">← ${here.map((p) => `${p.path}: ${p.message}`).join('; ')}</span>` : ''}</li>`;
  })}</ol>`;
}

export function editorBody(data: EditorData): Html {
  const { workflow, csrf, text } = data;
  const problems = data.problems ?? [];
  const action = workflow ? `/console/workflows/${encodeURIComponent(workflow.id)}/draft` : '/console/workflows';
  return html`<p><a href="${workflow ? `/console/workflows/${encodeURIComponent(workflow.id)}` : '/console/workflows'}">← ${workflow ? workflow.name : 'Workflows'}</a></p>
<h1>${workflow ? html`Edit the draft of ${workflow.name}` : 'New workflow'}</h1>
${problems.length ? html`<div class="error" role="alert"><p>The definition was not saved: ${problems.length === 1 ? 'one problem' : `${problems.length} problems`}.</p>
<ul class="problems">${problems.map((p) => html`<li><a href="#line-${p.line}"><code>${p.path}</code></a> (line ${p.line}): ${p.message}</li>`)}</ul></div>` : ''}
<form method="post" data-needs="workflows.write" action="${action}"><input type="hidden" name="csrf" value="${csrf}">
<label for="definition">Definition (JSON)</label>
<p class="hint">Checked exactly as <code>${workflow ? 'PUT /api/v1/workflows/{id}' : 'POST /api/v1/workflows'}</code> checks it. ${workflow ? 'Saving changes the draft only: publish it to make a version.' : ''}</p>
<textarea id="definition" name="definition" rows="24" spellcheck="false" class="code">${text}</textarea>
<div class="actions"><button type="submit">${workflow ? 'Save the draft' : 'Create the workflow'}</button></div></form>
${problems.length ? html`<h2>Where</h2>${listing(text, problems)}` : ''}`;
}

/** What a diff compares: a version number or the draft. */
export type Side = number | 'draft';

function sideName(side: Side): string {
  return side === 'draft' ? 'the draft' : `version ${side}`;
}

function sideSelect(name: string, label: string, chosen: Side, versions: number[]): Html {
  return html`<div><label for="${name}">${label}</label><select id="${name}" name="${name}">
${versions.map((v) => html`<option value="${v}"${chosen === v ? html` selected` : ''}>version ${v}</option>`)}
<option value="draft"${chosen === 'draft' ? html` selected` : ''}>the draft</option></select></div>`;
}

export function diffBody(data: { workflow: { id: string; name: string; versions: number[] }; from: Side; to: Side; lines: DiffLine[]; error?: string }): Html {
  const { workflow, from, to, lines } = data;
  const added = lines.filter((l) => l.kind === 'added').length;
  const removed = lines.filter((l) => l.kind === 'removed').length;
  const sign = { same: ' ', added: '+', removed: '-' } as const;
  return html`<p><a href="/console/workflows/${encodeURIComponent(workflow.id)}">← ${workflow.name}</a></p>
<h1>Compare versions of ${workflow.name}</h1>
${data.error ? html`<p class="error" role="alert">${data.error}</p>` : ''}
<form method="get" action="/console/workflows/${encodeURIComponent(workflow.id)}/diff" class="filters">
${sideSelect('from', 'From', from, workflow.versions)}${sideSelect('to', 'To', to, workflow.versions)}
<div><button type="submit">Compare</button></div></form>
<p id="diff-summary">${sideName(from)} → ${sideName(to)}: ${added === 0 && removed === 0 ? 'no differences' : `${added} line${added === 1 ? '' : 's'} added, ${removed} removed`}.</p>
<table class="diff"><caption class="visually-hidden">Line diff of the two definitions</caption>
<thead><tr><th scope="col">${sideName(from)}</th><th scope="col">${sideName(to)}</th><th scope="col"><span class="visually-hidden">Change</span></th><th scope="col">Line</th></tr></thead>
<tbody>${lines.map((l) => html`<tr class="d-${l.kind}"><td class="n">${l.oldLine ?? ''}</td><td class="n">${l.newLine ?? ''}</td><td class="n">${sign[l.kind]}</td><td><code>${l.text}</code>${l.kind === 'same' ? '' : html`<span class="visually-hidden"> (${l.kind})</span>`}</td></tr>`)}</tbody></table>`;
}
