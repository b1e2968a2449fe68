/**
 * Issue 18 with the real `svc` binary and @aws-sdk/client-s3: a single-node
 * store grows by a second pool.
 *
 *   svc server '<base>/p1/d{1...4}'                      buckets + objects
 *   svc server '<base>/p1/d{1...4}' '<base>/p2/d{1...4}'  PUTs to the old buckets land in the new pool
 *
 * The first pool sits on a small tmpfs (a fuller disk), so the new pool
 * really has the most free space. The processes run in a mount namespace
 * that outlives them (`MountNamespace`), which also makes the new pool's
 * drives read-only on demand: a bucket created then cannot reach that pool,
 * and a restart stays not ready with a detail naming the pool and why, until
 * the drives are writable again.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
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
import { canUseMountNamespaces } from './helpers/cluster.ts';
import { MountNamespace } from './helpers/mount-ns.ts';
import { bodyOf, keysOf } from './helpers/s3-read.ts';
import { runSvc, type SvcRun, tempDir } from './svc-process.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const supported = canUseMountNamespaces();
const KEYS = { SVC_ACCESS_KEY: 'expandadmin', SVC_SECRET_KEY: 'expand-secret-1', SVC_CONSOLE_ENABLE: 'false' };

describe.skipIf(!supported)('svc grows from one pool to two (real process, @aws-sdk/client-s3)', () => {
  let ns: MountNamespace;
  let base: string;
  let run: SvcRun | undefined;
  let s3: S3Client | undefined;
  const pool1 = () => `${base}/p1/d{1...4}`;
  const pool2 = () => `${base}/p2/d{1...4}`;
  /** The new pool is on the host's disk: its files are visible from here. */
  const onNewPool = (bucket: string, key: string) => [1, 2, 3, 4].every((d) => existsSync(join(base, 'p2', `d${d}`, bucket, key, 'xl.meta')));

  async function start(...volumes: string[]): Promise<S3Client> {
    s3?.destroy();
    run = await runSvc(['server', ...volumes], KEYS, { wrap: ns.wrap });
    expect(await run.started).toBe(true);
    s3 = new S3Client({
      requestHandler: keepAliveHandler(),
      endpoint: `http://127.0.0.1:${run.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: KEYS.SVC_ACCESS_KEY, secretAccessKey: KEYS.SVC_SECRET_KEY },
      maxAttempts: 1,
    });
    return s3;
  }
  async function stop(): Promise<void> {
    expect(await run!.stop()).toBe(0);
    run = undefined;
  }
  const ready = async () => {
    const r = await fetch(`http://127.0.0.1:${run!.port}/health/ready`);
    return { status: r.status, pending: r.headers.get('x-svc-readiness-pending'), body: (await r.json()) as { details: { storage: { detail?: string } } } };
  };
  const body = bodyOf;
  const keys = keysOf;

  beforeAll(async () => {
    ns = await MountNamespace.create();
    base = tempDir('expand');
    for (const p of ['p1', 'p2']) for (let d = 1; d <= 4; d++) await mkdir(join(base, p, `d${d}`), { recursive: true });
    // The first pool: four drives on one 256 MiB tmpfs, visible inside the namespace only.
    ns.tmpfs(join(base, 'p1'), 256 * 1024 * 1024);
    ns.run('mkdir', '-p', ...[1, 2, 3, 4].map((d) => join(base, 'p1', `d${d}`)));
  });
  afterAll(async () => {
    s3?.destroy();
    await run?.stop();
    await ns?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('after adding a pool, PUTs to old buckets succeed and land in the new pool; old objects read; listings show both', async () => {
    let c = await start(pool1());
    await c.send(new CreateBucketCommand({ Bucket: 'grow' }));
    await c.send(new PutObjectCommand({ Bucket: 'grow', Key: 'a', Body: 'old a' }));
    await c.send(new CreateBucketCommand({ Bucket: 'versioned' }));
    await c.send(new PutBucketVersioningCommand({ Bucket: 'versioned', VersioningConfiguration: { Status: 'Enabled' } }));
    await c.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'a', Body: 'v1' }));
    await c.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'a', Body: 'v2' }));
    await c.send(new CreateBucketCommand({ Bucket: 'tagged' }));
    await c.send(new PutBucketTaggingCommand({ Bucket: 'tagged', Tagging: { TagSet: [{ Key: 'team', Value: 'storage' }] } }));
    await c.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'a', Body: 'tagged a' }));
    await stop();

    c = await start(pool1(), pool2());
    expect((await ready()).status).toBe(200);
    // The new pool received every bucket before the node reported ready.
    // Bucket sync copied the three records to the new pool. The twelve volumes (3 buckets x 4
    // drives) are checked on disk below: under load the drive healer, which recreates bucket
    // folders on drives that lack them, can make some first, so which log counts them varies.
    const repaired = run!.logs().filter((l) => l.event === 'bucket_sync_repaired');
    expect(repaired.reduce((n, l) => n + Number(l.recordsCopied ?? 0), 0)).toBe(3);
    expect(repaired[0]).toMatchObject({ buckets: 3 });
    for (const b of ['grow', 'versioned', 'tagged']) for (let d = 1; d <= 4; d++) expect(existsSync(join(base, 'p2', `d${d}`, b))).toBe(true);

    // Six out of six PUTs of new keys succeed, each on the new pool.
    for (let i = 1; i <= 6; i++) {
      await c.send(new PutObjectCommand({ Bucket: 'grow', Key: `b${i}`, Body: `new ${i}` }));
      expect(onNewPool('grow', `b${i}`)).toBe(true);
    }
    expect(await body(c, 'grow', 'a')).toBe('old a');
    expect(await body(c, 'grow', 'b3')).toBe('new 3');
    expect(await keys(c, 'grow')).toEqual(['a', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6']);

    await c.send(new PutObjectCommand({ Bucket: 'versioned', Key: 'b', Body: 'new b' }));
    expect(onNewPool('versioned', 'b')).toBe(true);
    expect((await c.send(new GetBucketVersioningCommand({ Bucket: 'versioned' }))).Status).toBe('Enabled');
    expect(await body(c, 'versioned', 'a')).toBe('v2');
    const vs = await c.send(new ListObjectVersionsCommand({ Bucket: 'versioned' }));
    expect((vs.Versions ?? []).map((v) => [v.Key, v.IsLatest])).toEqual([
      ['a', true],
      ['a', false],
      ['b', true],
    ]);

    await c.send(new PutObjectCommand({ Bucket: 'tagged', Key: 'b', Body: 'tagged b' }));
    expect(onNewPool('tagged', 'b')).toBe(true);
    expect((await c.send(new GetBucketTaggingCommand({ Bucket: 'tagged' }))).TagSet).toEqual([{ Key: 'team', Value: 'storage' }]);
    expect(await keys(c, 'tagged')).toEqual(['a', 'b']);
  }, 120_000);

  it('a bucket created while the new pool refuses writes is completed once it can; meanwhile a restart is not ready and says which pool and why', async () => {
    const drives2 = [1, 2, 3, 4].map((d) => join(base, 'p2', `d${d}`));
    for (const d of drives2) ns.readOnly(d, true);
    let c = s3!;
    // The create reaches the first pool only; the write falls back to it.
    await c.send(new CreateBucketCommand({ Bucket: 'late' }));
    await c.send(new PutObjectCommand({ Bucket: 'late', Key: 'x', Body: 'while read-only' }));
    expect(existsSync(join(base, 'p2', 'd1', 'late'))).toBe(false);
    await stop();

    c = await start(pool1(), pool2());
    const r = await ready();
    expect(r.status).toBe(503);
    expect(r.pending).toBe('startup_finalization');
    expect(r.body.details.storage.detail).toMatch(/pool 1 \(.*p2\/d\{1\.\.\.4\}\): bucket "late" not present: set 0 has the volume on 0 of 4 drives, 3 needed \(.*EROFS/);

    for (const d of drives2) ns.readOnly(d, false);
    const end = Date.now() + 60_000;
    while ((await ready()).status !== 200) {
      if (Date.now() > end) throw new Error(`not ready: ${JSON.stringify((await ready()).body)}`);
      await new Promise((res) => setTimeout(res, 250));
    }
    expect((await ready()).body.details.storage.detail).not.toMatch(/bucket sync/);
    for (const d of drives2) expect(existsSync(join(d, 'late'))).toBe(true);
    await c.send(new PutObjectCommand({ Bucket: 'late', Key: 'y', Body: 'after' }));
    expect(onNewPool('late', 'y')).toBe(true);
    expect(await body(c, 'late', 'x')).toBe('while read-only');
    expect(await keys(c, 'late')).toEqual(['x', 'y']);
  }, 120_000);
});
