/**
 * Decommission over real pools of tmpfs drives, in process: the drain moves
 * every kind of object exactly (versions in order, delete markers, null
 * versions, multipart layout, inline objects, tags, metadata, checksums,
 * storage class), re-encoded for a target pool of another geometry, and
 * leaves the drained pool without object data; an upload open on the pool
 * finishes during the drain and its object follows; the state table's rows
 * that need no process restart (serial queue, cancel, clear, failed,
 * retries, refusals) on the real records.
 */
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { objectPath } from '../src/storage/object-path.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import type { DataMovement } from '../src/background/movement/data-movement.ts';
import { PoolRecords } from '../src/object/records/store.ts';
import { bytes, put } from './engine-helpers.ts';
import type { DriveHooks } from './helpers/faulty-drive.ts';
import { codeOf } from './helpers/error-code.ts';
import { adminOver, movementOver, objectJournals, snapshotBucket, uploadFiles, waitForEntry } from './helpers/movement.ts';
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

const cmdlinesOf = (f: PoolsFixture) => f.roots.map((r, i) => `${f.base}/p${i}/d{0...${r.length - 1}}`);

/** Writes a little of everything onto pool 0 (the other pools closed meanwhile). */
async function populate(layer: ServerPools, pools: number): Promise<{ uploadId: string; partEtag: string }> {
  for (let p = 1; p < pools; p++) layer.setPoolAdmission(p, false, 'setup');
  await layer.makeBucket('plain');
  await layer.makeBucket('vers');
  await layer.makeBucket('susp');
  await layer.setBucketVersioning('vers', 'Enabled');
  await layer.setBucketVersioning('susp', 'Enabled');
  // plain: inline, larger than inline, zero bytes, a directory object, RRS, metadata, tags, a checksum.
  await put(layer, 'plain', 'small', bytes(100, 1));
  await put(layer, 'plain', 'medium', bytes(700 * 1024, 2), { userMeta: { owner: 'ops' }, contentHeaders: { contentType: 'text/x-test' }, tags: 'a=1&b=2' });
  await put(layer, 'plain', 'empty', Buffer.alloc(0));
  await put(layer, 'plain', 'dir/', Buffer.alloc(0));
  await put(layer, 'plain', 'dir/rrs', bytes(300 * 1024, 3), { storageClass: 'REDUCED_REDUNDANCY' });
  await layer.putObject('plain', 'summed', putDataFromBuffer(bytes(5000, 4), { algorithm: 'CRC32', value: 'AAAAAA==', type: 'FULL_OBJECT' }), {});
  for (let i = 0; i < 20; i++) await put(layer, 'plain', `many/k${String(i).padStart(2, '0')}`, bytes(1000 + i * 300, 10 + i));
  // A three-part object.
  const up = await layer.newMultipartUpload('plain', 'multi', { userMeta: { kind: 'mp' } });
  const parts = [bytes(MiB + 7, 5), bytes(MiB, 6), bytes(1234, 7)];
  const infos = [];
  for (const [i, p] of parts.entries()) infos.push(await layer.putObjectPart('plain', 'multi', up.uploadId, i + 1, putDataFromBuffer(p)));
  await layer.completeMultipartUpload('plain', 'multi', up.uploadId, infos.map((p) => ({ number: p.number, etag: p.etag })));
  // vers: versions, a delete marker, a version after it, a marker as the latest.
  for (let v = 0; v < 3; v++) await put(layer, 'vers', 'doc', bytes(2000 + v, 20 + v));
  await layer.deleteObject('vers', 'doc', {});
  await put(layer, 'vers', 'doc', bytes(4000, 30));
  await put(layer, 'vers', 'gone', bytes(10, 31));
  await layer.deleteObject('vers', 'gone', {});
  await put(layer, 'vers', 'big', bytes(2 * MiB + 5, 32));
  await put(layer, 'vers', 'big', bytes(MiB + 3, 33));
  // susp: versions then a null version on top.
  await put(layer, 'susp', 'k', bytes(500, 40));
  await layer.setBucketVersioning('susp', 'Suspended');
  await put(layer, 'susp', 'k', bytes(600, 41));
  // An upload left open on pool 0: it completes during the drain.
  const open = await layer.newMultipartUpload('plain', 'late', {});
  const part = await layer.putObjectPart('plain', 'late', open.uploadId, 1, putDataFromBuffer(bytes(200 * 1024, 50)));
  for (let p = 1; p < pools; p++) layer.setPoolAdmission(p, true);
  return { uploadId: open.uploadId, partEtag: part.etag };
}

