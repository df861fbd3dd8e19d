/** Reads the Prometheus text format back into samples, for tests that look for the counts they caused. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels`; 0 when there is none. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
