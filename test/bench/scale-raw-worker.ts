/**
 * A child process of `npm run bench:scale`: the raw TypeScript-SDK worker (scale-raw-workflows.ts)
 * on TEMPORAL_ADDRESS and RAW_TASK_QUEUE. It says `raw worker polling` once it polls, and stops on
 * SIGTERM.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const worker = await Worker.create({
    connection, namespace: 'default', taskQueue: process.env.RAW_TASK_QUEUE ?? 'raw-scale',
    workflowsPath: require.resolve('./scale-raw-workflows'),
    activities: { render: (text: string): Promise<string> => Promise.resolve(text.toUpperCase()) },
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  console.log('raw worker polling');
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