/** Two pools of two tmpfs drives (EC:1) and a bucket `b`; `driveHooks` on their drives if given. */
async function twoSmallPools(driveBytes: number, driveHooks?: (pool: number) => DriveHooks | undefined): Promise<PoolsFixture> {
  const f = await makePoolsFixture(
    [
      { drives: 2, standardParity: 1 },
      { drives: 2, standardParity: 1 },
    ],
    2,
    { tmpfsBytes: driveBytes, ...(driveHooks ? { driveHooks } : {}) },
  );
  await f.layer.makeBucket('b');
  return f;
}

/**
 * Three pools: pool 0 holds `n0` objects (`a<i>`), pool 1 `n1` (`b<i>`), pool 2
 * (drives `lastDrives`) is empty and commits take at least 10 ms there, so each
 * drain onto it lasts long enough to be seen active.
 */
async function twoFilledOneSlowEmpty(n0: number, n1: number, size: number, lastDrives: 2 | 4): Promise<PoolsFixture> {
  const slow = { step: (s: string) => (s === 'rename-data:start' ? new Promise<void>((r) => setTimeout(r, 10)) : undefined) };
  const f = await makePoolsFixture(
    [
      { drives: 2, standardParity: 1 },
      { drives: 2, standardParity: 1 },
      { drives: lastDrives, standardParity: lastDrives / 2 },
    ],
    3,
    { tmpfsBytes: 48 * MiB, driveHooks: (pool: number) => (pool === 2 ? slow : undefined) },
  );
  const layer = f.layer;
  await layer.makeBucket('b');
  layer.setPoolAdmission(1, false, 'setup');
  layer.setPoolAdmission(2, false, 'setup');
  for (let i = 0; i < n0; i++) await put(layer, 'b', `a${i}`, bytes(size + i, i));
  layer.setPoolAdmission(0, false, 'setup');
  layer.setPoolAdmission(1, true);
  for (let i = 0; i < n1; i++) await put(layer, 'b', `b${i}`, bytes(size + i, 100 + i));
  layer.setPoolAdmission(0, true);
  layer.setPoolAdmission(2, true);
  return f;
}

async function snapshotAll(layer: ServerPools) {
  return { plain: await snapshotBucket(layer, 'plain'), vers: await snapshotBucket(layer, 'vers'), susp: await snapshotBucket(layer, 'susp') };
}

