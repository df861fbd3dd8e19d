/**
 * Documents as text nested as deep as asked, in every textual form a JSON or YAML parser reads as
 * nesting, built without recursion (the tests of deep documents and the management-API fuzz).
 */

/** Each form, `levels` deep under a top-level key `a` (so the value is levels + 1 deep). */
export const DEEP_TEXT_FORMS: Record<string, (levels: number) => string> = {
  'JSON arrays': (n) => `{"a":${'['.repeat(n)}1${']'.repeat(n)}}`,
  'JSON objects': (n) => `{"a":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`,
  'YAML flow sequences': (n) => `a: ${'['.repeat(n)}1${']'.repeat(n)}\n`,
  'YAML flow mappings': (n) => `a: ${'{a: '.repeat(n)}x${'}'.repeat(n)}\n`,
  'YAML compact block sequences': (n) => `a:\n  ${'- '.repeat(n)}x\n`,
  'YAML indented block sequences': (n) => `a:\n${Array.from({ length: n }, (_, i) => `${' '.repeat(i + 1)}-`).join('\n')} x\n`,
  'YAML indented block mappings': (n) => `a:\n${Array.from({ length: n }, (_, i) => `${' '.repeat(i + 1)}k:`).join('\n')} x\n`,
  'YAML block mappings in sequences': (n) => `a:\n${Array.from({ length: n }, (_, i) => `${' '.repeat(2 * i + 2)}${i % 2 ? '- ' : 'k:'}`).join('\n')} x\n`,
  'unclosed YAML flow sequences': (n) => `a: ${'['.repeat(n)}`,
};

/** indentation grows with the square of the depth: a few thousand levels are megabytes already */
export const INDENTED_FORMS = new Set(['YAML indented block sequences', 'YAML indented block mappings', 'YAML block mappings in sequences']);
