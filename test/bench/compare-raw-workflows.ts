/**
 * The raw Temporal side of `npm run bench:compare`: the same one-step job flowgate runs, written
 * directly against the SDK. `rawOneStep` calls one activity and returns its result; `rawPaused`
 * waits for a signal (the counterpart of a run PAUSED on an approval). Query `state` answers both.
 * Timeouts: the activity's start-to-close is 30 s, as flowgate's template step.
 */
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';

interface RawActivities {
  greet(name: string): Promise<string>;
}

const { greet } = proxyActivities<RawActivities>({ startToCloseTimeout: '30s' });

export const rawStateQuery = defineQuery<{ status: string; result?: string }>('state');
export const rawGoSignal = defineSignal('go');

export async function rawOneStep(name: string): Promise<{ status: string; result: string }> {
  let state: { status: string; result?: string } = { status: 'RUNNING' };
  setHandler(rawStateQuery, () => state);
  const result = await greet(name);
  state = { status: 'COMPLETE', result };
  return { status: 'COMPLETE', result };
}

export async function rawPaused(): Promise<string> {
  let go = false;
  setHandler(rawStateQuery, () => ({ status: go ? 'RUNNING' : 'PAUSED' }));
  setHandler(rawGoSignal, () => {
    go = true;
  });
  await condition(() => go);
  return 'done';
}
