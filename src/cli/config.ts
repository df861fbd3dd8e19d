/**
 * Where the CLI finds flowgate: flags win over the environment (FLOWGATE_URL, FLOWGATE_TOKEN,
 * FLOWGATE_API_KEY, FLOWGATE_TEMPORAL_UI_URL, FLOWGATE_TEMPORAL_NAMESPACE), which wins over
 * $XDG_CONFIG_HOME/flowgate/config.json (~/.config/flowgate/config.json when XDG_CONFIG_HOME is
 * unset or empty), written by `flowgate login`.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CliError, EXIT } from './errors';

const FileConfigSchema = z.object({
  url: z.string().url().optional(), token: z.string().min(1).optional(), apiKey: z.string().min(1).optional(),
  temporalUiUrl: z.string().url().optional(), temporalNamespace: z.string().min(1).optional(),
});
export type CliConfig = z.infer<typeof FileConfigSchema>;

export function configPath(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'flowgate', 'config.json');
}

function readFileConfig(): CliConfig {
  let text: string;
  try {
    text = readFileSync(configPath(), 'utf8');
  } catch {
    return {};
  }
  const parsed = FileConfigSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new CliError(`${configPath()} is not a valid flowgate CLI config`, EXIT.USAGE);
  return parsed.data;
}

export function writeFileConfig(config: CliConfig): string {
  const file = configPath();
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // The file holds an admin token: readable by its owner only, even if it existed before.
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

export function resolveConfig(flags: { url?: string; token?: string; apiKey?: string }): CliConfig {
  const file = readFileConfig();
  return {
    url: flags.url ?? process.env.FLOWGATE_URL ?? file.url ?? 'http://localhost:8080',
    token: flags.token ?? process.env.FLOWGATE_TOKEN ?? file.token,
    apiKey: flags.apiKey ?? process.env.FLOWGATE_API_KEY ?? file.apiKey,
    temporalUiUrl: process.env.FLOWGATE_TEMPORAL_UI_URL || file.temporalUiUrl,
    temporalNamespace: process.env.FLOWGATE_TEMPORAL_NAMESPACE || file.temporalNamespace,
  };
}
