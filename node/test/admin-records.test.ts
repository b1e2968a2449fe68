/**
 * The pool and rebalance services over a real two-pool object layer (temp-dir
 * drives): `pool.bin` and `rebalance.bin` written and read through the
 * `.svc.sys` quorum, status answered from them, the decommission table's
 * clear row applied for real, and every refusal leaving the records as they
 * were.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataMovementAdmin, type PoolDescriptor, rebalanceAdminOf } from '../src/object/admin/data-movement-admin.ts';
import { queuedEntry } from '../src/object/records/pool-meta.ts';
import { emptyProgress, emptyStopPropagation } from '../src/object/records/rebalance-meta.ts';
import { PoolRecords } from '../src/object/records/store.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import { systemClock } from '../src/util/clock.ts';
import { SvcError } from '../src/util/errors.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

let fx: PoolsFixture;
let layer: ServerPools;
let records: PoolRecords;
let admin: DataMovementAdmin;
let cmdlines: string[];
/** What reached the workers (a checked mutation is handed to them; a refusal never is). */
const calls: string[] = [];

beforeAll(async () => {
  fx = await makePoolsFixture([
    { drives: 4, standardParity: 2 },
    { drives: 4, standardParity: 2 },
  ]);
  layer = fx.layer;
  cmdlines = fx.roots.map((_, i) => `${fx.base}/p${i}/d{0...3}`);
  records = new PoolRecords(layer.sysRecords);
  const pools: PoolDescriptor[] = cmdlines.map((cmdline, id) => ({ id, cmdline, ellipsis: true, setCount: 1, setDriveCount: 4, standardParity: 2, rrsParity: 1, leader: 'local' }));
  admin = new DataMovementAdmin({
    pools,
    records,
    capacity: () => layer.capacity(),
    clock: systemClock,
    decommissionWorker: {
      start: async (p) => void calls.push(`decommission start ${p.join(',')}`),
      cancel: async (p) => void calls.push(`decommission cancel ${p}`),
      cleared: async (p) => void calls.push(`decommission cleared ${p}`),
    },
    rebalanceWorker: {
      start: async () => {
        calls.push('rebalance start');
        return { id: 'r1' };
      },
      stop: async () => void calls.push('rebalance stop'),
    },
  });
});
afterAll(async () => {
  await fx?.cleanup();
});

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof SvcError) return err.code;
    throw err;
  }
}

