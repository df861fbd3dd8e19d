/**
 * Routes the Temporal SDK's own logs (worker, core) into flowgate's structured logger, and with
 * `metricsAddress` has the SDK's core serve its own Prometheus metrics (worker task slots, polls,
 * workflow and activity task latencies: `temporal_*`) at http://<metricsAddress>/metrics. The SDK
 * allows one Runtime per process, installed before the first worker; later calls are no-ops.
 */
import { Runtime, type LogLevel as SdkLogLevel, type LogMetadata } from '@temporalio/worker';
import type { Logger } from '../src/observability/logger';

let installed = false;

export function installRuntimeLogger(log: Logger, options: { metricsAddress?: string } = {}): void {
  if (installed) return;
  installed = true;
  const forward = (level: SdkLogLevel, message: string, meta?: LogMetadata): void => {
    const fields = { sdk: true, ...(meta ?? {}) };
    if (level === 'ERROR') log.error(message, fields);
    else if (level === 'WARN') log.warn(message, fields);
    else if (level === 'INFO') log.debug(message, fields); // worker state changes and the like: routine
    else log.debug(message, fields);
  };
  Runtime.install({
    logger: {
      log: forward,
      trace: (m, meta) => forward('TRACE', m, meta),
      debug: (m, meta) => forward('DEBUG', m, meta),
      info: (m, meta) => forward('INFO', m, meta),
      warn: (m, meta) => forward('WARN', m, meta),
      error: (m, meta) => forward('ERROR', m, meta),
    },
    ...(options.metricsAddress ? { telemetryOptions: { metrics: { prometheus: { bindAddress: options.metricsAddress } } } } : {}),
  });
}
