import { describe, expect, it } from 'vitest';
import type { ClusterSnapshot, PoolStatus, RuntimeCapabilities, SnapshotDrive } from '../../object/admin/types.ts';
import { capacityView, drainProgress, nodeHealth, poolActions, readinessView, rebalanceActions } from './cluster-views.ts';

const drive = (i: number, state: SnapshotDrive['state'] = 'online'): SnapshotDrive => ({
  endpoint: `/d${i}`,
  node: 'n1:9000',
  local: true,
  state,
  detail: state === 'offline' ? 'drive root missing' : null,
  uuid: `u${i}`,
  slot: { pool: 0, set: 0, index: i },
  total: 1000,
  used: 100,
  free: 900,
});

function snapshot(states: SnapshotDrive['state'][]): ClusterSnapshot {
  const drives = states.map((s, i) => drive(i, s));
  const online = drives.filter((d) => d.state !== 'offline').length;
  return {
    generatedAt: '2026-01-01T00:00:00Z',
    deploymentId: 'dep',
    node: 'n1:9000',
    readiness: { ready: true, status: 'ok', degradedReasons: [] },
    summary: { nodes: 1, nodesOnline: 1, pools: 1, sets: 1, drives: 4, drivesOnline: online, drivesOffline: 4 - online, drivesHealing: 0, rawTotal: 4000, rawUsed: 400, rawFree: 3600, usableTotal: 2000, usableFree: 1800 },
    nodes: [{ id: 'n1:9000', state: 'online', self: true, leaderOfPools: [0], drives: 4 }],
    pools: [
      {
        id: 0,
        cmdline: '/d{0...3}',
        leader: 'n1:9000',
        setCount: 1,
        setDriveCount: 4,
        standardParity: 2,
        rrsParity: 1,
        status: 'active',
        decommissionStatus: 'none',
        rebalanceStatus: 'none',
        rawTotal: 4000,
        rawUsed: 400,
        rawFree: 3600,
        usableTotal: 2000,
        usableFree: 1800,
        sets: [{ id: 0, drives, drivesOnline: online, readQuorum: 2, writeQuorum: 3, readable: online >= 2, writable: online >= 3 }],
      },
    ],
    runtimeCapabilitiesPath: '/svc/admin/v4/runtime/capabilities',
  };
}

const ready = readinessView({ ready: true, status: 'ok', details: { storage: { status: 'connected', ready: true, detail: '1 of 1' } }, degradedReasons: [] });

describe('node health', () => {
  it('healthy with everything online', () => {
    expect(nodeHealth(ready, snapshot(['online', 'online', 'online', 'online']))).toMatchObject({ state: 'healthy', problems: [] });
  });
  it('degraded when a drive is away, naming it and what the set can still lose', () => {
    const h = nodeHealth(ready, snapshot(['online', 'online', 'online', 'offline']));
    expect(h.state).toBe('degraded');
    expect(h.problems).toEqual(['Pool 0, set 0: 1 drive offline (/d3); it can lose 1 more and still read.']);
  });
  it('not ready, with the degraded reasons in words', () => {
    const r = readinessView({ ready: false, status: 'degraded', pending: 'storage_quorum', details: { storage: { status: 'disconnected', ready: false } }, degradedReasons: ['storage_quorum_unavailable'] });
    expect(r.degradedReasons).toEqual([{ reason: 'storage_quorum_unavailable', meaning: 'Too many drives are offline: an erasure set lacks read quorum.' }]);
    const h = nodeHealth(r, snapshot(['online', 'offline', 'offline', 'offline']));
    expect(h.state).toBe('not-ready');
    expect(h.problems[0]).toBe('Not ready, waiting for storage quorum: S3 requests are answered 503.');
    expect(h.problems).toContain('Pool 0, set 0: 3 drives offline (/d1, /d2, /d3); its objects cannot be read.');
  });
});

describe('capacity', () => {
  it('usable use is raw use scaled by the data share', () => {
    const c = capacityView(snapshot(['online', 'online', 'online', 'online']), 0.8);
    expect(c.usableUsed).toBe(200);
    expect(c.pools[0]).toMatchObject({ usableTotal: 2000, usableUsed: 200 });
    expect(c).toMatchObject({ rawTotalDistinct: 4000, sharedFilesystems: [] });
  });
  it('drives on one file system are counted once and named', () => {
    const snap = snapshot(['online', 'online', 'online', 'offline']);
    for (const d of snap.pools[0]!.sets[0]!.drives) d.filesystem = d.slot.index < 2 ? 'n1:9000#2049' : `n1:9000#${d.slot.index}`;
    const c = capacityView(snap, 0.8);
    // /d0 and /d1 share a file system; /d3 is offline and not counted
    expect(c.sharedFilesystems).toEqual([{ node: 'n1:9000', drives: ['/d0', '/d1'], total: 1000 }]);
    expect(c.rawTotalDistinct).toBe(2000);
  });
});

const info = (o: Partial<PoolStatus['decommissionInfo']>) => ({
  startTime: '0001-01-01T00:00:00Z',
  startSize: 0,
  totalSize: 0,
  currentSize: 0,
  complete: false,
  failed: false,
  canceled: false,
  objectsDecommissioned: 0,
  objectsDecommissionedFailed: 0,
  bytesDecommissioned: 0,
  bytesDecommissionedFailed: 0,
  queued: false,
  queuedBuckets: [],
  decommissionedBuckets: [],
  bucket: '',
  prefix: '',
  object: '',
  stage: 'none' as const,
  waitingReason: null,
  lastError: null,
  elapsedSeconds: 0,
  ...o,
});

