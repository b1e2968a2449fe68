/** Condition helpers: transition times move only on status flips; kstatus and kubectl-wait readings. */
import { describe, expect, it } from 'vitest';
import { kstatus, readyForWait, setCondition } from './conditions.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:05:00Z');

describe('conditions', () => {
  it('lastTransitionTime changes only when the status flips; reason, message and generation follow', () => {
    let c = setCondition([], { type: 'Ready', status: 'False', reason: 'Provisioning', message: 'a' }, t0, 1);
    c = setCondition(c, { type: 'Ready', status: 'False', reason: 'RestartingCluster', message: 'b' }, t1, 2);
    expect(c).toEqual([{ type: 'Ready', status: 'False', reason: 'RestartingCluster', message: 'b', lastTransitionTime: t0.toISOString(), observedGeneration: 2 }]);
    c = setCondition(c, { type: 'Ready', status: 'True', reason: 'AsExpected', message: '' }, t1, 2);
    expect(c[0]!.lastTransitionTime).toBe(t1.toISOString());
    c = setCondition(c, { type: 'Stalled', status: 'False', reason: 'AsExpected', message: '' }, t1, 2);
    expect(c.map((x) => x.type)).toEqual(['Ready', 'Stalled']);
  });

  it('kubectl wait and kstatus only accept a Ready computed for the current generation', () => {
    const ready = setCondition([], { type: 'Ready', status: 'True', reason: 'AsExpected', message: '' }, t0, 3);
    expect(readyForWait(3, ready)).toBe(true);
    expect(readyForWait(4, ready)).toBe(false);
    expect(kstatus(3, { observedGeneration: 3, conditions: ready })).toBe('Current');
    expect(kstatus(4, { observedGeneration: 3, conditions: ready })).toBe('InProgress');
    const stalled = setCondition(ready, { type: 'Stalled', status: 'True', reason: 'TopologyMismatch', message: 'x' }, t0, 3);
    expect(kstatus(3, { observedGeneration: 3, conditions: stalled })).toBe('Failed');
    const busy = setCondition(setCondition([], { type: 'Reconciling', status: 'True', reason: 'RestartingCluster', message: '' }, t0, 3), { type: 'Ready', status: 'False', reason: 'RestartingCluster', message: '' }, t0, 3);
    expect(kstatus(3, { observedGeneration: 3, conditions: busy })).toBe('InProgress');
  });
});
