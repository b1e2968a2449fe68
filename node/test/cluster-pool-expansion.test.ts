/**
 * Issue 18 in the mount-namespace cluster harness: a 4-node cluster (one
 * pool, nodes 1–4 × 2 drives) grows by a second pool of 4 new nodes (5–8 ×
 * 3 drives). Every node restarts with the second volume argument appended.
 * Before any node reports ready the new pool holds every bucket; PUTs to the
 * old buckets through any node succeed and land on the new pool; old objects
 * read and listings show both, through old and new nodes alike.
 *
 * The new pool has more drives per node: on this one file system every
 * drive reports the same free bytes, so its larger usable share (K = 8 of 12
 * against 4 of 8) is what makes it the pool with the most free space, as
 * fresh disks would in a real expansion.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetBucketTaggingCommand,
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  PutBucketTaggingCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { bodyOf, keysOf } from './helpers/s3-read.ts';

const supported = canUseMountNamespaces();

describe.skipIf(!supported)('4-node cluster grows to two pools of 4 nodes (real processes)', () => {
  let cluster: TestCluster;
  const s3 = (k: number): S3Client => cluster.s3(k);
  const body = (k: number, bucket: string, key: string) => bodyOf(s3(k), bucket, key);
  const keys = (k: number, bucket: string) => keysOf(s3(k), bucket);
  /** Every drive of the new pool (nodes 5–8 × 3) holds the object's xl.meta. */
  const onNewPool = (bucket: string, key: string) =>
    cluster.nodesOf(1).every((k) => [1, 2, 3].every((d) => existsSync(join(cluster.drivePath(k, 1, d), bucket, key, 'xl.meta'))));

  beforeAll(async () => {
    cluster = await TestCluster.create({
      nodes: 8,
      drivesPerNode: 2,
      pools: [
        { nodes: [1, 4], drivesPerNode: 2 },
        { nodes: [5, 8], drivesPerNode: 3 },
      ],
    });
    cluster.usePools(1);
  }, 30_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('buckets reach the new pool before ready; PUTs land there; old objects and listings stay whole', async () => {
    await Promise.all(cluster.activeNodes().map((k) => cluster.start(k)));
    expect(cluster.activeNodes()).toEqual([1, 2, 3, 4]);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 60_000)));
    await s3(1).send(new CreateBucketCommand({ Bucket: 'grow' }));
    await s3(1).send(new PutObjectCommand({ Bucket: 'grow', Key: 'a', Body: 'old a' }));
    await s3(2).send(new CreateBucketCommand({ Bucket: 'versioned' }));
    await s3(2).send(new PutBucketVersioningCommand({ Bucket: 'versioned', VersioningConfiguration: { Status: 'Enabled' } }));
    await s3(2).send(new PutObjectCommand({ Bucket: 'versioned', Key: 'a', Body: 'v1' }));
    await s3(3).send(new PutObjectCommand({ Bucket: 'versioned', Key: 'a', Body: 'v2' }));
    await s3(4).send(new CreateBucketCommand({ Bucket: 'tagged' }));
    await s3(4).send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'tier', Value: 'gold' }] } }));
    await s3(4).send(new PutObjectCommand({ Bucket: 'tagged', Key: 'a', Body: 'tagged a' }));

    cluster.usePools(2);
    await cluster.restartAll();
    expect(cluster.activeNodes()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await Promise.all(cluster.activeNodes().map((k) => cluster.waitReady(k, 120_000)));
    // Ready means the new pool already holds every bucket's volume.
    for (const b of ['grow', 'versioned', 'tagged']) {
      for (const k of cluster.nodesOf(1)) for (const d of [1, 2, 3]) expect(existsSync(join(cluster.drivePath(k, 1, d), b))).toBe(true);
    }

    // PUTs of new keys through old and new nodes all succeed, on the new pool.
    for (const [i, k] of [1, 5, 2, 6, 3, 7].entries()) {
      await s3(k).send(new PutObjectCommand({ Bucket: 'grow', Key: `b${i + 1}`, Body: `new ${i + 1}` }));
      expect(onNewPool('grow', `b${i + 1}`)).toBe(true);
    }
    expect(await body(8, 'grow', 'a')).toBe('old a');
    expect(await body(4, 'grow', 'b2')).toBe('new 2');
    expect(await keys(6, 'grow')).toEqual(['a', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6']);

    await s3(5).send(new PutObjectCommand({ Bucket: 'versioned', Key: 'b', Body: 'new b' }));
    expect(onNewPool('versioned', 'b')).toBe(true);
    expect((await s3(7).send(new GetBucketVersioningCommand({ Bucket: 'versioned' }))).Status).toBe('Enabled');
    expect(await body(7, 'versioned', 'a')).toBe('v2');
    const vs = await s3(8).send(new ListObjectVersionsCommand({ Bucket: 'versioned' }));
    expect((vs.Versions ?? []).map((v) => [v.Key, v.IsLatest])).toEqual([
      ['a', true],
      ['a', false],
      ['b', true],
    ]);

    await s3(6).send(new PutObjectCommand({ Bucket: 'tagged', Key: 'b', Body: 'tagged b' }));
    expect(onNewPool('tagged', 'b')).toBe(true);
    expect((await s3(5).send(new GetBucketTaggingCommand({ Bucket: 'tagged' }))).TagSet).toEqual([{ Key: 'tier', Value: 'gold' }]);
    expect(await keys(1, 'tagged')).toEqual(['a', 'b']);
  }, 300_000);
});
