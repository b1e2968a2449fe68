/**
 * Bucket replication between two svc sites, each a real `svc server`
 * process with four drives:
 *
 * 1. 1 000 objects of mixed sizes — multipart uploads, several versions of
 *    a key, tags, user metadata, retention and legal holds, SSE-S3, delete
 *    markers — written to A all appear on B with the same version ids,
 *    ETags, metadata, tags and lock state; A's versions read COMPLETED, B's
 *    REPLICA.
 * 2. The target down for a minute while writes go on, then back: the queue
 *    drains and nothing is missing. Then the source killed (SIGKILL) with a
 *    full queue and started again: nothing is missing either.
 */
import { randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutBucketReplicationCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,

  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kmsKeyLine } from './helpers/governance.ts';
import { allVersions, rowLine, ruleFor, Site, until } from './helpers/replication.ts';

const OBJECTS = 1000;
const MiB = 1024 * 1024;

async function pool<T>(items: readonly T[], n: number, fn: (x: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        await fn(items[i]!, i);
      }
    }),
  );
}

async function setUp(a: Site, b: Site, src: string, dst: string, lock = false): Promise<string> {
  await a.s3.send(new CreateBucketCommand({ Bucket: src, ...(lock ? { ObjectLockEnabledForBucket: true } : {}) }));
  await b.s3.send(new CreateBucketCommand({ Bucket: dst, ...(lock ? { ObjectLockEnabledForBucket: true } : {}) }));
  if (!lock) {
    for (const [s, bk] of [
      [a.s3, src],
      [b.s3, dst],
    ] as const) {
      await s.send(new (await import('@aws-sdk/client-s3')).PutBucketVersioningCommand({ Bucket: bk, VersioningConfiguration: { Status: 'Enabled' } }));
    }
  }
  const arn = await a.addTarget(src, b, dst);
  await a.s3.send(new PutBucketReplicationCommand({ Bucket: src, ReplicationConfiguration: { Role: '', Rules: [ruleFor(arn)] } }));
  return arn;
}

async function drained(a: Site, bucket: string, ms: number): Promise<void> {
  await until(
    `${a.name}'s replication queue of ${bucket} to drain`,
    async () => {
      const t = (await a.replStatus(bucket)).targets[0]!;
      return t.queued.count === 0 && t.failed.count === 0 ? true : undefined;
    },
    ms,
    250,
  );
}

async function sameVersions(a: Site, src: string, b: Site, dst: string, ms: number): Promise<string[]> {
  const want = (await allVersions(a.s3, src)).map(rowLine);
  let got: string[] = [];
  await until(
    `${b.name}/${dst} to hold ${want.length} versions`,
    async () => {
      got = (await allVersions(b.s3, dst)).map(rowLine);
      return got.length >= want.length ? true : undefined;
    },
    ms,
    500,
  ).catch(() => undefined);
  expect(got).toEqual(want);
  return want;
}

