/**
 * The rollback of a failed apply (src/management/definitions/undo.ts): the undo list runs newest
 * first, an undo that fails is reported and the others still run, an undo with nothing to put back
 * is not reported as undone; the failure's sentence and audit facts name what failed and what was
 * not put back.
 */
import assert from 'node:assert/strict';
import { ApplyWriteError, applyFailure, UndoList, writing } from '../../src/management/definitions/undo';

describe('definitions as code: the undo list of an apply', () => {
  it('runs the inverses newest first, goes on past a failed one and reports it, and leaves out one with nothing to undo', async () => {
    const ran: string[] = [];
    const undo = new UndoList();
    undo.push('workflow/extra', async () => void ran.push('delete extra'));
    undo.push('workflow/report', async () => void ran.push('restore report'));
    undo.push('trigger/nightly', async () => {
      ran.push('restore nightly');
      throw new Error('Temporal refused the schedule');
    });
    undo.push('agent/helper', async () => {
      ran.push('restore helper');
      return false;
    });
    assert.equal(undo.size, 4);
    const report = await undo.rollback();
    assert.deepEqual(ran, ['restore helper', 'restore nightly', 'restore report', 'delete extra']);
    assert.deepEqual(report.undone, ['workflow/report', 'workflow/extra']);
    assert.deepEqual(report.failed, [{ what: 'trigger/nightly', reason: 'Temporal refused the schedule' }]);
    assert.equal(undo.size, 0, 'the list is emptied: a second rollback does nothing');
  });

  it('names the object a write failed at once, and says what was rolled back and what not', async () => {
    const failed = await writing('trigger/nightly', () => Promise.reject(new Error('trigger nightly: schedule: the workflow service refused it'))).catch((e: unknown) => e);
    assert.ok(failed instanceof ApplyWriteError);
    assert.equal(failed.object, 'trigger/nightly');
    assert.equal(failed.message, 'schedule: the workflow service refused it');

    const clean = applyFailure(failed, { undone: ['workflow/report'], failed: [] }, []);
    assert.equal(clean.message, 'apply failed at trigger/nightly: schedule: the workflow service refused it; rolled back: every write before it was undone (workflow/report)');
    assert.deepEqual(clean.facts, { failedAt: 'trigger/nightly', reason: 'schedule: the workflow service refused it', rolledBack: true, notUndone: [], deletedBefore: [] });

    const partly = applyFailure(new ApplyWriteError('member/a@example.com', 'no member', true), { undone: [], failed: [{ what: 'toolServer/calc', reason: 'could not list the remote server\'s tools' }] }, ['agent/old']);
    assert.match(partly.message, /rolled back in part: undone nothing; not undone: toolServer\/calc \(could not list the remote server's tools\); deleted before it, which a rollback cannot bring back: agent\/old$/);
    assert.equal(partly.facts.rolledBack, false);
    assert.deepEqual(partly.facts.notUndone, ['toolServer/calc']);
    assert.equal(applyFailure(new Error('x'.repeat(300)), { undone: [], failed: [] }, []).facts.reason.length, 200, 'the audit trail keeps a short reason');
  });
});
