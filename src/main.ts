/**
 * `npm start`: flowgate on one machine. Reads the configuration, starts everything, prints where
 * it listens, and stops cleanly on SIGINT/SIGTERM (the embedded Temporal server included).
 */
import './app/node-line';
import { ConfigError, loadConfig } from './config/config';
import { createLogger } from './observability/logger';
import { startFlowgate, type Flowgate } from './app/start';

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
  let stopping = false;
  const started: { flowgate?: Flowgate } = {};
  const stopWith = (code: number): void => {
    if (stopping || !started.flowgate) return;
    stopping = true;
    started.flowgate.stop().then(() => process.exit(code), (err: unknown) => {
      console.error('flowgate: error while stopping', err);
      process.exit(1);
    });
  };
  // A worker whose data keys cannot open a run it was handed stops polling: the process says why
  // and exits non-zero, rather than run on as a worker that takes no tasks.
  const onWorkerFault = (error: Error): void => {
    console.error(`flowgate: the worker stopped: ${error.message}`);
    stopWith(1);
  };
  const flowgate = await startFlowgate(config, log, { progress: (message) => console.log(`flowgate: ${message}`), onWorkerFault });
  started.flowgate = flowgate;

  // One write, so that a reader of stdout never sees the banner half-printed.
  const banner = [
    flowgate.url ? `gateway listening on ${flowgate.url}` : `worker polling task queue ${config.temporal.taskQueue}`,
    `Temporal at ${flowgate.temporalAddress}${flowgate.temporalUiUrl ? `, Web UI at ${flowgate.temporalUiUrl}` : ''}`,
  ];
  if (flowgate.newAdminToken) banner.push(`admin token (shown once, also in ${flowgate.adminTokenFile}): ${flowgate.newAdminToken}`);
  else if (flowgate.adminTokenFile) banner.push(`admin token in ${flowgate.adminTokenFile}`);
  process.stdout.write(banner.map((line) => `flowgate: ${line}\n`).join(''));

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    console.log(`flowgate: ${signal} received, stopping`);
    stopWith(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // a fault while it was starting (the worker's first task) could not stop it yet
  if (flowgate.workerFault()) stopWith(1);
}

main().catch((err: unknown) => {
  console.error(`flowgate: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
