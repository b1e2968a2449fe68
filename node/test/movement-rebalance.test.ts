/**
 * Rebalance over real pools of tmpfs drives, in process: from a full pool
 * and an empty one, start returns a UUID, the full pool is fenced (new keys
 * go elsewhere, its keys still take writes), objects move until the fills
 * are within a few percent, every version still reads back; the status
 * shows progress and an ETA while it runs; stop keeps the moves and
 * persists `stopped`; a restart records an interrupted rebalance as stopped
 * and starts nothing; an object that cannot move gets exactly
 * `SVC_REBALANCE_MAX_ATTEMPTS` attempts and is explained in `lastError`;
 * rebalance and decommission exclude each other.
 */
import { readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DataMovementAdmin } from '../src/object/admin/data-movement-admin.ts';
import type { RebalanceStatus } from '../src/object/admin/types.ts';
import type { DataMovement } from '../src/background/movement/data-movement.ts';
import { fillOf } from '../src/background/movement/rebalance-plan.ts';
import { PoolRecords } from '../src/object/records/store.ts';
import { bytes, put } from './engine-helpers.ts';
import { codeOf } from './helpers/error-code.ts';
import { adminOver, movementOver, objectJournals, snapshotBucket } from './helpers/movement.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';

const MiB = 1024 * 1024;
const enabled = canMountTmpfs();
if (!enabled) console.log('skipped: cannot mount tmpfs (needs root)');

