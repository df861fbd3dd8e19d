/**
 * The raw Temporal side of `npm run bench:scale`: the three workflows flowgate runs in the curve,
 * written directly against the TypeScript SDK, on the same server (a task queue and a worker
 * process of their own). Sequential template steps are local activities in flowgate, so they are
 * here; a forEach with `concurrency` 10 runs its items as regular activities, so do these.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

export interface RawScaleActivities {
  render(text: string): Promise<string>;
}

const local = proxyLocalActivities<RawScaleActivities>({ startToCloseTimeout: '30s' });
const remote = proxyActivities<RawScaleActivities>({ startToCloseTimeout: '30s' });

/** One template step. */
export async function rawScaleOne(name: string): Promise<string> {
  return local.render(`Hello ${name}`);
}

/** Five template steps, one after the other, each seeing the last one's result. */
export async function rawScaleFive(name: string): Promise<string> {
  let text = name;
  for (let i = 0; i < 5; i++) text = await local.render(`step ${i + 1}: ${text.slice(0, 40)}`);
  return text;
}

/** A forEach over ten items, all at once, one template step each. */
export async function rawScaleForEach(name: string): Promise<string[]> {
  return Promise.all(Array.from({ length: 10 }, (_, i) => remote.render(`${name} item ${i}`)));
}
