/**
 * Runs ScheduleService.reconcile at start and every `intervalSeconds` (0: only at start), one pass
 * at a time. Every gateway replica may run one: each step is idempotent.
 */
import type { Logger } from '../observability/logger';
import type { ScheduleService } from './schedule-service';

export class ScheduleReconciler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly schedules: ScheduleService, private readonly intervalSeconds: number, private readonly log: Pick<Logger, 'info' | 'warn'>) {}

  start(): void {
    this.pass();
    if (this.intervalSeconds > 0) {
      this.timer = setInterval(() => this.pass(), this.intervalSeconds * 1000);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private pass(): void {
    if (this.running || this.stopped) return;
    this.running = this.schedules.reconcile()
      .then((counts) => {
        if (counts.created + counts.updated + counts.deleted + counts.failed > 0) this.log.info('schedules reconciled', counts);
      })
      .catch((err: unknown) => this.log.warn('schedule reconcile failed; the next pass retries', { error: err }))
      .finally(() => { this.running = undefined; });
  }
}