const pool = (id: number, decommissionStatus: PoolStatus['decommissionStatus'], d: Partial<PoolStatus['decommissionInfo']> = {}): PoolStatus => ({
  id,
  cmdline: `/p${id}/d{1...4}`,
  lastUpdate: '0001-01-01T00:00:00Z',
  decommissionInfo: info(d),
  totalSize: 1000,
  currentSize: 800,
  usedSize: 200,
  used: 0.2,
  status: 'active',
  decommissionStatus,
  rebalanceStatus: 'none',
  leader: 'n1:9000',
  setCount: 1,
  setDriveCount: 4,
  standardParity: 2,
  rrsParity: 1,
  drives: 4,
  drivesOnline: 4,
});

describe('decommission progress and actions', () => {
  it('rate and ETA from what moved since the start; the total is object bytes the scanner counted', () => {
    // counted before the drain began: the pool held 400 bytes of objects
    const before = { objects: 8, versions: 8, size: 400, countedAt: Date.parse('2025-12-31T23:00:00Z') };
    const g = drainProgress(pool(0, 'running', { startTime: '2026-01-01T00:00:00Z', totalSize: 1000, startSize: 600, bytesDecommissioned: 100, objectsDecommissioned: 50, elapsedSeconds: 100 }), before)!;
    expect(g).toEqual({ totalBytes: 400, movedBytes: 100, fraction: 0.25, bytesPerSecond: 1, objectsPerSecond: 0.5, etaSeconds: 300, elapsedSeconds: 100 });
    // counted while it runs: what is left plus what moved (the file system's used space plays no part)
    const during = { ...before, size: 300, countedAt: Date.parse('2026-01-01T00:01:00Z') };
    expect(drainProgress(pool(0, 'running', { startTime: '2026-01-01T00:00:00Z', totalSize: 1e12, startSize: 1, bytesDecommissioned: 100, elapsedSeconds: 100 }), during)!.totalBytes).toBe(400);
    // not counted yet: no total, no ETA
    expect(drainProgress(pool(0, 'running', { startTime: '2026-01-01T00:00:00Z', totalSize: 1000, startSize: 600, bytesDecommissioned: 100, elapsedSeconds: 100 }))).toMatchObject({ totalBytes: 0, fraction: 0, etaSeconds: null });
    // the worker's own elapsed time (time spent moving), not the wall time since the request
    expect(drainProgress(pool(0, 'running', { startTime: '2026-01-01T00:00:00Z', totalSize: 1000, startSize: 600, bytesDecommissioned: 100, elapsedSeconds: 50 }), before)!.etaSeconds).toBe(150);
    // queued: nothing moved yet, no rate and no ETA
    expect(drainProgress(pool(0, 'running', { totalSize: 1000, startSize: 600, elapsedSeconds: 0 }))).toMatchObject({ bytesPerSecond: null, etaSeconds: null });
    expect(drainProgress(pool(0, 'complete', { complete: true, startTime: '2026-01-01T00:00:00Z', totalSize: 1000, startSize: 600, bytesDecommissioned: 400 }))).toMatchObject({ fraction: 1, etaSeconds: null });
    expect(drainProgress(pool(0, 'none'))).toBeNull();
  });

  it('offers a rebalance only with two active pools, saying why not otherwise', () => {
    const caps = { rebalance: { possible: true, implemented: true, reason: null } } as unknown as RuntimeCapabilities;
    const idle = { status: 'none' } as never;
    expect(rebalanceActions(caps, idle, [pool(0, 'none'), pool(1, 'none')])).toEqual({ start: true, stop: false, reason: null });
    const one = rebalanceActions(caps, idle, [pool(0, 'complete'), pool(1, 'none')]);
    expect(one.start).toBe(false);
    expect(one.reason).toMatch(/needs at least two active pools/);
    expect(rebalanceActions(caps, idle, [pool(0, 'running'), pool(1, 'none')]).reason).toMatch(/decommissioned/);
    expect(rebalanceActions(caps, { status: 'running' } as never, [pool(0, 'none'), pool(1, 'none')])).toEqual({ start: false, stop: true, reason: null });
  });

  it('offers what the state table allows', () => {
    const caps = { decommission: { possible: true, implemented: true, reason: null } } as RuntimeCapabilities;
    const two = [pool(0, 'none'), pool(1, 'none')];
    expect(poolActions(two[0]!, two, caps, null)).toEqual({ decommission: true, cancel: false, clear: false });
    expect(poolActions(pool(0, 'running'), [pool(0, 'running'), pool(1, 'none')], caps, null)).toEqual({ decommission: false, cancel: true, clear: false });
    expect(poolActions(pool(0, 'canceled'), [pool(0, 'canceled'), pool(1, 'none')], caps, null)).toEqual({ decommission: true, cancel: false, clear: true });
    expect(poolActions(pool(0, 'complete'), [pool(0, 'complete'), pool(1, 'none')], caps, null)).toEqual({ decommission: false, cancel: false, clear: false });
    // the last active pool cannot go; nor while a rebalance runs; nor where the layout cannot
    expect(poolActions(pool(1, 'none'), [pool(0, 'running'), pool(1, 'none')], caps, null).decommission).toBe(false);
    expect(poolActions(two[0]!, two, caps, { status: 'running' } as never).decommission).toBe(false);
    expect(poolActions(two[0]!, two, { decommission: { possible: false, implemented: false, reason: 'x' } } as RuntimeCapabilities, null).decommission).toBe(false);
  });
});
