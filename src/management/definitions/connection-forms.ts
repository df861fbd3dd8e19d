/**
 * Connections and members in definitions as code (index.ts): their declarative forms, and a
 * connection's secrets. A connection's settings are its credentials as POST /api/v1/connections
 * takes them, except that every secret field is a reference: `{secretRef: {env: NAME}}` (a value
 * of the request's `secrets`, which `flowgate apply` fills from its environment) or
 * `{secretRef: {fromApi: true}}` (the value the connection holds, set through the API or the
 * console). A form shows a secret as `(secret)`, never its value: plans and exports carry none.
 */
import type { z } from 'zod';
import { isRecord } from '../../common/narrow';
import type { MemberRecord } from '../../registry';
import { ConnectionSecretSchema, type ConnectionDoc, type ConnectionSecret, type MemberDoc } from './format';
import type { Form } from './forms';
import type { PlacedError } from './parse';

/** The credential fields that are secrets, whatever the application (password, api_key's value, clientSecret, apiKey…). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['password', 'value', 'clientSecret', 'apiKey', 'secret', 'token']);
/** How a form shows a secret. */
export const SECRET_SHOWN = '(secret)';
/** A stand-in for a secret when settings are checked against the application's schema. */
const STAND_IN = 'stand-in-secret-value-0123456789';

const isSecretRef = (value: unknown): boolean => isRecord(value) && 'secretRef' in value;

/** Each secret reference of the settings with its path (`auth.value`). */
export function secretRefsOf(settings: unknown, path: string[] = []): { path: string[]; ref: ConnectionSecret }[] {
  if (!isRecord(settings)) return [];
  const found: { path: string[]; ref: ConnectionSecret }[] = [];
  for (const [key, value] of Object.entries(settings)) {
    const parsed = ConnectionSecretSchema.safeParse(value);
    if (parsed.success) found.push({ path: [...path, key], ref: parsed.data });
    else found.push(...secretRefsOf(value, [...path, key]));
  }
  return found;
}

/** The settings with each secret replaced (references in the folder, values in the registry). */
function mapSecrets(settings: unknown, replace: (value: unknown, path: string[]) => unknown, path: string[] = []): unknown {
  if (Array.isArray(settings)) return settings.map((v, i) => mapSecrets(v, replace, [...path, String(i)]));
  if (!isRecord(settings)) return settings;
  return Object.fromEntries(Object.entries(settings).map(([key, value]) => [key,
    SECRET_FIELDS.has(key) && (typeof value === 'string' || isSecretRef(value)) ? replace(value, [...path, key]) : mapSecrets(value, replace, [...path, key])]));
}

/**
 * The folder's connection as a form, its settings checked against the application's schema (with
 * stand-ins for the secrets): a secret field must be a reference, and a reference only a secret's.
 */
export function connectionDocForm(doc: ConnectionDoc, file: string, errors: PlacedError[], applications: Readonly<Record<string, z.ZodType>>): Form {
  const schema = Object.hasOwn(applications, doc.application) ? applications[doc.application] : undefined;
  if (!schema) errors.push({ file, path: 'application', message: `no application ${doc.application}; known: ${Object.keys(applications).join(', ')}` });
  for (const { path } of secretRefsOf(doc.settings)) {
    const key = path[path.length - 1] ?? '';
    if (!SECRET_FIELDS.has(key)) errors.push({ file, path: ['settings', ...path].join('.'), message: `${key} is not a secret field: give its value (secret fields: ${[...SECRET_FIELDS].join(', ')})` });
  }
  const shown = mapSecrets(doc.settings, (value, path) => {
    if (typeof value === 'string') {
      errors.push({ file, path: ['settings', ...path].join('.'), message: 'a secret is given only as a reference: {secretRef: {env: NAME}} or {secretRef: {fromApi: true}}' });
    } else if (!ConnectionSecretSchema.safeParse(value).success) {
      errors.push({ file, path: ['settings', ...path].join('.'), message: 'must be {secretRef: {env: NAME}} or {secretRef: {fromApi: true}}' });
    }
    return SECRET_SHOWN;
  });
  if (schema) {
    const checked = schema.safeParse(mapSecrets(doc.settings, () => STAND_IN));
    // paths and rules only: no value is repeated
    if (!checked.success) for (const issue of checked.error.issues) errors.push({ file, path: ['settings', ...issue.path.map(String)].join('.'), message: issue.message });
  }
  return { kind: 'connection', name: doc.name, application: doc.application, settings: shown };
}

/** A live connection as a form: its credentials with each secret shown as `(secret)`. */
export function connectionRecordForm(name: string, application: string, credentials: unknown): Form {
  return { kind: 'connection', name, application, settings: mapSecrets(credentials, () => SECRET_SHOWN) };
}

/** What export writes for a connection: each secret a `fromApi` reference (the connection keeps its value; another organization needs `env`). */
export function connectionExportForm(form: Form): Form {
  return { ...form, settings: mapSecrets(form.settings, () => ({ secretRef: { fromApi: true } })) };
}

/**
 * The credentials to write: each reference filled from the request's secrets (`env`) or the
 * connection's present credentials (`fromApi`). A reference without a value is an error placed at it.
 */
export function resolvedSettings(doc: ConnectionDoc, file: string, secrets: Record<string, string>, present: unknown, errors: PlacedError[]): Record<string, unknown> {
  const resolved = mapSecrets(doc.settings, (value, path) => {
    const ref = ConnectionSecretSchema.safeParse(value);
    if (!ref.success) return value;
    const at = ['settings', ...path].join('.');
    if ('env' in ref.data.secretRef) {
      const name = ref.data.secretRef.env;
      const given = secrets[name];
      if (given === undefined) errors.push({ file, path: at, message: `no value for the secret reference ${name}: set the environment variable (flowgate apply) or give it in secrets` });
      return given ?? '';
    }
    const held = path.reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), present);
    if (typeof held !== 'string') {
      errors.push({ file, path: at, message: present === undefined
        ? 'the connection does not exist yet: a fromApi secret needs it created through the API or the console first (or give {env: NAME})'
        : 'the connection holds no value here to keep: give {env: NAME}' });
    }
    return typeof held === 'string' ? held : '';
  });
  return isRecord(resolved) ? resolved : {};
}

export function memberDocForm(doc: MemberDoc): Form {
  return { kind: 'member', email: doc.email.toLowerCase(), role: doc.role };
}

export function memberRecordForm(member: MemberRecord): Form {
  return { kind: 'member', email: member.email, role: member.role };
}