describe('replication between two svc sites', () => {
  let a: Site;
  let b: Site;

  beforeAll(async () => {
    // Both sites share a key store key id for SSE-S3 (each seals with its own key).
    [a, b] = await Promise.all([Site.start('a', { SVC_KMS_SECRET_KEY: kmsKeyLine('site-a') }), Site.start('b', { SVC_KMS_SECRET_KEY: kmsKeyLine('site-b') })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('1 000 objects of every kind appear on B with the same version ids and metadata; statuses COMPLETED / REPLICA', async () => {
    await setUp(a, b, 'src', 'dst', true);
    const s3 = a.s3;
    const retain = new Date(Date.now() + 2 * 86_400_000);
    retain.setMilliseconds(0);
    // Mixed sizes: mostly small, some of a few hundred KiB and 1-3 MiB.
    const sizes = Array.from({ length: OBJECTS }, (_, i) => (i % 50 === 7 ? MiB + (i % 3) * MiB : i % 10 === 3 ? 200 * 1024 + i : 100 + ((i * 37) % 8000)));
    await pool(sizes, 8, async (size, i) => {
      const key = `obj/${String(i).padStart(4, '0')}${i % 13 === 0 ? ' with space+plus' : ''}`;
      await s3.send(
        new PutObjectCommand({
          Bucket: 'src',
          Key: key,
          Body: randomBytes(size),
          ContentType: i % 2 === 0 ? 'application/x-test' : 'text/plain',
          Metadata: { index: String(i), ...(i % 7 === 0 ? { note: 'seventh' } : {}) },
          ...(i % 3 === 0 ? { Tagging: `site=a&n=${i}` } : {}),
          ...(i % 10 === 0 ? { ObjectLockMode: 'GOVERNANCE' as const, ObjectLockRetainUntilDate: retain } : {}),
          ...(i % 25 === 0 ? { ObjectLockLegalHoldStatus: 'ON' as const } : {}),
          ...(i % 40 === 1 ? { ServerSideEncryption: 'AES256' as const } : {}),
        }),
      );
      // Second versions of every 10th key, delete markers on every 20th.
      if (i % 10 === 5) await s3.send(new PutObjectCommand({ Bucket: 'src', Key: key, Body: `second version of ${key}` }));
      if (i % 20 === 9) await s3.send(new DeleteObjectCommand({ Bucket: 'src', Key: key }));
    });
    // Multipart uploads (replicated part by part, same ETag).
    for (let m = 0; m < 3; m++) {
      const key = `mp/${m}`;
      const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'src', Key: key, Metadata: { kind: 'multipart' }, Tagging: 'mp=yes' }));
      const parts = [];
      for (let p = 1; p <= 3; p++) {
        const r = await s3.send(new UploadPartCommand({ Bucket: 'src', Key: key, UploadId: up.UploadId!, PartNumber: p, Body: randomBytes(p < 3 ? 5 * MiB : 123_457) }));
        parts.push({ PartNumber: p, ETag: r.ETag! });
      }
      await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'src', Key: key, UploadId: up.UploadId!, MultipartUpload: { Parts: parts } }));
    }
    // A legal hold set after the write is part of the version too (copied when the version is).

    await drained(a, 'src', 240_000);
    const rows = await sameVersions(a, 'src', b, 'dst', 60_000);
    expect(rows.length).toBe(OBJECTS + 100 + 50 + 3);

    // Every version: same metadata, tags, lock, encryption; COMPLETED on A, REPLICA on B.
    const versions = (await allVersions(a.s3, 'src')).filter((v) => !v.deleteMarker);
    await pool(versions, 8, async (v) => {
      const [ha, hb] = await Promise.all([s3.send(new HeadObjectCommand({ Bucket: 'src', Key: v.key, VersionId: v.versionId })), b.s3.send(new HeadObjectCommand({ Bucket: 'dst', Key: v.key, VersionId: v.versionId }))]);
      expect(ha.ReplicationStatus, v.key).toBe('COMPLETED');
      expect(hb.ReplicationStatus, v.key).toBe('REPLICA');
      expect(hb.VersionId).toBe(v.versionId);
      expect(hb.LastModified?.getTime()).toBe(ha.LastModified?.getTime());
      expect(hb.ContentLength).toBe(ha.ContentLength);
      expect(hb.ContentType).toBe(ha.ContentType);
      expect(hb.Metadata).toEqual(ha.Metadata);
      expect(hb.TagCount).toBe(ha.TagCount);
      expect(hb.ObjectLockMode).toBe(ha.ObjectLockMode);
      expect(hb.ObjectLockRetainUntilDate?.getTime()).toBe(ha.ObjectLockRetainUntilDate?.getTime());
      expect(hb.ObjectLockLegalHoldStatus).toBe(ha.ObjectLockLegalHoldStatus);
      expect(hb.ServerSideEncryption).toBe(ha.ServerSideEncryption);
      if (ha.ServerSideEncryption === undefined) expect(hb.ETag).toBe(ha.ETag);
    });
    // Spot checks that the bytes are the bytes (multipart and encrypted ones included).
    const sample = versions.filter((v, i) => v.key.startsWith('mp/') || i % 97 === 0 || v.key.endsWith('0041'));
    for (const v of sample) {
      const [ga, gb] = await Promise.all([s3.send(new GetObjectCommand({ Bucket: 'src', Key: v.key, VersionId: v.versionId })), b.s3.send(new GetObjectCommand({ Bucket: 'dst', Key: v.key, VersionId: v.versionId }))]);
      expect(Buffer.from(await gb.Body!.transformToByteArray()).equals(Buffer.from(await ga.Body!.transformToByteArray())), v.key).toBe(true);
    }
    const t = (await a.replStatus('src')).targets[0]!;
    expect(t).toMatchObject({ online: true, svcTarget: true, lagMs: 0, failed: { count: 0, bytes: 0 } });
    expect(t.completed.count).toBe(rows.length);
    // Replicas are never replicated back: B has no queue for dst.
    expect((await b.replStatus('dst')).targets).toEqual([]);
    // The legal hold of a replicated version is B's own from here on (it blocks deletion there).
    await s3.send(new PutObjectLegalHoldCommand({ Bucket: 'src', Key: 'obj/0001', LegalHold: { Status: 'OFF' } }));
  }, 600_000);

  it('target down for a minute while writes go on, then the source killed with a full queue: nothing missing', async () => {
    await setUp(a, b, 'outage', 'outage-dr');
    await b.stop();
    const acked = new Map<string, string>();
    const stoppedAt = Date.now();
    // Writes through the minute the target is down.
    let i = 0;
    while (Date.now() - stoppedAt < 60_000) {
      const batch = Array.from({ length: 10 }, () => i++);
      await Promise.all(
        batch.map(async (n) => {
          const key = `down/${String(n).padStart(4, '0')}`;
          const r = await a.s3.send(new PutObjectCommand({ Bucket: 'outage', Key: key, Body: randomBytes(1000 + n) }));
          acked.set(key, r.VersionId!);
        }),
      );
      await new Promise((r) => setTimeout(r, 500));
    }
    const t = (await a.replStatus('outage')).targets[0]!;
    expect(t.online).toBe(false);
    expect(t.queued.count).toBe(acked.size);
    expect(t.lagMs).toBeGreaterThan(50_000);
    expect(t.lastError).toBeDefined();
    await b.start();
    await drained(a, 'outage', 120_000);
    await sameVersions(a, 'outage', b, 'outage-dr', 30_000);

    // The target down again, a full queue, and the source killed mid-stream.
    await b.stop();
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing) {
        const key = `kill/${String(n++).padStart(4, '0')}`;
        try {
          const r = await a.s3.send(new PutObjectCommand({ Bucket: 'outage', Key: key, Body: randomBytes(2000) }));
          acked.set(key, r.VersionId!);
        } catch {
          // cut off by the kill: the test counts what A acknowledged
        }
      }
    })();
    await until('a queue of 300', async () => ((await a.replStatus('outage')).targets[0]!.queued.count >= 300 ? true : undefined), 120_000, 100);
    await a.stop('SIGKILL');
    writing = false;
    await writer;
    await a.start();
    // Every write A acknowledged before the kill waits in the restarted queue (a write cut off
    // between its queue entry and its commit is settled away: it never happened).
    const afterRestart = (await a.replStatus('outage')).targets[0]!;
    const ackedKill = [...acked.keys()].filter((k) => k.startsWith('kill/')).length;
    expect(ackedKill).toBeGreaterThanOrEqual(299);
    expect(afterRestart.queued.count).toBeGreaterThanOrEqual(ackedKill);
    await b.start();
    await drained(a, 'outage', 180_000);
    const rows = await sameVersions(a, 'outage', b, 'outage-dr', 30_000);
    const onB = new Set(rows.map((r) => r.split(' ').slice(0, 2).join(' ')));
    for (const [k, v] of acked) expect(onB.has(`${k} ${v}`), k).toBe(true);
    for (const [k, v] of [...acked].filter((_, n) => n % 50 === 0)) expect((await a.s3.send(new HeadObjectCommand({ Bucket: 'outage', Key: k, VersionId: v }))).ReplicationStatus).toBe('COMPLETED');
  }, 900_000);
});

