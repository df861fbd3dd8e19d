/** What every command needs: the global flags, resolved configuration and an HTTP client. */
import type { Command } from 'commander';
import { resolveConfig } from './config';
import { FlowgateClient } from './http';

export interface GlobalFlags { url?: string; token?: string; apiKey?: string; json?: boolean }

export interface CliContext {
  json: boolean;
  client: FlowgateClient;
  apiKey?: string;
  /** for `runs open`: the Temporal Web UI's base URL and namespace, when configured */
  temporalUiUrl?: string;
  temporalNamespace?: string;
}

export function contextOf(command: Command): CliContext {
  const flags = command.optsWithGlobals<GlobalFlags>();
  const config = resolveConfig(flags);
  return { json: Boolean(flags.json), client: new FlowgateClient(config.url ?? 'http://localhost:8080', config.token), apiKey: config.apiKey,
    ...(config.temporalUiUrl ? { temporalUiUrl: config.temporalUiUrl } : {}), ...(config.temporalNamespace ? { temporalNamespace: config.temporalNamespace } : {}) };
}
