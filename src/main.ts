/**
 * `npm start`: flowgate on one machine. Reads the configuration, starts everything, prints where
 * it listens, and stops cleanly on SIGINT/SIGTERM (the embedded Temporal server included).
 */
import './app/node-line';
import { ConfigError, loadConfig } from './config/config';
import { createLogger } from './observability/logger';
import { startFlowgate } from './app/start';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`flowgate: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const flowgate = await startFlowgate(config, log, { progress: (message) => console.log(`flowgate: ${message}`) });

  // One write, so that a reader of stdout never sees the banner half-printed.
  const banner = [
    flowgate.url ? `gateway listening on ${flowgate.url}` : `worker polling task queue ${config.temporal.taskQueue}`,
    `Temporal at ${flowgate.temporalAddress}${flowgate.temporalUiUrl ? `, Web UI at ${flowgate.temporalUiUrl}` : ''}`,
  ];
  if (flowgate.newAdminToken) banner.push(`admin token (shown once, also in ${flowgate.adminTokenFile}): ${flowgate.newAdminToken}`);
  else if (flowgate.adminTokenFile) banner.push(`admin token in ${flowgate.adminTokenFile}`);
  process.stdout.write(banner.map((line) => `flowgate: ${line}\n`).join(''));

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    console.log(`flowgate: ${signal} received, stopping`);
    flowgate.stop().then(() => process.exit(0), (err: unknown) => {
      console.error('flowgate: error while stopping', err);
      process.exit(1);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(`flowgate: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
