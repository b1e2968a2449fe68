import { describe, expect, it } from 'vitest';
import { SvcError } from '../../util/errors.ts';
import { type DecommissionEntry, type DecommissionState, queuedEntry } from '../records/pool-meta.ts';
import { emptyProgress, emptyStopPropagation, type RebalanceMeta } from '../records/rebalance-meta.ts';
import {
  checkDecommissionCancel,
  checkDecommissionClear,
  checkDecommissionStart,
  checkRebalanceStart,
  checkRebalanceStop,
  type ClusterFacts,
  type PoolFacts,
} from './data-movement-rules.ts';
import { clusterFacts, rebalanceEtaMs } from './data-movement-admin.ts';

const entry = (state: DecommissionState, unresolved = 0): DecommissionEntry => ({ ...queuedEntry(1, 100, 50, []), state, unresolvedEntries: unresolved });
const pool = (id: number, over: Partial<PoolFacts> = {}): PoolFacts => ({ id, cmdline: `/p${id}/d{1...4}`, ellipsis: true, decommission: null, usableUsed: 100, usableFree: 1000, ...over });
const facts = (pools: PoolFacts[], rebalance?: RebalanceMeta): ClusterFacts => ({ pools, rebalance });
const running: RebalanceMeta = {
  id: 'r',
  startedAt: 1,
  stoppedAt: 0,
  stopPropagation: emptyStopPropagation(),
  pools: [{ cmdline: '/p0/d{1...4}', id: 0, participating: true, state: 'started', stopping: false, initFreeSpace: 0, initCapacity: 100, lastError: null, warningCount: 0, warnings: [], progress: emptyProgress() }],
};

function refusal(fn: () => unknown): { code: string; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    return { code: err.code, message: err.message };
  }
}

describe('decommission start (rules 4 and 6)', () => {
  it('accepts a valid batch', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1), pool(2)]), [1, 2]))).toBeUndefined();
  });
  it('refuses single-pool and legacy deployments with NotImplemented', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0)]), [0]))?.code).toBe('NotImplemented');
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1, { ellipsis: false })]), [0]))?.code).toBe('NotImplemented');
  });
  it('refuses duplicate targets and an empty batch', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1), pool(2)]), [1, 1]))).toMatchObject({ code: 'InvalidArgument', message: expect.stringContaining('twice') });
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1)]), []))?.code).toBe('InvalidArgument');
  });
  it('refuses queued, active and completed targets, and failed or canceled ones not cleared', () => {
    for (const st of ['queued', 'active', 'completed', 'failed', 'canceled'] as const) {
      const r = refusal(() => checkDecommissionStart(facts([pool(0), pool(1, { decommission: entry(st) }), pool(2)]), [1]));
      expect(r?.code, st).toBe('XSvcDecommissionNotAllowed');
    }
  });
  it('retries a failed or canceled target holding unresolved entries without a clear', () => {
    for (const st of ['failed', 'canceled'] as const) {
      expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1, { decommission: entry(st, 3) })]), [1]))).toBeUndefined();
    }
  });
  it('refuses draining every pool (pools in a decommission state do not count as remaining)', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1)]), [0, 1]))?.message).toMatch(/at least one active pool must remain/);
    expect(refusal(() => checkDecommissionStart(facts([pool(0, { decommission: entry('active') }), pool(1)]), [1]))?.message).toMatch(/at least one active pool/);
  });
  it('needs free space on the remaining pools of at least 1.3 × the used bytes drained', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0, { usableFree: 130 }), pool(1, { usableUsed: 100 })]), [1]))).toBeUndefined();
    expect(refusal(() => checkDecommissionStart(facts([pool(0, { usableFree: 129 }), pool(1, { usableUsed: 100 })]), [1]))?.message).toMatch(/^insufficient target pool capacity/);
  });
  it('refuses while a rebalance runs', () => {
    expect(refusal(() => checkDecommissionStart(facts([pool(0), pool(1)], running), [1]))?.code).toBe('XSvcAdminRebalanceAlreadyStarted');
  });
});

