/**
 * A file's MIME type from its name, for the text files flowgate names itself (a trigger's
 * designated output is a step's text result under the name the trigger gives it: `echo.json` is
 * JSON, `report.csv` CSV). Only text formats a step's result can be; any other name keeps the
 * type the file was stored with.
 */
const BY_EXTENSION: ReadonlyMap<string, string> = new Map(Object.entries({
  json: 'application/json',
  txt: 'text/plain; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  tsv: 'text/tab-separated-values; charset=utf-8',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/jsonl',
}));

/** The MIME type a file named `name` has by its extension (case-insensitive), or `fallback` when the name says none. */
export function mimeTypeOfName(name: string, fallback: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return fallback;
  return BY_EXTENSION.get(name.slice(dot + 1).toLowerCase()) ?? fallback;
}
