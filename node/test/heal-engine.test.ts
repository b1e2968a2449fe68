/**
 * The object heal engine on real temp-dir drives: missing, corrupt and
 * outdated shards rebuilt through the durable path (every drive holds
 * exactly what it should afterwards), refusals that change nothing (too few
 * shards, zero parity, geometry), dry runs that change nothing, dangling
 * versions reported and removed only with `remove`, delete markers and
 * inline objects, and the `.svc.sys` records and bucket volumes.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Healer } from '../src/background/heal/healer.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import { decodeXlMeta } from '../src/storage/xl-meta.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { bytes, type Fixture, get, makeFixture, put } from './engine-helpers.ts';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

const NORMAL = { dryRun: false, remove: false, deep: false };

function healerDeps(f: Fixture) {
  const l = f.layer as unknown as ServerPools;
  return { pools: l.pools, locker: l.locker, records: l.sysRecords, clock: systemClock, logger: silentLogger };
}

function healerOf(f: Fixture): Healer {
  return new Healer(healerDeps(f));
}

/** Every file under a drive (path → size), the way a test compares drives. */
function tree(dir: string, out = new Map<string, number>(), base = dir): Map<string, number> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p === join(base, '.svc.sys', 'tmp')) continue;
      tree(p, out, base);
    } else out.set(p.slice(base.length), statSync(p).size);
  }
  return out;
}

/** The journal of `bucket/key` on drive i. */
function journal(f: Fixture, i: number, bucket: string, key: string) {
  return decodeXlMeta(readFileSync(join(f.roots[i]!, bucket, key, 'xl.meta')));
}

/** Drive index holding shard number `shard` of the latest version of bucket/key. */
function driveOfShard(f: Fixture, bucket: string, key: string, shard: number): number {
  for (let i = 0; i < f.roots.length; i++) if (journal(f, i, bucket, key)[0]!.erasure!.index === shard) return i;
  throw new Error('no such shard');
}

function partFile(f: Fixture, i: number, bucket: string, key: string, part = 1): string {
  const v = journal(f, i, bucket, key)[0]!;
  return join(f.roots[i]!, bucket, key, v.dataDir, `part.${part}`);
}

async function flip(file: string, at: number): Promise<void> {
  const fh = await open(file, 'r+');
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, at);
  b[0] = b[0]! ^ 0xff;
  await fh.write(b, 0, 1, at);
  await fh.close();
}

