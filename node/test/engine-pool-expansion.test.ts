/**
 * Issue 18 at the engine level, over real drives: a deployment grows from
 * one pool to two. Every bucket (unversioned, versioned, tagged, with
 * configuration) reaches the new pool — on demand when a write targets it,
 * and by the bucket sync pass that start-up and the worker run; new objects
 * land on the pool with the most free space (the new one); old objects
 * read; listings show both. A bucket created while a pool's drives were
 * unreachable is completed the same way. A pool that refuses the bucket
 * gives a clear error naming the pool and why, never ErasureReadQuorum.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketRecordPath } from '../src/object/bucket-sync.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import { ManualClock } from '../src/util/clock.ts';
import { SvcError } from '../src/util/errors.ts';
import { bytes, get, put } from './engine-helpers.ts';
import { codeOf } from './helpers/error-code.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

describe('growing by a pool', () => {
  let fx: PoolsFixture;
  // Same file system for both pools: usable free is raw × K/N, so pool 1
  // (EC:1 on 4 drives, 3/4 usable) has more than pool 0 (EC:2, 1/2 usable).
  beforeEach(async () => {
    fx = await makePoolsFixture(
      [
        { drives: 4, standardParity: 2 },
        { drives: 4, standardParity: 1 },
      ],
      1,
    );
  });
  afterEach(async () => fx.cleanup());

  /** Pools whose first drive holds `bucket/key`. */
  const poolsOf = (bucket: string, key: string): number[] => [0, 1].filter((p) => existsSync(join(fx.roots[p]![0]!, bucket, key, 'xl.meta')));
  const volumeOnEveryDrive = (pool: number, bucket: string) => fx.roots[pool]!.every((r) => existsSync(join(r, bucket)));

  async function seed(): Promise<void> {
    const l = fx.layer;
    await l.makeBucket('plain');
    await l.makeBucket('versioned');
    await l.setBucketVersioning('versioned', 'Enabled');
    await l.makeBucket('tagged');
    await l.setBucketTags('tagged', 'team=storage&env=test');
    await l.setBucketConfig('tagged', 'cors', new Uint8Array(Buffer.from('<CORSConfiguration/>')));
    for (const b of ['plain', 'versioned', 'tagged']) await put(l, b, 'a', bytes(5000, 1));
    await put(l, 'versioned', 'a', bytes(6000, 2));
  }

  it('a write to an old bucket reaches the new pool at once; old objects read; listings show both', async () => {
    await seed();
    const l = await fx.open(2);
    for (const b of ['plain', 'versioned', 'tagged']) {
      expect(volumeOnEveryDrive(1, b)).toBe(false);
      await put(l, b, 'b', bytes(7000, 3));
      expect(poolsOf(b, 'b')).toEqual([1]);
      expect(poolsOf(b, 'a')).toEqual([0]);
      expect(volumeOnEveryDrive(1, b)).toBe(true);
      expect((await get(l, b, 'a')).equals(bytes(b === 'versioned' ? 6000 : 5000, b === 'versioned' ? 2 : 1))).toBe(true);
      expect((await get(l, b, 'b')).equals(bytes(7000, 3))).toBe(true);
      expect((await l.listObjects(b, { maxKeys: 10 })).objects.map((o) => o.name)).toEqual(['a', 'b']);
    }
    const versions = await l.listObjectVersions('versioned', { maxKeys: 10 });
    expect(versions.versions.map((v) => [v.name, v.isLatest])).toEqual([
      ['a', true],
      ['a', false],
      ['b', true],
    ]);
    // A new version of an old key stays with the key's pool.
    await put(l, 'versioned', 'a', bytes(100, 4));
    expect(poolsOf('versioned', 'a')).toEqual([0]);
    expect((await l.listObjectVersions('versioned', { maxKeys: 10 })).versions.filter((v) => v.name === 'a')).toHaveLength(3);
    // Multipart uploads and delete markers of new keys go to the new pool too.
    const up = await l.newMultipartUpload('plain', 'mp', {});
    const part = await l.putObjectPart('plain', 'mp', up.uploadId, 1, putDataFromBuffer(bytes(1000, 5)));
    await l.completeMultipartUpload('plain', 'mp', up.uploadId, [{ number: 1, etag: part.etag }]);
    expect(poolsOf('plain', 'mp')).toEqual([1]);
    expect((await l.deleteObject('versioned', 'never-there', {})).deleteMarker).toBe(true);
    expect(poolsOf('versioned', 'never-there')).toEqual([1]);
    expect((await l.listBuckets()).map((b) => b.name)).toEqual(['plain', 'tagged', 'versioned']);
  });

  it('the sync pass gives the new pool every bucket, record and configuration before any write', async () => {
    await seed();
    const l = await fx.open(2);
    expect(await l.bucketSync.attempt()).toBeUndefined();
    const report = l.bucketSync.lastReport!;
    expect(report).toMatchObject({ buckets: 3, volumesMade: 12, recordsCopied: 3, issues: [] });
    for (const b of ['plain', 'versioned', 'tagged']) {
      expect(volumeOnEveryDrive(1, b)).toBe(true);
      expect((await l.sysRecords.inspect(bucketRecordPath(b))).pools.map((p) => p.state)).toEqual(['current', 'current']);
    }
    // The new pool alone answers for the buckets' metadata.
    await fx.poolOffline(0);
    const alone = await fx.open(2);
    expect(await alone.getBucketInfo('versioned')).toMatchObject({ versioning: 'Enabled' });
    expect(await alone.getBucketInfo('tagged')).toMatchObject({ tags: 'team=storage&env=test' });
    expect(Buffer.from((await alone.getBucketConfig('tagged', 'cors'))!).toString()).toBe('<CORSConfiguration/>');
    await fx.poolOnline(0);
    // A second pass finds nothing to do.
    const again = await fx.open(2);
    expect(await again.bucketSync.pass()).toMatchObject({ volumesMade: 0, recordsCopied: 0, issues: [] });
    // Deleting a bucket removes it from both pools.
    await again.deleteObject('plain', 'a', {});
    await again.deleteBucket('plain');
    expect([0, 1].some((p) => fx.roots[p]!.some((r) => existsSync(join(r, 'plain'))))).toBe(false);
    expect(await codeOf(again.getBucketInfo('plain'))).toBe('NoSuchBucket');
  });

  it('a bucket created while one pool was unreachable is completed when the pool is back', async () => {
    const l = await fx.open(2);
    await fx.poolOffline(1);
    await l.makeBucket('during');
    await l.setBucketVersioning('during', 'Enabled');
    await l.setBucketTags('during', 'made=degraded');
    // (A PUT needs every pool to answer whether it holds the key: none while pool 1 is away.)
    expect(await codeOf(put(l, 'during', 'early', bytes(10)))).toBe('ErasureReadQuorum');
    await fx.poolOnline(1);
    expect((await l.sysRecords.inspect(bucketRecordPath('during'))).pools.map((p) => p.state)).toEqual(['current', 'missing']);
    // The pass completes the pool: volume and the newest record.
    const r = await l.bucketSync.pass();
    expect(r.issues).toEqual([]);
    expect(volumeOnEveryDrive(1, 'during')).toBe(true);
    await put(l, 'during', 'late', bytes(3000, 7));
    expect(poolsOf('during', 'late')).toEqual([1]);
    await put(l, 'during', 'later', bytes(3000, 6));
    expect((await l.listObjects('during', { maxKeys: 10 })).objects.map((o) => o.name)).toEqual(['late', 'later']);
    await fx.poolOffline(0);
    const alone = await fx.open(2);
    expect(await alone.getBucketInfo('during')).toMatchObject({ versioning: 'Enabled', tags: 'made=degraded' });
  });

  it('a bucket created while one pool was unreachable takes writes there as soon as it is back, without waiting for a pass', async () => {
    const l = await fx.open(2);
    await fx.poolOffline(1);
    await l.makeBucket('eager');
    await fx.poolOnline(1);
    await put(l, 'eager', 'k', bytes(2000, 8));
    expect(poolsOf('eager', 'k')).toEqual([1]);
    expect((await get(l, 'eager', 'k')).equals(bytes(2000, 8))).toBe(true);
  });

  it('the sync worker passes at start, again soon after a change missed a pool, and otherwise every interval', async () => {
    await seed();
    const clock = new ManualClock(Date.now());
    const l = await fx.open(2, { clock });
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
      expect(cond()).toBe(true);
    };
    l.bucketSync.worker.start();
    await until(() => l.bucketSync.worker.status().progress.passes === 1);
    expect(volumeOnEveryDrive(1, 'plain')).toBe(true);
    expect(l.bucketSync.worker.state).toBe('idle');

    // A create that misses pool 1 marks the sync dirty: the next pass comes
    // 30 s after the last, not 10 min.
    await fx.poolOffline(1);
    await l.makeBucket('missed');
    await fx.poolOnline(1);
    await clock.advance(29_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(l.bucketSync.worker.status().progress.passes).toBe(1);
    await clock.advance(1_000);
    await until(() => l.bucketSync.worker.status().progress.passes === 2);
    expect(volumeOnEveryDrive(1, 'missed')).toBe(true);
    // Nothing missed since: the next pass waits for the full interval.
    await clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(l.bucketSync.worker.status().progress.passes).toBe(2);
    await clock.advance(9 * 60_000);
    await until(() => l.bucketSync.worker.status().progress.passes === 3);
    await l.bucketSync.worker.stop();
    expect(l.bucketSync.worker.state).toBe('stopped');
  });

  it('a pool that refuses the bucket: writes fall back, or fail with a clear error naming the pool; the sync reports it', async () => {
    await seed();
    // Pool 1's drives answer but refuse to create volumes (a read-only mount).
    const refuse = { step: (s: string) => (s === 'make-vol' ? Promise.reject(new SvcError('DiskNotFound', 'drive error EROFS')) : undefined) };
    const l = await fx.open(2, { driveHooks: (pool) => (pool === 1 ? refuse : undefined) });
    const note = await l.bucketSync.attempt();
    expect(note).toMatch(/^bucket sync: pool 1 \(.*p1\/d\{0\.\.\.3\}\): bucket "plain" not present: set 0 has the volume on 0 of 4 drives, 3 needed \(.*DiskNotFound: drive error EROFS/);
    expect(l.bucketSync.issues().filter((i) => i.kind === 'volume').map((i) => [i.pool, i.bucket, i.blocking])).toEqual([
      [1, 'plain', true],
      [1, 'tagged', true],
      [1, 'versioned', true],
    ]);
    // Pool 1 has the most free space but cannot take the bucket: the write lands on pool 0.
    await put(l, 'plain', 'fallback', bytes(100));
    expect(poolsOf('plain', 'fallback')).toEqual([0]);
    // With pool 0 closed to new objects there is nowhere else: a clear error.
    l.setPoolAdmission(0, false, 'decommission');
    const err = await put(l, 'plain', 'nowhere', bytes(100)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('XSvcBucketNotOnPool');
    expect((err as SvcError).message).toMatch(/bucket "plain" cannot be made present on pool 1 .*EROFS/);
  });
});
