/**
 * A hosted form's fields, generated from the workflow's input schema (JSON Schema): one field per
 * top-level property, its control chosen by type (text, number, checkbox, select for an enum, a
 * date for `format: date`, a password input for a secret one (`writeOnly: true` or `format: password`), a text area for long text, objects and arrays), its label from `title`
 * (else the name), its hint from `description`. A file input for `attachments` unless the schema
 * forbids that property. The schema stays the judge: the submission is checked against it by the
 * trigger service, as an API trigger call is.
 */
import { isRecord } from '../../common/narrow';
import { html, type Html } from './html';

export interface FormField {
  name: string;
  label: string;
  hint?: string;
  required: boolean;
  kind: 'text' | 'textarea' | 'number' | 'integer' | 'checkbox' | 'select' | 'date' | 'email' | 'url' | 'json' | 'password';
  options?: string[];
  defaultValue?: string;
}

const ATTACHMENTS = 'attachments';

function typeOf(schema: Record<string, unknown>): string | undefined {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null');
  return undefined;
}

export function formFields(inputSchema: Record<string, unknown> | undefined): { fields: FormField[]; files: boolean } {
  const properties = inputSchema && isRecord(inputSchema.properties) ? inputSchema.properties : {};
  const required = new Set(Array.isArray(inputSchema?.required) ? inputSchema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: FormField[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (name === ATTACHMENTS || !isRecord(raw)) continue;
    const type = typeOf(raw);
    const label = typeof raw.title === 'string' ? raw.title : name;
    const hint = typeof raw.description === 'string' ? raw.description : undefined;
    const enumValues = Array.isArray(raw.enum) ? raw.enum.filter((v) => ['string', 'number', 'boolean'].includes(typeof v)).map(String) : undefined;
    const defaultValue = ['string', 'number', 'boolean'].includes(typeof raw.default) ? String(raw.default) : undefined;
    let kind: FormField['kind'] = 'text';
    if (enumValues?.length) kind = 'select';
    else if (type === 'integer') kind = 'integer';
    else if (type === 'number') kind = 'number';
    else if (type === 'boolean') kind = 'checkbox';
    else if (type === 'object' || type === 'array') kind = 'json';
    else if (raw.writeOnly === true || raw.format === 'password') kind = 'password'; // a secret input (the run page masks it too)
    else if (raw.format === 'date') kind = 'date';
    else if (raw.format === 'email') kind = 'email';
    else if (raw.format === 'uri' || raw.format === 'url') kind = 'url';
    else if (raw.format === 'textarea' || (typeof raw.maxLength === 'number' && raw.maxLength > 200)) kind = 'textarea';
    fields.push({ name, label, required: required.has(name), kind, ...(hint ? { hint } : {}), ...(enumValues?.length ? { options: enumValues } : {}), ...(defaultValue !== undefined ? { defaultValue } : {}) });
  }
  const forbidsExtra = inputSchema?.additionalProperties === false && !(ATTACHMENTS in properties);
  return { fields, files: !forbidsExtra };
}

/** Which submitted names hold JSON (objects, arrays) and which are not text (empty means absent there). */
export function fieldKinds(fields: FormField[]): Map<string, FormField['kind']> {
  return new Map(fields.map((f) => [f.name, f.kind]));
}

function control(field: FormField, id: string, value: string | undefined, error: string | undefined): Html {
  const req = field.required ? html` required aria-required="true"` : '';
  const ids = [field.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter((x) => x !== '').join(' ');
  const described = html`${ids ? html` aria-describedby="${ids}"` : ''}${error ? html` aria-invalid="true"` : ''}`;
  const v = value ?? field.defaultValue;
  switch (field.kind) {
    case 'select':
      return html`<select id="${id}" name="${field.name}"${req}${described}>${field.required ? '' : html`<option value="">—</option>`}${(field.options ?? []).map((o) => html`<option value="${o}"${o === v ? html` selected` : ''}>${o}</option>`)}</select>`;
    case 'checkbox':
      return html`<input id="${id}" type="checkbox" name="${field.name}" value="true"${v === 'true' ? html` checked` : ''}${described}>`;
    case 'textarea':
    case 'json':
      return html`<textarea id="${id}" name="${field.name}"${req}${described}>${v ?? ''}</textarea>`;
    case 'integer':
      return html`<input id="${id}" type="number" step="1" name="${field.name}" value="${v ?? ''}"${req}${described}>`;
    case 'number':
      return html`<input id="${id}" type="number" step="any" name="${field.name}" value="${v ?? ''}"${req}${described}>`;
    case 'password':
      // a secret is never sent back to the browser, not even as a default
      return html`<input id="${id}" type="password" autocomplete="off" name="${field.name}" value=""${req}${described}>`;
    default:
      return html`<input id="${id}" type="${field.kind}" name="${field.name}" value="${v ?? ''}"${req}${described}>`;
  }
}

/**
 * The fields' controls, filled with `values` (by field name; a password field stays empty), each
 * error of `errors` (by field name) beside its field.
 */
export function fieldsHtml(fields: FormField[], files: boolean, values: Record<string, string> = {}, errors: Record<string, string> = {}): Html {
  return html`${fields.map((f, i) => html`<div class="field${errors[f.name] ? ' invalid' : ''}"><label for="f${i}">${f.label}${f.required ? html` <span aria-hidden="true">*</span>` : ''}</label>
${f.hint ? html`<p class="hint" id="f${i}-hint">${f.hint}</p>` : ''}${f.kind === 'json' ? html`<p class="hint">JSON</p>` : ''}${control(f, `f${i}`, values[f.name], errors[f.name])}${errors[f.name] ? html`<p class="error" id="f${i}-error">${errors[f.name]}</p>` : ''}</div>`)}
${files ? html`<div class="field"><label for="files">Files (optional)</label><p class="hint" id="files-hint">Up to 20 files, 25 MiB each, 100 MiB in all; programs and scripts are refused.</p>
<input id="files" type="file" name="file" multiple aria-describedby="files-hint"></div>` : ''}`;
}

/** Form text as a tool's input schema wants it: numbers and booleans typed, JSON fields parsed, empty non-text fields absent (the tool's schema judges the rest). */
export function typedValues(inputs: Record<string, unknown>, fields: FormField[]): Record<string, unknown> {
  const kinds = fieldKinds(fields);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(inputs)) {
    const kind = kinds.get(name);
    if (kind === undefined || typeof value !== 'string') continue;
    if (value === '' && !['text', 'textarea', 'email', 'url', 'date', 'password'].includes(kind)) continue;
    if (value === '' && !fields.find((f) => f.name === name)?.required) continue;
    if (kind === 'integer' || kind === 'number') out[name] = Number.isFinite(Number(value)) ? Number(value) : value;
    else if (kind === 'checkbox') out[name] = value === 'true';
    else if (kind === 'json') {
      try {
        out[name] = JSON.parse(value);
      } catch {
        out[name] = value;
      }
    } else out[name] = value;
  }
  return out;
}

/** Stored inputs as the fields show them (an edit, pre-filled): text as it is, JSON for objects and arrays; a secret field stays empty. */
export function fieldTexts(inputs: Record<string, unknown>, fields: FormField[]): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const field of fields) {
    const value = inputs[field.name];
    if (value === undefined || value === null || field.kind === 'password') continue;
    texts[field.name] = typeof value === 'string' ? value : field.kind === 'json' ? JSON.stringify(value, null, 2) : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return texts;
}

/**
 * The inputs an edit of `stored` stands for: each field typed as the schema wants it (typedValues;
 * an emptied field is left out), except that a secret field left blank keeps its stored value, an
 * unticked checkbox that was stored (or is required) is false, and a stored input the form has no
 * field for is kept as it is. The schema judges the result.
 */
export function editedInputs(submitted: Record<string, unknown>, fields: FormField[], stored: Record<string, unknown>): Record<string, unknown> {
  const inputs = typedValues(submitted, fields);
  for (const field of fields) {
    const given = submitted[field.name];
    if (field.kind === 'password' && (given === undefined || given === '') && Object.hasOwn(stored, field.name)) inputs[field.name] = stored[field.name];
    if (field.kind === 'checkbox' && given === undefined && (field.required || Object.hasOwn(stored, field.name))) inputs[field.name] = false;
  }
  const named = new Set(fields.map((f) => f.name));
  for (const [name, value] of Object.entries(stored)) if (!named.has(name)) inputs[name] = value;
  return inputs;
}
