/**
 * Per-pool admission over two real pools: a pool closed to new objects
 * (what decommission does to its source pool) gets no new object, upload or
 * delete marker; writes of keys living there get `SlowDown`, also when the
 * pool closed while the PUT was being staged; uploads already started there
 * drain; reopening restores placement by free space.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putDataFromBuffer, putDataFromStream } from '../src/object/put-data.ts';
import { bytes, get, put } from './engine-helpers.ts';
import { ManualClock } from '../src/util/clock.ts';
import { codeOf } from './helpers/error-code.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';

describe('pool admission', () => {
  let fx: PoolsFixture;
  // Same file system, so free bytes are equal: usable free is raw × K/N, and
  // pool 1 (EC:1 on 4 drives, 3/4 usable) beats pool 0 (EC:2, 1/2 usable).
  beforeEach(async () => {
    fx = await makePoolsFixture([
      { drives: 4, standardParity: 2 },
      { drives: 4, standardParity: 1 },
    ]);
    await fx.layer.makeBucket('b');
  });
  afterEach(async () => fx.cleanup());

  const poolOf = (key: string): number[] => [0, 1].filter((p) => existsSync(join(fx.roots[p]![0]!, 'b', key, 'xl.meta')));

  it('a closed pool takes no new objects; keys living there get SlowDown; reopening restores placement', async () => {
    const l = fx.layer;
    await put(l, 'b', 'on-1', bytes(1000));
    expect(poolOf('on-1')).toEqual([1]);
    l.setPoolAdmission(1, false, 'decommission');
    expect(l.poolAdmission()).toEqual([
      { pool: 0, admitting: true },
      { pool: 1, admitting: false, reason: 'decommission' },
    ]);
    await put(l, 'b', 'new', bytes(1000, 2));
    expect(poolOf('new')).toEqual([0]);
    const up = await l.newMultipartUpload('b', 'new-upload', {});
    expect(Buffer.from(up.uploadId, 'base64url').toString().startsWith('0.')).toBe(true);
    // The key lives on the closed pool: overwrite and new upload wait.
    expect(await codeOf(put(l, 'b', 'on-1', bytes(10)))).toBe('SlowDown');
    expect(await codeOf(l.newMultipartUpload('b', 'on-1', {}))).toBe('SlowDown');
    // Reads and permanent deletes still work there.
    expect((await get(l, 'b', 'on-1')).equals(bytes(1000))).toBe(true);
    await l.deleteObject('b', 'on-1', {});
    expect(poolOf('on-1')).toEqual([]);
    // Versioned: a delete marker is a new version, refused on the closed pool.
    await l.setBucketVersioning('b', 'Enabled');
    l.setPoolAdmission(1, true);
    await put(l, 'b', 'v', bytes(10));
    expect(poolOf('v')).toEqual([1]);
    l.setPoolAdmission(1, false, 'decommission');
    expect(await codeOf(l.deleteObject('b', 'v', {}))).toBe('SlowDown');
    // A delete marker for a key that exists nowhere goes to an admitting pool.
    expect((await l.deleteObject('b', 'ghost', {})).deleteMarker).toBe(true);
    expect(poolOf('ghost')).toEqual([0]);
    l.setPoolAdmission(1, true);
    await put(l, 'b', 'after', bytes(10));
    expect(poolOf('after')).toEqual([1]);
    expect(await codeOf(Promise.resolve().then(() => l.setPoolAdmission(2, false)))).toBe('InvalidArgument');
  });

  it('a PUT staged before its pool closed is refused at commit and leaves nothing behind', async () => {
    const l = fx.layer;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const body = bytes(3 * 1024 * 1024);
    async function* slow(): AsyncGenerator<Uint8Array> {
      yield body.subarray(0, 1024 * 1024);
      await gate;
      yield body.subarray(1024 * 1024);
    }
    const pending = codeOf(l.putObject('b', 'staged', putDataFromStream(slow(), body.length), {}));
    await new Promise((r) => setTimeout(r, 50));
    l.setPoolAdmission(1, false, 'decommission');
    release();
    expect(await pending).toBe('SlowDown');
    expect(poolOf('staged')).toEqual([]);
    for (const r of fx.roots[1]!) expect((await readdir(join(r, '.svc.sys/tmp'))).filter((n) => n !== '.trash')).toEqual([]);
  });

  it('an upload started on a pool before it closed still completes there', async () => {
    const l = fx.layer;
    const up = await l.newMultipartUpload('b', 'drain', {});
    expect(Buffer.from(up.uploadId, 'base64url').toString().startsWith('1.')).toBe(true);
    l.setPoolAdmission(1, false, 'decommission');
    const p1 = await l.putObjectPart('b', 'drain', up.uploadId, 1, putDataFromBuffer(bytes(100)));
    await l.completeMultipartUpload('b', 'drain', up.uploadId, [{ number: 1, etag: p1.etag }]);
    expect(poolOf('drain')).toEqual([1]);
  });

  it('with every pool closed a new object gets SlowDown', async () => {
    fx.layer.setPoolAdmission(0, false);
    fx.layer.setPoolAdmission(1, false);
    expect(await codeOf(put(fx.layer, 'b', 'x', bytes(10)))).toBe('SlowDown');
  });
});

describe.skipIf(!canMountTmpfs())('placement within one free-space sample', () => {
  let fx: PoolsFixture | undefined;
  afterEach(async () => fx?.cleanup());

  it('a burst of new objects on a frozen clock takes turns between two equal pools instead of piling onto one', async () => {
    // Each drive its own 16 MiB tmpfs: both pools have 32 MiB usable at EC:2.
    fx = await makePoolsFixture(
      [
        { drives: 4, standardParity: 2 },
        { drives: 4, standardParity: 2 },
      ],
      2,
      { tmpfsBytes: 16 * 1024 * 1024 },
    );
    // The clock never moves: every placement below uses the first sample of each pool's free space.
    const l = await fx.open(2, { clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')) });
    await l.makeBucket('burst');
    const roots = fx.roots;
    for (let i = 0; i < 24; i++) await put(l, 'burst', `k${i}`, bytes(512 * 1024, i));
    const on = [0, 1].map((p) => Array.from({ length: 24 }, (_, i) => i).filter((i) => existsSync(join(roots[p]![0]!, 'burst', `k${i}`, 'xl.meta'))).length);
    expect(on[0]! + on[1]!).toBe(24);
    // 12 MiB in all, 1 MiB apart at most once the first few make up for pool 0's system records.
    expect(Math.abs(on[0]! - on[1]!)).toBeLessThanOrEqual(4);
  });
});