describe('object heal engine', () => {
  it('rebuilds a corrupt shard (deep scan) so that losing parity-many other drives still reads', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    const data = bytes(3 * 1024 * 1024 + 17);
    await put(fx.layer, 'b', 'o', data);
    const victim = driveOfShard(fx, 'b', 'o', 1);
    const good = readFileSync(partFile(fx, victim, 'b', 'o'));
    await flip(partFile(fx, victim, 'b', 'o'), 100);
    const h = healerOf(fx);
    // A normal scan sees sizes only: the flip is invisible to it.
    expect((await h.healObjectAnywhere('b', 'o', NORMAL)).outcome).toBe('ok');
    const r = await h.healObjectAnywhere('b', 'o', { ...NORMAL, deep: true });
    expect(r.outcome, r.detail).toBe('healed');
    expect(r.before.map((d) => d.state)).toEqual([0, 1, 2, 3].map((i) => (i === victim ? 'corrupt' : 'ok')));
    expect(r.after.map((d) => d.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(r.dataBlocks).toBe(2);
    expect(r.parityBlocks).toBe(2);
    expect(readFileSync(partFile(fx, victim, 'b', 'o')).equals(good)).toBe(true);
    for (const i of [0, 1, 2, 3].filter((x) => x !== victim).slice(0, 2)) await fx.offline(i);
    expect((await get(fx.layer, 'b', 'o')).equals(data)).toBe(true);
  });

  it('a source found bad while rebuilding is replaced by a spare, and healed as well', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    const data = bytes(4 * 1024 * 1024 + 99, 3);
    await put(fx.layer, 'b', 'o', data);
    for (const d of fx.drives) await d.flush();
    // The drive of shard 3 lost the object; shard 1 (read first) has bitrot of the same size.
    const lost = driveOfShard(fx, 'b', 'o', 3);
    const rotten = driveOfShard(fx, 'b', 'o', 1);
    const good = readFileSync(partFile(fx, rotten, 'b', 'o'));
    const want = readFileSync(partFile(fx, lost, 'b', 'o'));
    await rm(join(fx.roots[lost]!, 'b', 'o'), { recursive: true });
    await flip(partFile(fx, rotten, 'b', 'o'), 2 * 1024 * 1024 + 77);
    const r = await healerOf(fx).healObjectAnywhere('b', 'o', NORMAL);
    expect(r.outcome, r.detail).toBe('healed');
    expect(r.before[lost]!.state).toBe('missing');
    expect(r.after.map((d) => d.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(readFileSync(partFile(fx, lost, 'b', 'o')).equals(want)).toBe(true);
    expect(readFileSync(partFile(fx, rotten, 'b', 'o')).equals(good)).toBe(true);
    expect((await get(fx.layer, 'b', 'o')).equals(data)).toBe(true);
  });

  it('rebuilds a drive that lost the object (data and xl.meta) to exactly what it held, multipart and versions included', async () => {
    fx = await makeFixture({ drives: 6, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await fx.layer.setBucketVersioning('b', 'Enabled');
    const v1 = bytes(2 * 1024 * 1024, 1);
    const v2 = bytes(100, 2);
    await put(fx.layer, 'b', 'k', v1);
    await put(fx.layer, 'b', 'k', v2, { userMeta: { a: '1' } });
    await fx.layer.deleteObject('b', 'k', {});
    const up = await fx.layer.newMultipartUpload('b', 'mp', {});
    const { putDataFromBuffer } = await import('../src/object/put-data.ts');
    const p1 = await fx.layer.putObjectPart('b', 'mp', up.uploadId, 1, putDataFromBuffer(bytes(5 * 1024 * 1024, 3)));
    const p2 = await fx.layer.putObjectPart('b', 'mp', up.uploadId, 2, putDataFromBuffer(bytes(1234, 4)));
    await fx.layer.completeMultipartUpload('b', 'mp', up.uploadId, [
      { number: 1, etag: p1.etag },
      { number: 2, etag: p2.etag },
    ]);
    for (const d of fx.drives) await d.flush();
    const want = tree(fx.roots[3]!);
    await rm(join(fx.roots[3]!, 'b', 'k'), { recursive: true });
    await rm(join(fx.roots[3]!, 'b', 'mp'), { recursive: true });
    const h = healerOf(fx);
    for (const key of ['k', 'mp']) {
      const r = await h.healObjectAnywhere('b', key, NORMAL);
      expect(r.outcome, r.detail).toBe('healed');
      expect(r.before[3]!.state).toBe('missing');
      expect(r.after[3]!.state).toBe('ok');
    }
    for (const d of fx.drives) await d.flush();
    expect(tree(fx.roots[3]!)).toEqual(want);
    // A second heal finds nothing to do.
    expect((await h.healObjectAnywhere('b', 'mp', { ...NORMAL, deep: true })).outcome).toBe('ok');
  });

  it('heals inline objects, delete markers and outdated metadata', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'small', bytes(1000));
    await fx.layer.updateObjectMetadata('b', 'small', { tags: 'a=b' });
    const shards = [0, 1, 2, 3].map((i) => Buffer.from(journal(fx!, i, 'b', 'small')[0]!.inlineData!));
    // Drive 0 misses the tag update and drive 1 gets a corrupt inline shard.
    const meta0 = join(fx.roots[0]!, 'b', 'small', 'xl.meta');
    const j = journal(fx, 0, 'b', 'small');
    const { encodeXlMeta } = await import('../src/storage/xl-meta.ts');
    writeFileSync(meta0, encodeXlMeta([{ ...j[0]!, tags: '' }]));
    const j1 = journal(fx, 1, 'b', 'small');
    const bad = Buffer.from(j1[0]!.inlineData!);
    bad[20] = bad[20]! ^ 1;
    writeFileSync(join(fx.roots[1]!, 'b', 'small', 'xl.meta'), encodeXlMeta([{ ...j1[0]!, inlineData: bad }]));
    const r = await healerOf(fx).healObjectAnywhere('b', 'small', NORMAL);
    expect(r.outcome, r.detail).toBe('healed');
    expect(r.before.map((d) => d.state)).toEqual(['missing', 'corrupt', 'ok', 'ok']);
    for (let i = 0; i < 4; i++) {
      const v = journal(fx, i, 'b', 'small');
      expect(v).toHaveLength(1);
      expect(v[0]!.tags).toBe('a=b');
      expect(Buffer.from(v[0]!.inlineData!).equals(shards[i]!)).toBe(true);
    }
    expect((await get(fx.layer, 'b', 'small')).equals(bytes(1000))).toBe(true);
    // A delete marker missing on a drive is written there.
    await fx.layer.setBucketVersioning('b', 'Enabled');
    await fx.layer.deleteObject('b', 'small', {});
    const withMarker = journal(fx, 2, 'b', 'small');
    writeFileSync(join(fx.roots[2]!, 'b', 'small', 'xl.meta'), encodeXlMeta(withMarker.filter((v) => v.type !== 'delete')));
    const m = await healerOf(fx).healObjectAnywhere('b', 'small', NORMAL);
    expect(m.outcome, m.detail).toBe('healed');
    expect(journal(fx, 2, 'b', 'small').map((v) => v.type)).toEqual(['delete', 'object']);
  });

  it('refuses when more shards are missing than parity can rebuild, and changes nothing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 1 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(2 * 1024 * 1024));
    for (const d of fx.drives) await d.flush();
    // Two of the four shard files go (parity 1 rebuilds one); their journals stay.
    for (const i of [0, 1]) rmSync(partFile(fx, i, 'b', 'o'));
    const before = fx.roots.map((r) => tree(r));
    const r = await healerOf(fx).healObjectAnywhere('b', 'o', NORMAL);
    expect(r.outcome).toBe('refused');
    expect(r.detail).toMatch(/more shards missing than parity can rebuild: 2 of 4 shards are good, 3 needed/);
    expect(fx.roots.map((x) => tree(x))).toEqual(before);
    // Background heal removes dangling versions (remove), never one that was complete and lost its data.
    const bg = await healerOf(fx).healObjectAnywhere('b', 'o', { ...NORMAL, remove: true });
    expect(bg.outcome).toBe('refused');
    expect(bg.detail).toMatch(/kept until an operator heals with remove=true/);
    expect(fx.roots.map((x) => tree(x))).toEqual(before);
    // An operator's remove=true does.
    const op = await healerOf(fx).healObjectAnywhere('b', 'o', { ...NORMAL, remove: true, removeLost: true });
    expect(op.outcome).toBe('removed');
  });

  it('refuses outright (even with remove) while offline drives could still hold the missing shards', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 1 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(2 * 1024 * 1024));
    for (const d of fx.drives) await d.flush();
    rmSync(partFile(fx, 0, 'b', 'o'));
    await fx.offline(1);
    const before = [0, 2, 3].map((i) => tree(fx!.roots[i]!));
    const r = await healerOf(fx).healObjectAnywhere('b', 'o', { ...NORMAL, remove: true });
    expect(r.outcome).toBe('refused');
    expect(r.detail).toMatch(/more shards missing than parity can rebuild: 2 of 4 shards are good, 3 needed/);
    expect(r.before.map((d) => d.state)).toEqual(['missing', 'offline', 'ok', 'ok']);
    expect([0, 2, 3].map((i) => tree(fx!.roots[i]!))).toEqual(before);
    await fx.online(1);
    const healed = await healerOf(fx).healObjectAnywhere('b', 'o', NORMAL);
    expect(healed.outcome, healed.detail).toBe('healed');
    expect((await get(fx.layer, 'b', 'o')).equals(bytes(2 * 1024 * 1024))).toBe(true);
  });

  it('reports "no-parity object is unrecoverable" for a zero-parity object and changes nothing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 0, rrsParity: 0 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(1024 * 1024 + 5));
    for (const d of fx.drives) await d.flush();
    rmSync(partFile(fx, 2, 'b', 'o'));
    const before = fx.roots.map((r) => tree(r));
    for (const remove of [false, true]) {
      const r = await healerOf(fx).healObjectAnywhere('b', 'o', { ...NORMAL, remove });
      expect(r.outcome).toBe('refused');
      expect(r.detail).toContain('no-parity object is unrecoverable');
      expect(r.parityBlocks).toBe(0);
    }
    expect(fx.roots.map((x) => tree(x))).toEqual(before);
  });

  it('never removes a zero-parity object whose folder is gone from one online drive, even as background heal (remove)', async () => {
    // Issue 27 item 4: the vote put it below quorum (3 of 4 copies, quorum 4) and background heal removed it everywhere.
    fx = await makeFixture({ drives: 4, standardParity: 0, rrsParity: 0 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(1024 * 1024 + 5));
    for (const d of fx.drives) await d.flush();
    rmSync(join(fx.roots[1]!, 'b', 'o'), { recursive: true });
    const before = fx.roots.map((r) => tree(r));
    for (const opts of [NORMAL, { ...NORMAL, remove: true }]) {
      const r = await healerOf(fx).healObjectAnywhere('b', 'o', opts);
      expect(r.outcome).toBe('refused');
      expect(r.detail).toContain('no-parity object is unrecoverable');
    }
    expect(fx.roots.map((x) => tree(x))).toEqual(before);
    for (const i of [0, 2, 3]) expect(journal(fx, i, 'b', 'o')).toHaveLength(1);
  });

  it('dry run reports what it would heal and changes nothing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(1024 * 1024 * 2));
    for (const d of fx.drives) await d.flush();
    await rm(join(fx.roots[1]!, 'b', 'o'), { recursive: true });
    const before = fx.roots.map((r) => tree(r));
    const r = await healerOf(fx).healObjectAnywhere('b', 'o', { ...NORMAL, dryRun: true });
    expect(r.outcome).toBe('would-heal');
    expect(r.before[1]!.state).toBe('missing');
    expect(r.after[1]!.state).toBe('missing');
    expect(fx.roots.map((x) => tree(x))).toEqual(before);
  });

  it('drops the copy of a delete a drive missed (never resurrects), and removes dangling versions only with remove', async () => {
    fx = await makeFixture({ drives: 6, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'gone', bytes(5000));
    await fx.offline(5);
    await fx.layer.deleteObject('b', 'gone', {});
    await fx.online(5);
    // Drive 5 still holds the deleted object: below quorum for good.
    expect(journal(fx, 5, 'b', 'gone')).toHaveLength(1);
    const h = healerOf(fx);
    const r = await h.healObjectAnywhere('b', 'gone', NORMAL);
    expect(r.outcome).toBe('dangling');
    expect(journal(fx, 5, 'b', 'gone')).toHaveLength(1);
    await expect(get(fx.layer, 'b', 'gone')).rejects.toMatchObject({ code: 'NoSuchKey' });
    const rr = await h.healObjectAnywhere('b', 'gone', { ...NORMAL, remove: true });
    expect(rr.outcome).toBe('removed');
    expect(readdirSync(join(fx.roots[5]!, 'b'))).not.toContain('gone');
    await expect(get(fx.layer, 'b', 'gone')).rejects.toMatchObject({ code: 'NoSuchKey' });
  });

  it('remove never takes a dangling version under object lock (legal hold, retention); an unlocked one beside it goes', async () => {
    fx = await makeFixture({ drives: 6, standardParity: 2 });
    await fx.layer.makeBucket('lk', { objectLock: true });
    const future = Date.now() + 30 * 86_400_000;
    await put(fx.layer, 'lk', 'held', bytes(5000), { lock: { legalHold: 'ON' } });
    await put(fx.layer, 'lk', 'retained', bytes(5000), { lock: { mode: 'COMPLIANCE', retainUntil: future } });
    await put(fx.layer, 'lk', 'governed', bytes(5000), { lock: { mode: 'GOVERNANCE', retainUntil: future } });
    await put(fx.layer, 'lk', 'free', bytes(5000));
    // Every copy but drive 5's lost: below read quorum for good.
    for (const k of ['held', 'retained', 'governed', 'free']) for (let i = 0; i < 5; i++) await rm(join(fx.roots[i]!, 'lk', k), { recursive: true });
    const h = healerOf(fx);
    for (const k of ['held', 'retained', 'governed']) {
      const r = await h.healObjectAnywhere('lk', k, { ...NORMAL, remove: true });
      expect(r.outcome, k).toBe('dangling');
      expect(r.detail, k).toMatch(/under object lock kept/);
      expect(journal(fx, 5, 'lk', k), k).toHaveLength(1);
    }
    const rr = await h.healObjectAnywhere('lk', 'free', { ...NORMAL, remove: true });
    expect(rr.outcome).toBe('removed');
    expect(readdirSync(join(fx.roots[5]!, 'lk')).sort()).toEqual(['governed', 'held', 'retained']);
    // Once the lock is gone (retention past, at the lock clock), remove takes it.
    const later = new Healer({ ...healerDeps(fx), lockClock: () => ({ now: future + 1, graceMs: 0 }) });
    expect((await later.healObjectAnywhere('lk', 'retained', { ...NORMAL, remove: true })).outcome).toBe('removed');
    expect((await later.healObjectAnywhere('lk', 'held', { ...NORMAL, remove: true })).outcome).toBe('dangling');
  });

  it('heals a bucket volume missing on a drive and the .svc.sys records', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(10));
    await rm(join(fx.roots[2]!, 'b'), { recursive: true });
    await rm(join(fx.roots[2]!, '.svc.sys', 'buckets'), { recursive: true });
    const h = healerOf(fx);
    const dry = await h.healBucket('b', { dryRun: true, remove: false, recreate: false, deep: false });
    expect(dry.outcome).toBe('would-heal');
    expect(readdirSync(fx.roots[2]!)).not.toContain('b');
    const r = await h.healBucket('b', { dryRun: false, remove: false, recreate: false, deep: false });
    expect(r.outcome, r.detail).toBe('healed');
    expect(r.before.map((d) => d.state)).toEqual(['ok', 'ok', 'missing', 'ok']);
    expect(r.after.map((d) => d.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(readdirSync(join(fx.roots[2]!, '.svc.sys', 'buckets', 'b'))).toContain('.metadata.bin');
    expect((await h.healObjectAnywhere('b', 'o', NORMAL)).outcome).toBe('healed');
    // A volume without a record: dangling, removed with remove.
    for (const root of fx.roots) await readdir(root).then(() => undefined);
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(fx.roots[0]!, 'orphan'));
    const o = await h.healBucket('orphan', { dryRun: false, remove: false, recreate: false, deep: false });
    expect(o.outcome).toBe('dangling');
    const o2 = await h.healBucket('orphan', { dryRun: false, remove: true, recreate: false, deep: false });
    expect(o2.outcome).toBe('removed');
    expect(readdirSync(fx.roots[0]!)).not.toContain('orphan');
  });
});