let fx: PoolsFixture | undefined;
let dm: DataMovement | undefined;
afterEach(async () => {
  await dm?.close();
  dm = undefined;
  await fx?.cleanup();
  fx = undefined;
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Pool 0 holds `count` objects of `size` bytes; pool 1 (same geometry) is
 * empty, its drives slowed by `slowMs` per commit so a move takes a while.
 */
async function fullAndEmpty(count: number, size: number, slowMs = 0): Promise<{ f: PoolsFixture; cmdlines: string[] }> {
  const slow = { step: (s: string) => (s === 'rename-data:start' ? new Promise<void>((r) => setTimeout(r, slowMs)) : undefined) };
  const f = await makePoolsFixture(
    [
      { drives: 2, standardParity: 1 },
      { drives: 2, standardParity: 1 },
    ],
    2,
    { tmpfsBytes: 32 * MiB, ...(slowMs > 0 ? { driveHooks: (pool: number) => (pool === 1 ? slow : undefined) } : {}) },
  );
  await f.layer.makeBucket('b');
  await f.layer.setBucketVersioning('b', 'Enabled');
  f.layer.setPoolAdmission(1, false, 'setup');
  for (let i = 0; i < count; i++) await put(f.layer, 'b', `k${String(i).padStart(3, '0')}`, bytes(size, i));
  f.layer.setPoolAdmission(1, true);
  return { f, cmdlines: f.roots.map((r, i) => `${f.base}/p${i}/d{0...${r.length - 1}}`) };
}

async function waitStatus(a: DataMovementAdmin, done: (s: RebalanceStatus) => boolean, timeoutMs = 60_000): Promise<RebalanceStatus> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await a.rebalanceStatus();
    if (done(s)) return s;
    if (Date.now() > end) throw new Error(`rebalance status still ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function until(cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!enabled)('rebalance (in process, tmpfs drives)', { timeout: 180_000 }, () => {
  it('brings a full pool and an empty one within a few percent; fences new keys; shows progress and an ETA; every version reads back', async () => {
    const { f, cmdlines } = await fullAndEmpty(48, 256 * 1024, 40);
    fx = f;
    const layer = f.layer;
    const before = await snapshotBucket(layer, 'b');
    dm = movementOver(layer, cmdlines);
    await dm.start();
    const a = adminOver(layer, cmdlines, dm);
    const fills0 = (await layer.capacity()).map(fillOf);
    expect(fills0[0]! - fills0[1]!).toBeGreaterThan(0.3);
    const { id } = await a.startRebalance();
    expect(id).toMatch(UUID);
    expect(await codeOf(a.startRebalance())).toBe('XSvcAdminRebalanceAlreadyStarted');
    expect(await codeOf(a.startDecommission([1]))).toBe('XSvcAdminRebalanceAlreadyStarted');
    // The fence: a new key avoids pool 0; a key living on pool 0 is overwritten in place.
    expect(layer.poolAdmission()[0]).toMatchObject({ admitting: false, reason: 'rebalance', existingKeys: true });
    await put(layer, 'b', 'new-key', bytes(1000, 900));
    expect((await objectJournals(f.roots[1]![0]!)).includes('b/new-key')).toBe(true);
    const seen: RebalanceStatus[] = [];
    const end = await waitStatus(a, (s) => {
      seen.push(s);
      return s.status !== 'running';
    });
    expect(end.status).toBe('completed');
    expect(end.id).toBe(id);
    expect(end.pools.map((p) => [p.status, p.participating, p.stopping])).toEqual([
      ['completed', true, false],
      ['none', false, false],
    ]);
    expect(end.pools[0]!.lastError).toBeNull();
    expect(end.pools[0]!.progress.objects).toBeGreaterThan(10);
    expect(end.pools[0]!.progress.versions).toBe(end.pools[0]!.progress.objects);
    expect(end.pools[0]!.progress.bytes).toBe(end.pools[0]!.progress.objects * 256 * 1024);
    expect(end.pools[0]!.progress.eta).toBe(0);
    expect(end.pools[0]!.progress.elapsed).toBeGreaterThan(0);
    // While it ran: progress with an ETA.
    expect(seen.some((s) => s.status === 'running' && s.pools[0]!.progress.objects > 0 && s.pools[0]!.progress.eta > 0)).toBe(true);
    const fills = (await layer.capacity()).map(fillOf);
    expect(Math.abs(fills[0]! - fills[1]!)).toBeLessThan(0.1);
    // The worker's end lifts the fence right after its final record.
    await until(() => layer.poolAdmission()[0]!.admitting);
    const after = await snapshotBucket(layer, 'b');
    expect(after.filter((v) => v.key !== 'new-key')).toEqual(before);
    // Every node was told to reload the terminal state (none failed: a single node).
    const reloaded = await waitStatus(a, (s) => s.stopPropagation.terminalReloadAttemptAt !== '0001-01-01T00:00:00Z');
    expect(reloaded.stopPropagation).toMatchObject({ terminalReloadFailedPeers: [], pendingTerminalReload: false });
    // Done: once the drives freed the moved data, a new rebalance finds nothing to move and says so.
    await f.flushDrives();
    const again = await a.startRebalance();
    const st = await waitStatus(a, (s) => s.id === again.id && s.status !== 'running');
    expect(st.status).toBe('completed');
    expect(st.pools.every((p) => p.progress.objects === 0)).toBe(true);
    // Nothing to move is no error: lastError stays empty, and no pool took part.
    expect(st.pools.map((p) => [p.status, p.participating, p.lastError])).toEqual([
      ['completed', false, null],
      ['completed', false, null],
    ]);
  });

  it('stop while moving keeps the moves, persists stopped, lifts the fence; a restart never resumes and records the interruption', async () => {
    const { f, cmdlines } = await fullAndEmpty(120, 128 * 1024, 60);
    fx = f;
    const layer = f.layer;
    const before = await snapshotBucket(layer, 'b');
    dm = movementOver(layer, cmdlines);
    await dm.start();
    const a = adminOver(layer, cmdlines, dm);
    await a.startRebalance();
    await waitStatus(a, (s) => s.pools[0]!.progress.objects >= 5);
    await a.stopRebalance();
    const stopped = await a.rebalanceStatus();
    expect(stopped.status).toBe('stopped');
    expect(stopped.stoppedAt).not.toBe('0001-01-01T00:00:00Z');
    expect(stopped.pools[0]).toMatchObject({ status: 'stopped', stopping: false });
    expect(stopped.stopPropagation.failedPeers).toEqual([]);
    expect(stopped.stopPropagation.lastAttemptAt).not.toBe('0001-01-01T00:00:00Z');
    expect(layer.poolAdmission()[0]).toEqual({ pool: 0, admitting: true });
    const moved = (await objectJournals(f.roots[1]![0]!)).length;
    expect(moved).toBeGreaterThanOrEqual(5);
    expect(moved).toBeLessThan(120);
    await new Promise((r) => setTimeout(r, 300));
    expect((await objectJournals(f.roots[1]![0]!)).length).toBe(moved);
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
    // Stop with nothing running changes nothing.
    await a.stopRebalance();
    expect(await a.rebalanceStatus()).toEqual(stopped);

    // A crash mid-rebalance: the record says started, no worker survives it.
    const { id } = await a.startRebalance();
    await waitStatus(a, (s) => s.pools[0]!.progress.objects >= 1);
    const records = new PoolRecords(layer.sysRecords);
    const crashed = await records.readRebalanceMeta();
    await dm.close(); // the workers end (their final persist would say "shut down")...
    await records.updateRebalanceMeta(() => crashed); // ...but a kill -9 leaves the record as it was
    const journals = (await objectJournals(f.roots[1]![0]!)).length;
    dm = movementOver(layer, cmdlines);
    await dm.start();
    const recovered = await adminOver(layer, cmdlines, dm).rebalanceStatus();
    expect(recovered.id).toBe(id);
    expect(recovered.status).toBe('stopped');
    expect(recovered.pools[0]).toMatchObject({ status: 'stopped', stopping: false });
    expect(recovered.pools[0]!.lastError).toMatch(/interrupted: local restarted/);
    expect(dm.rebalancer.runningPools).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await objectJournals(f.roots[1]![0]!)).length).toBe(journals);
    expect(layer.poolAdmission()[0]).toEqual({ pool: 0, admitting: true });
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
  });

  it('an object that cannot move gets exactly SVC_REBALANCE_MAX_ATTEMPTS attempts and lastError explains it; decommission blocks a start', async () => {
    const { f, cmdlines } = await fullAndEmpty(12, 512 * 1024);
    fx = f;
    const layer = f.layer;
    // k000's data unreadable on both drives of pool 0.
    for (const r of f.roots[0]!) {
      const dir = join(r, 'b', 'k000');
      const dd = (await readdir(dir)).find((e) => e !== 'xl.meta')!;
      await rename(join(dir, dd), join(dir, `${dd}.aside`));
    }
    const attempts: number[] = [];
    dm = movementOver(layer, cmdlines, { rebalanceMaxAttempts: 2 });
    const a = adminOver(layer, cmdlines, dm);
    await dm.start();
    await a.startRebalance();
    const end = await waitStatus(a, (s) => s.status !== 'running');
    attempts.push(end.pools[0]!.progress.objects);
    expect(end.status).toBe('completed');
    expect(end.pools[0]!.lastError).toMatch(/b\/k000 was not moved after 2 attempt\(s\)/);
    // Mutual exclusion the other way: a queued decommission blocks a rebalance start.
    await a.startDecommission([1]);
    expect(await codeOf(a.startRebalance())).toBe('XSvcRebalanceNotAllowed');
  });
});