describe('decommission cancel and clear', () => {
  it('cancels queued and active entries only', () => {
    expect(refusal(() => checkDecommissionCancel(facts([pool(0), pool(1, { decommission: entry('queued') })]), 1))).toBeUndefined();
    expect(refusal(() => checkDecommissionCancel(facts([pool(0), pool(1, { decommission: entry('active') })]), 1))).toBeUndefined();
    expect(refusal(() => checkDecommissionCancel(facts([pool(0), pool(1)]), 1))?.message).toMatch(/nothing to cancel/);
    for (const st of ['completed', 'failed', 'canceled'] as const) {
      expect(refusal(() => checkDecommissionCancel(facts([pool(0), pool(1, { decommission: entry(st) })]), 1))?.code).toBe('XSvcDecommissionNotAllowed');
    }
  });
  it('clears failed and canceled entries; nothing to clear is no change; running or completed entries are refused', () => {
    expect(checkDecommissionClear(facts([pool(0), pool(1, { decommission: entry('failed') })]), 1)).toBe('clear');
    expect(checkDecommissionClear(facts([pool(0), pool(1, { decommission: entry('canceled') })]), 1)).toBe('clear');
    expect(checkDecommissionClear(facts([pool(0), pool(1)]), 1)).toBe('none');
    for (const st of ['queued', 'active', 'completed'] as const) {
      expect(refusal(() => checkDecommissionClear(facts([pool(0), pool(1, { decommission: entry(st) })]), 1))?.code).toBe('XSvcDecommissionNotAllowed');
    }
  });
});

describe('rebalance start and stop (rule 6)', () => {
  it('needs more than one pool, no decommission in progress, none running', () => {
    expect(refusal(() => checkRebalanceStart(facts([pool(0), pool(1)])))).toBeUndefined();
    expect(refusal(() => checkRebalanceStart(facts([pool(0)])))?.code).toBe('NotImplemented');
    expect(refusal(() => checkRebalanceStart(facts([pool(0), pool(1, { decommission: entry('queued') })])))).toEqual({
      code: 'XSvcRebalanceNotAllowed',
      message: 'cannot start rebalance while decommission is in progress',
    });
    expect(refusal(() => checkRebalanceStart(facts([pool(0), pool(1, { decommission: entry('failed') })])))).toBeUndefined();
    expect(refusal(() => checkRebalanceStart(facts([pool(0), pool(1)], running)))).toEqual({ code: 'XSvcAdminRebalanceAlreadyStarted', message: 'rebalance is already in progress' });
  });
  it('stops only a running rebalance', () => {
    expect(checkRebalanceStop(facts([pool(0), pool(1)], running))).toBe('stop');
    expect(checkRebalanceStop(facts([pool(0), pool(1)]))).toBe('none');
  });
  it('estimates the remaining time from the rate so far', () => {
    // two pools of 1000 bytes: 900 and 100 used → mean 500; pool 0 gives away 400.
    const m: RebalanceMeta = {
      ...running,
      pools: [
        { ...running.pools[0]!, initCapacity: 1000, initFreeSpace: 100, progress: { ...emptyProgress(), bytes: 100, elapsedMs: 1000 } },
        { ...running.pools[0]!, cmdline: '/p1', id: 1, participating: false, state: 'none', initCapacity: 1000, initFreeSpace: 900 },
      ],
    };
    expect(rebalanceEtaMs(m, m.pools[0]!)).toBe(3000);
    expect(rebalanceEtaMs(m, m.pools[1]!)).toBe(0);
  });
});

describe('the decommission capacity check on drives sharing one file system', () => {
  // two pools on one disk: each drive reports the whole file system (900 used by anything, 100 free)
  const cap = (pool: number) => ({ pool, rawTotal: 4000, rawFree: 400, usableTotal: 2000, usableFree: 200, drives: [0, 1, 2, 3].map((slot) => ({ endpoint: `/d${pool}${slot}`, pool, set: 0, slot, online: true, total: 1000, used: 900, free: 100 })) });
  const pools = [0, 1].map((id) => ({ id, cmdline: `/p${id}/d{1...4}`, ellipsis: true }));
  const meta = [0, 1].map(() => ({ decommission: null }) as unknown as Parameters<typeof clusterFacts>[1][number]);
  it('judges the drain by the objects the scanner counted, not the disk the drives share', () => {
    // by the drives' used space: 1800 usable used cannot fit in 200 free
    expect(() => checkDecommissionStart(clusterFacts(pools, meta, undefined, [cap(0), cap(1)]), [0])).toThrow(/insufficient target pool capacity/);
    // the scanner counted 100 bytes of objects on pool 0: 130 fit in 200
    expect(() => checkDecommissionStart(clusterFacts(pools, meta, undefined, [cap(0), cap(1)], [100, 5]), [0])).not.toThrow();
    // a pool the scanner has not wholly counted falls back to the drives
    expect(() => checkDecommissionStart(clusterFacts(pools, meta, undefined, [cap(0), cap(1)], [undefined, 5]), [0])).toThrow(/insufficient/);
  });
});