describe.skipIf(!enabled)('decommission (in process, tmpfs drives)', { timeout: 180_000 }, () => {
  it('drains every kind of object exactly onto a pool of another geometry; the pool is left without object data', async () => {
    fx = await makePoolsFixture(
      [
        { drives: 4, standardParity: 2 },
        { drives: 3, sets: 2, standardParity: 1 },
      ],
      2,
      { tmpfsBytes: 64 * MiB },
    );
    const layer = fx.layer;
    const { uploadId, partEtag } = await populate(layer, 2);
    for (const r of fx.roots[1]!) expect(await objectJournals(r)).toEqual([]);
    const before = await snapshotAll(layer);
    expect(before.vers.filter((v) => v.key === 'doc').map((v) => v.deleteMarker)).toEqual([false, true, false, false, false]);

    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines, { uploadPollMs: 100 });
    await dm.start();
    await dm.decommission.start([0]);
    // The source pool closes at once: a new key goes to pool 1, an existing key on pool 0 is SlowDown.
    expect(layer.poolAdmission()[0]).toMatchObject({ admitting: false, reason: 'decommission' });
    await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'active' || e?.state === 'completed');
    // The open upload finishes while the drain runs (or waits for it).
    await layer.completeMultipartUpload('plain', 'late', uploadId, [{ number: 1, etag: partEtag }]);
    const done = await waitForEntry(layer, cmdlines[0]!, (e) => e !== null && e.state !== 'active' && e.state !== 'queued');
    expect(done).toMatchObject({ state: 'completed', lastError: null, objectsDecommissionedFailed: 0 });
    // 28 keys in plain (the upload completed during the drain included), 3 in vers, 1 in susp.
    expect(done!.objectsDecommissioned).toBe(32);
    expect(done!.bytesDecommissioned).toBeGreaterThan(5 * MiB);
    expect(done!.decommissionedBuckets.sort()).toEqual(['plain', 'susp', 'vers']);

    const after = await snapshotAll(layer);
    const lateView = after.plain.find((v) => v.key === 'late');
    expect(lateView?.size).toBe(200 * 1024);
    expect({ ...after, plain: after.plain.filter((v) => v.key !== 'late') }).toEqual(before);
    for (const r of fx.roots[0]!) {
      expect(await objectJournals(r)).toEqual([]);
      expect(await uploadFiles(r)).toEqual([]);
    }
    // Re-encoded for pool 1 (3 drives, EC:1): K = 2.
    expect((await layer.getObjectInfo('plain', 'medium', {})).dataBlocks).toBe(2);
    // The pool stays closed (completed): nothing new lands there.
    await put(layer, 'plain', 'after', bytes(10, 60));
    for (const r of fx.roots[0]!) expect(await objectJournals(r)).toEqual([]);
  });

  it('one pool at a time, in batch order; a restart skips the completed pool and resumes the active one; every version ends on the remaining pool', async () => {
    // Pool 0 and pool 1 hold data; pool 2 is empty.
    fx = await twoFilledOneSlowEmpty(30, 30, 20_000, 4);
    const layer = fx.layer;
    const before = await snapshotBucket(layer, 'b');
    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines, { decommissionEntryConcurrency: 1, decommissionBucketConcurrency: 1 });
    await dm.start();
    const a = adminOver(layer, cmdlines, dm);
    await a.startDecommission([0, 1]);
    const records = new PoolRecords(layer.sysRecords);
    // Never two active at once.
    let sawQueuedBehindActive = false;
    let restarted = false;
    for (;;) {
      const m = (await records.readPoolMeta())!;
      const states = cmdlines.slice(0, 2).map((c) => m.pools.find((p) => p.cmdline === c)!.decommission!.state);
      expect(states.filter((s) => s === 'active').length).toBeLessThanOrEqual(1);
      if (states[0] === 'active' && states[1] === 'queued' && !sawQueuedBehindActive) {
        sawQueuedBehindActive = true;
        // Queued or active targets cannot be started again; a rebalance cannot start.
        expect(await codeOf(a.startDecommission([0]))).toBe('XSvcDecommissionNotAllowed');
        expect(await codeOf(a.startDecommission([1]))).toBe('XSvcDecommissionNotAllowed');
        expect(await codeOf(a.startRebalance())).toBe('XSvcRebalanceNotAllowed');
      }
      if (states[0] === 'completed' && states[1] === 'active' && !restarted) {
        // A restart here skips the terminal predecessor and resumes the active pool.
        restarted = true;
        await dm.close();
        dm = movementOver(layer, cmdlines, { decommissionEntryConcurrency: 1, decommissionBucketConcurrency: 1 });
        await dm.start();
        expect(dm.decommissioner.running?.pool).toBe(1);
      }
      if (states.every((s) => s === 'completed')) break;
      expect(states.some((s) => s === 'failed' || s === 'canceled')).toBe(false);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sawQueuedBehindActive).toBe(true);
    expect(restarted).toBe(true);
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
    for (const p of [0, 1]) for (const r of fx.roots[p]!) expect(await objectJournals(r)).toEqual([]);
    // A completed pool cannot be decommissioned again; every pool cannot be drained.
    expect(await codeOf(dm.decommission.start([0]))).toBe('XSvcDecommissionNotAllowed');
    expect(await codeOf(dm.decommission.start([2]))).toBe('XSvcDecommissionNotAllowed');
  });

  it('cancel stops the drain and keeps what moved; clear reopens the pool; a new start completes', async () => {
    // The drain holds after 12 objects (each commits on pool 1's two drives) until the cancel is recorded,
    // so the cancel always meets a drain under way (a quiet machine drained all 150 before it otherwise).
    let armed = false;
    let renames = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const hold: DriveHooks = { step: (s) => (armed && s === 'rename-data:start' && ++renames > 24 ? gate : undefined) };
    fx = await twoSmallPools(48 * MiB, (pool) => (pool === 1 ? hold : undefined));
    const layer = fx.layer;
    layer.setPoolAdmission(1, false, 'setup');
    for (let i = 0; i < 150; i++) await put(layer, 'b', `k${String(i).padStart(3, '0')}`, bytes(3000, i));
    layer.setPoolAdmission(1, true);
    const before = await snapshotBucket(layer, 'b');
    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines, { decommissionEntryConcurrency: 1, decommissionBucketConcurrency: 1 });
    await dm.start();
    armed = true;
    await dm.decommission.start([0]);
    await expect.poll(() => renames, { timeout: 60_000 }).toBeGreaterThan(24);
    const canceling = dm.decommission.cancel(0);
    const canceled = await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'canceled');
    release();
    await canceling;
    expect(canceled!.endTime).toBeGreaterThan(0);
    const moved = (await objectJournals(fx.roots[1]![0]!)).length;
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(150);
    // Nothing moves back, nothing is lost, and the canceled pool stays closed until cleared.
    await new Promise((r) => setTimeout(r, 300));
    expect((await objectJournals(fx.roots[1]![0]!)).length).toBe(moved);
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
    expect(layer.poolAdmission()[0]).toMatchObject({ admitting: false });
    // Retry path: a canceled entry must be cleared first.
    expect(await codeOf(dm.decommission.start([0]))).toBe('XSvcDecommissionNotAllowed');
    expect(await codeOf(dm.decommission.cancel(0))).toBe('XSvcDecommissionNotAllowed');
    await adminOver(layer, cmdlines, dm).clearDecommission(0);
    expect(await waitForEntry(layer, cmdlines[0]!, () => true)).toBeNull();
    expect(layer.poolAdmission()[0]).toEqual({ pool: 0, admitting: true });
    await dm.decommission.start([0]);
    expect(await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'completed')).toMatchObject({ state: 'completed' });
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
    for (const r of fx.roots[0]!) expect(await objectJournals(r)).toEqual([]);
  });

  it('cancel of a queued entry (the table does not show it): canceled without moving anything, the active drain goes on; clear reopens the pool', async () => {
    // Pool 0's drain lasts well past the cancel.
    fx = await twoFilledOneSlowEmpty(60, 20, 5000, 2);
    const layer = fx.layer;
    const before = await snapshotBucket(layer, 'b');
    const onPool1 = await objectJournals(fx.roots[1]![0]!);
    expect(onPool1).toHaveLength(20);
    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines, { decommissionEntryConcurrency: 1, decommissionBucketConcurrency: 1 });
    await dm.start();
    const a = adminOver(layer, cmdlines, dm);
    await a.startDecommission([0, 1]);
    expect(await waitForEntry(layer, cmdlines[1]!, () => true)).toMatchObject({ state: 'queued' });
    await a.cancelDecommission(1);
    expect(await waitForEntry(layer, cmdlines[1]!, () => true)).toMatchObject({ state: 'canceled', objectsDecommissioned: 0 });
    expect(await waitForEntry(layer, cmdlines[0]!, () => true)).toMatchObject({ state: 'active' });
    // The active pool drains to the end; the canceled one never moved a byte and stays closed.
    expect(await waitForEntry(layer, cmdlines[0]!, (e) => e?.state !== 'active')).toMatchObject({ state: 'completed', objectsDecommissionedFailed: 0 });
    expect(await objectJournals(fx.roots[1]![0]!)).toEqual(onPool1);
    expect(layer.poolAdmission()[1]).toMatchObject({ admitting: false });
    expect(await snapshotBucket(layer, 'b')).toEqual(before);
    await a.clearDecommission(1);
    expect(await waitForEntry(layer, cmdlines[1]!, () => true)).toBeNull();
    expect(layer.poolAdmission()[1]).toEqual({ pool: 1, admitting: true });
  });

  it('a drain that cannot read an object fails and says why; after the cause is fixed, clear and start completes', async () => {
    fx = await twoSmallPools(32 * MiB);
    const layer = fx.layer;
    layer.setPoolAdmission(1, false, 'setup');
    await put(layer, 'b', 'ok', bytes(300 * 1024, 1));
    await put(layer, 'b', 'hurt', bytes(400 * 1024, 2));
    layer.setPoolAdmission(1, true);
    // Both shards of `hurt` unreadable: its data dir moved aside on both drives.
    const dirOf = async (root: string) => {
      const { readdir } = await import('node:fs/promises');
      const ents = await readdir(join(root, 'b', objectPath('hurt')));
      return ents.find((e) => e !== 'xl.meta')!;
    };
    const hidden: [string, string][] = [];
    for (const r of fx.roots[0]!) {
      const d = join(r, 'b', 'hurt', await dirOf(r));
      await rename(d, `${d}.aside`);
      hidden.push([d, `${d}.aside`]);
    }
    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines);
    await dm.start();
    await dm.decommission.start([0]);
    const failed = await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'failed' || e?.state === 'completed');
    expect(failed).toMatchObject({ state: 'failed', objectsDecommissionedFailed: 1, unresolvedEntries: 0 });
    expect(failed!.lastError).toContain('b/hurt');
    expect(failed!.objectsDecommissioned).toBe(1);
    // Failed without unresolved entries: clear first.
    expect(await codeOf(dm.decommission.start([0]))).toBe('XSvcDecommissionNotAllowed');
    for (const [d, aside] of hidden) await rename(aside, d);
    const a = adminOver(layer, cmdlines, dm);
    await a.clearDecommission(0);
    await a.startDecommission([0]);
    expect(await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'completed' || e?.state === 'failed')).toMatchObject({ state: 'completed', objectsDecommissionedFailed: 0 });
    expect((await snapshotBucket(layer, 'b')).map((v) => [v.key, v.size])).toEqual([
      ['hurt', 400 * 1024],
      ['ok', 300 * 1024],
    ]);
  });
});

