/**
 * HTML templates with escaping by default (docs/console.md "Stack"). `html\`…\`` escapes every
 * interpolated value for HTML text and quoted attribute values (& < > " ' and the backtick), unless
 * it is already Html (another template, or `raw` for constant markup); arrays are joined; undefined,
 * null and false render as nothing. A URL goes into an attribute through `href()`, which lets only
 * same-origin paths and http(s) URLs through. Templates put every attribute value in double quotes
 * and never interpolate into <script> or <style> (the console has no inline script or style).
 */
const HTML = Symbol('html');

export interface Html {
  readonly [HTML]: true;
  readonly text: string;
}

function markup(text: string): Html {
  return { [HTML]: true, text };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && HTML in value;
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === undefined || value === null || value === false) return '';
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  if (isHtml(value)) return value.text;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += render(value) + (strings[i + 1] ?? '');
  });
  return markup(text);
}

/** Constant markup written in the source (never data). */
export function raw(text: string): Html {
  return markup(text);
}

/** A link target: a same-origin path (`/…`, not `//…`) or an http(s) URL; anything else becomes `#`. */
export function href(url: string): string {
  if (/^\/(?![/\\])/.test(url)) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : '#';
  } catch {
    return '#';
  }
}

export function toText(value: Html): string {
  return value.text;
}
