import assert from 'node:assert/strict';
import { firstApproval, holdsApproval } from '../../src/common/approval-steps';
import { WorkflowDefinitionSchema } from '../../activities/steps';
import type { Step } from '../../src/common/definition';

const ask = (name: string): Record<string, unknown> => ({ name, type: 'approval', approvers: ['ann@example.com'] });
const note = { name: 'Note', type: 'template', template: 'x' };

/** The steps of a definition, as the schema reads them. */
const steps = (...list: Record<string, unknown>[]): Step[] => WorkflowDefinitionSchema.parse({ name: 'w', steps: list }).steps;

describe('approval steps of a definition', () => {
  it('finds an approval anywhere: top level, branch cases and default, forEach, parallel branches, whatever guards it', () => {
    assert.equal(firstApproval(steps(note, { ...ask('Top'), if: 'inputs.never' }))?.name, 'Top');
    assert.equal(firstApproval(steps({ name: 'B', type: 'branch', cases: [{ if: 'inputs.a', steps: [note] }], default: [ask('InDefault')] }))?.name, 'InDefault');
    assert.equal(firstApproval(steps({ name: 'B', type: 'branch', cases: [{ if: 'inputs.a', steps: [ask('InCase')] }] }))?.name, 'InCase');
    assert.equal(firstApproval(steps({ name: 'E', type: 'forEach', items: 'inputs.list', steps: [note, ask('InItem')] }))?.name, 'InItem');
    assert.equal(firstApproval(steps({ name: 'B', type: 'branch', cases: [{ if: 'inputs.a', steps: [{ name: 'E', type: 'forEach', items: 'inputs.list', steps: [ask('Deep')] }] }] }))?.name, 'Deep');
    // the schema takes an approval in a parallel branch (publishing refuses it): it is found all the same
    assert.equal(firstApproval([{ name: 'P', type: 'parallel', mode: 'all', branches: [{ steps: [] }, { steps: steps(ask('InBranch')) }] }])?.name, 'InBranch');
    assert.equal(firstApproval(steps(ask('First'), ask('Second')))?.name, 'First');
  });

  it('finds none in a definition without one', () => {
    assert.equal(holdsApproval(steps(note, { name: 'Wait', type: 'delay', duration: '1s' }, { name: 'B', type: 'branch', cases: [{ if: 'inputs.a', steps: [note] }] })), false);
    assert.equal(holdsApproval([]), false);
  });
});
