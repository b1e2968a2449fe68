/**
 * Replication from svc to an S3 service that is not svc: a Ceph RGW from
 * Debian's packages on loopback (`e2e/rgw/rgw.sh`). RGW ignores svc's
 * replication headers and gives each copy a version id of its own; svc
 * records it on the source version, so a replicated version delete removes
 * the right version there. Content, metadata, tags, multipart uploads and
 * delete markers arrive; the source reads COMPLETED.
 */
import { randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvcCommand } from './svc-process.ts';
import { ROOT, Site, until } from './helpers/replication.ts';
import { type Rgw, startRgw } from './helpers/rgw.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

describe('replication to Ceph RGW', () => {
  let a: Site;
  let rgw: Rgw;
  let r3: S3Client;

  beforeAll(async () => {
    [a, rgw] = await Promise.all([Site.start('a'), startRgw()]);
    r3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: rgw.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: rgw.accessKey, secretAccessKey: rgw.secretKey }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  }, 180_000);

  afterAll(async () => {
    r3?.destroy();
    await Promise.all([a?.close(), rgw?.stop()]);
  });

  it('copies versions, metadata, tags, multipart uploads and deletes to RGW', async () => {
    await a.s3.send(new CreateBucketCommand({ Bucket: 'to-ceph' }));
    await a.s3.send(new PutBucketVersioningCommand({ Bucket: 'to-ceph', VersioningConfiguration: { Status: 'Enabled' } }));
    await r3.send(new CreateBucketCommand({ Bucket: 'from-svc' }));
    const cli = (args: string[]) => runSvcCommand(args, { SVC_ENDPOINT: a.endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: a.work });
    const remote = `http://${rgw.accessKey}:${rgw.secretKey}@${rgw.hostPort}/from-svc`;
    // RGW's bucket is not versioned yet: refused.
    const refused = await cli(['replicate', 'add', 'to-ceph', '--remote-bucket', remote]);
    expect(refused.code).not.toBe(0);
    expect(refused.err + refused.out).toMatch(/versioning/);
    await r3.send(new PutBucketVersioningCommand({ Bucket: 'from-svc', VersioningConfiguration: { Status: 'Enabled' } }));
    const add = await cli(['replicate', 'add', 'to-ceph', '--remote-bucket', remote, '--replicate', 'delete,delete-marker']);
    expect(add.code, add.err).toBe(0);

    const bodies = new Map<string, Buffer>();
    for (let i = 0; i < 40; i++) {
      const key = `doc/${i}${i % 9 === 0 ? ' spaced+plus' : ''}`;
      const body = randomBytes(100 + i * 997);
      bodies.set(key, body);
      await a.s3.send(new PutObjectCommand({ Bucket: 'to-ceph', Key: key, Body: body, ContentType: 'application/x-doc', Metadata: { n: String(i) }, ...(i % 2 === 0 ? { Tagging: `even=yes&i=${i}` } : {}) }));
    }
    const up = await a.s3.send(new CreateMultipartUploadCommand({ Bucket: 'to-ceph', Key: 'big', Metadata: { kind: 'mp' } }));
    const parts = [];
    const chunks: Buffer[] = [];
    for (let p = 1; p <= 2; p++) {
      const c = randomBytes(p === 1 ? 5 * 1024 * 1024 : 77_777);
      chunks.push(c);
      const r = await a.s3.send(new UploadPartCommand({ Bucket: 'to-ceph', Key: 'big', UploadId: up.UploadId!, PartNumber: p, Body: c }));
      parts.push({ PartNumber: p, ETag: r.ETag! });
    }
    await a.s3.send(new CompleteMultipartUploadCommand({ Bucket: 'to-ceph', Key: 'big', UploadId: up.UploadId!, MultipartUpload: { Parts: parts } }));
    bodies.set('big', Buffer.concat(chunks));
    const old = await a.s3.send(new PutObjectCommand({ Bucket: 'to-ceph', Key: 'versioned', Body: 'v1' }));
    await a.s3.send(new PutObjectCommand({ Bucket: 'to-ceph', Key: 'versioned', Body: 'v2' }));
    await a.s3.send(new DeleteObjectCommand({ Bucket: 'to-ceph', Key: 'doc/1' }));

    // 40 objects, the multipart upload, two versions of `versioned`, the delete marker of doc/1.
    let last: unknown;
    await until(
      'the queue to drain',
      async () => {
        const t = (await a.replStatus('to-ceph')).targets[0]!;
        last = t;
        return t.queued.count === 0 && t.failed.count === 0 && t.completed.count === 44 ? t : undefined;
      },
      120_000,
      250,
    )
      .catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; last status ${JSON.stringify(last)}`);
      })
      .then((t) => expect(t.svcTarget).toBe(false));

    for (const [key, body] of bodies) {
      if (key === 'doc/1') continue;
      const g = await r3.send(new GetObjectCommand({ Bucket: 'from-svc', Key: key }));
      expect(Buffer.from(await g.Body!.transformToByteArray()).equals(body), key).toBe(true);
      const h = await a.s3.send(new HeadObjectCommand({ Bucket: 'to-ceph', Key: key }));
      expect(h.ReplicationStatus, key).toBe('COMPLETED');
      if (key === 'big') {
        expect(g.Metadata).toEqual({ kind: 'mp' });
        // Part by part: the same multipart ETag.
        expect(g.ETag).toBe(h.ETag);
        continue;
      }
      expect(g.ContentType).toBe('application/x-doc');
      expect(g.Metadata).toEqual(h.Metadata);
      const i = Number(/\d+/.exec(key)![0]);
      const tags = (await r3.send(new GetObjectTaggingCommand({ Bucket: 'from-svc', Key: key }))).TagSet ?? [];
      expect(Object.fromEntries(tags.map((t) => [t.Key, t.Value]))).toEqual(i % 2 === 0 ? { even: 'yes', i: String(i) } : {});
    }
    // The delete marker arrived (RGW's own id), and both versions of `versioned`.
    const listed = await r3.send(new ListObjectVersionsCommand({ Bucket: 'from-svc', Prefix: 'versioned' }));
    expect(listed.Versions?.length).toBe(2);
    expect((await r3.send(new ListObjectVersionsCommand({ Bucket: 'from-svc', Prefix: 'doc/1' }))).DeleteMarkers?.filter((d) => d.Key === 'doc/1').length).toBe(1);
    await expect(r3.send(new HeadObjectCommand({ Bucket: 'from-svc', Key: 'doc/1' }))).rejects.toThrow();

    // A version delete removes RGW's copy of that version (by the id RGW gave it).
    await a.s3.send(new DeleteObjectCommand({ Bucket: 'to-ceph', Key: 'versioned', VersionId: old.VersionId! }));
    await until('RGW to drop the old version', async () => ((await r3.send(new ListObjectVersionsCommand({ Bucket: 'from-svc', Prefix: 'versioned' }))).Versions?.length === 1 ? true : undefined), 60_000, 250);
    const left = await r3.send(new GetObjectCommand({ Bucket: 'from-svc', Key: 'versioned' }));
    expect(await left.Body!.transformToString()).toBe('v2');
  }, 300_000);
});