describe.skipIf(!enabled)('decommission: unresolved entries (in process)', { timeout: 180_000 }, () => {
  it('a drain that meets entries no quorum decides fails with unresolved entries; a new start is the retry, without a clear', async () => {
    // One tmpfs under every drive: capacity is real, and drives can still go offline.
    fx = await makePoolsFixture(
      [
        { drives: 4, standardParity: 2 },
        { drives: 4, standardParity: 2 },
      ],
      2,
      { sharedTmpfsBytes: 128 * MiB },
    );
    const layer = fx.layer;
    await layer.makeBucket('b');
    layer.setPoolAdmission(1, false, 'setup');
    for (let i = 0; i < 6; i++) await put(layer, 'b', `k${i}`, bytes(50_000, i));
    layer.setPoolAdmission(1, true);
    // k0 left on drives 0 and 3 only (K = 2); drive 3 offline: one vote, one drive that does
    // not answer: no quorum decides whether k0 exists.
    for (const d of [1, 2]) await rm(join(fx.roots[0]![d]!, 'b', 'k0'), { recursive: true });
    await fx.offline(0, 3);
    const cmdlines = cmdlinesOf(fx);
    dm = movementOver(layer, cmdlines, { uploadGraceMs: 60_000 });
    await dm.start();
    const a = adminOver(layer, cmdlines, dm);
    await a.startDecommission([0]);
    // The sweep that would prove the pool empty waits for drive 3, so fail fast: the drain stops at the unresolved entry.
    const failed = await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'failed' || e?.state === 'completed');
    expect(failed).toMatchObject({ state: 'failed', unresolvedEntries: 1, objectsDecommissionedFailed: 1 });
    expect(failed!.lastError).toMatch(/below read quorum/);
    // The retry path: with unresolved entries a new start is the retry (no clear); drive 3 is back.
    await fx.online(0, 3);
    await a.startDecommission([0]);
    expect(await waitForEntry(layer, cmdlines[0]!, (e) => e?.state === 'completed' || e?.state === 'failed')).toMatchObject({ state: 'completed', unresolvedEntries: 0 });
    const keys = (await snapshotBucket(layer, 'b')).map((v) => v.key);
    expect(keys).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
    for (const r of fx.roots[0]!) expect(await objectJournals(r)).toEqual([]);
  });
});