describe('pool.bin and rebalance.bin behind the admin services', () => {
  it('answers idle records while neither file exists', async () => {
    expect(await records.readPoolMeta()).toBeUndefined();
    expect((await admin.list()).map((p) => p.decommissionStatus)).toEqual(['none', 'none']);
    expect((await rebalanceAdminOf(admin).status()).status).toBe('idle');
  });

  it('reports a persisted canceled entry, refuses a start without a clear, clears it for real', async () => {
    calls.length = 0;
    const now = Date.now();
    await records.updatePoolMeta(() => ({
      pools: [{ cmdline: cmdlines[1]!, id: 1, lastUpdate: now, decommission: { ...queuedEntry(now - 5000, 1000, 800, ['photos']), state: 'canceled', startTime: now - 4000, objectsDecommissioned: 7, bytesDecommissioned: 700 } }],
    }));
    const p1 = await admin.status(1);
    expect(p1).toMatchObject({ status: 'blocked', decommissionStatus: 'canceled', lastUpdate: new Date(now).toISOString() });
    expect(p1.decommissionInfo).toMatchObject({ canceled: true, complete: false, objectsDecommissioned: 7, bytesDecommissioned: 700, startTime: new Date(now - 4000).toISOString() });
    const before = await records.readPoolMeta();
    expect(await code(admin.startDecommission([1]))).toBe('XSvcDecommissionNotAllowed');
    expect(await code(admin.cancelDecommission(1))).toBe('XSvcDecommissionNotAllowed');
    expect(calls).toEqual([]);
    // the canceled entry does not block a rebalance: the worker is asked
    expect(await rebalanceAdminOf(admin).start()).toMatchObject({ id: 'r1' });
    expect(calls).toEqual(['rebalance start']);
    expect(await records.readPoolMeta()).toEqual(before);
    await admin.clearDecommission(1);
    expect(calls).toEqual(['rebalance start', 'decommission cleared 1']);
    const after = await records.readPoolMeta();
    expect(after?.pools.find((p) => p.cmdline === cmdlines[1])?.decommission).toBeNull();
    expect((await admin.status(1)).decommissionStatus).toBe('none');
  });

  it('a queued entry blocks rebalance and a second start; cancel reaches the worker', async () => {
    calls.length = 0;
    await records.updatePoolMeta((m) => ({ pools: [...(m?.pools ?? []).filter((p) => p.cmdline !== cmdlines[1]), { cmdline: cmdlines[1]!, id: 1, lastUpdate: 1, decommission: queuedEntry(1, 1000, 800, []) }] }));
    expect((await admin.decommissionStatus(1)).pools[0]).toMatchObject({ status: 'queued', poolStatus: 'decommissioning', decommissionInfo: { queued: true, waitingReason: 'queued' } });
    expect(await code(admin.startDecommission([1]))).toBe('XSvcDecommissionNotAllowed');
    expect(await code(rebalanceAdminOf(admin).start())).toBe('XSvcRebalanceNotAllowed');
    expect(await code(admin.cancelDecommission(1))).toBeUndefined();
    expect(await code(admin.clearDecommission(1))).toBe('XSvcDecommissionNotAllowed');
    expect(calls).toEqual(['decommission cancel 1']);
    await records.updatePoolMeta(() => null);
    expect(await records.readPoolMeta()).toBeUndefined();
  });

  it('reports a persisted rebalance with nanosecond durations and its stop propagation', async () => {
    const started = Date.now() - 10_000;
    await records.updateRebalanceMeta(() => ({
      id: randomUUID(),
      startedAt: started,
      stoppedAt: 0,
      stopPropagation: { ...emptyStopPropagation(), lastAttemptAt: started, failedPeers: ['node3:9000'] },
      pools: [
        { cmdline: cmdlines[0]!, id: 0, participating: true, state: 'started', stopping: false, initFreeSpace: 100, initCapacity: 1000, lastError: null, warningCount: 0, warnings: [], progress: { ...emptyProgress(), bytes: 100, objects: 2, elapsedMs: 1500, remainingBuckets: ['a', 'b'] } },
        { cmdline: cmdlines[1]!, id: 1, participating: false, state: 'none', stopping: false, initFreeSpace: 900, initCapacity: 1000, lastError: null, warningCount: 0, warnings: [], progress: emptyProgress() },
      ],
    }));
    const st = await rebalanceAdminOf(admin).status();
    expect(st.status).toBe('running');
    expect(st.pools[0]!.progress).toMatchObject({ objects: 2, bytes: 100, remainingBuckets: 2, elapsed: 1_500_000_000, eta: 4_500_000_000 });
    expect(st.pools[0]!.status).toBe('active');
    expect(st.stopPropagation).toMatchObject({ failedPeers: ['node3:9000'], lastAttemptAt: new Date(started).toISOString() });
    expect((await admin.list()).map((p) => p.status)).toEqual(['rebalancing', 'active']);
    expect(await code(admin.startDecommission([1]))).toBe('XSvcAdminRebalanceAlreadyStarted');
    expect(await code(rebalanceAdminOf(admin).start())).toBe('XSvcAdminRebalanceAlreadyStarted');
    calls.length = 0;
    expect(await code(rebalanceAdminOf(admin).stop())).toBeUndefined();
    expect(calls).toEqual(['rebalance stop']);
    await records.updateRebalanceMeta(() => null);
    // nothing running: a stop is answered at once and never reaches the worker
    expect(await code(rebalanceAdminOf(admin).stop())).toBeUndefined();
    expect(calls).toEqual(['rebalance stop']);
  });
});
