/**
 * The spec reporter plus one closing line in the plain form CI reads: "N passed, N failed, N skipped".
 */
import Mocha from 'mocha';

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const stats = runner.stats;
      if (stats) process.stdout.write(`mocha: ${stats.passes} passed, ${stats.failures} failed, ${stats.pending} skipped\n`);
    });
  }
}

export = SpecWithSummary;
