/**
 * Decommission through a real `svc server` process (one node, pools of
 * tmpfs drives) with real S3 clients (@aws-sdk/client-s3) and the real
 * `svc` client:
 *
 * - two pools: the first pool is drained while clients keep writing,
 *   overwriting, deleting and reading; the server is killed (SIGKILL) in
 *   the middle of the drain and started again: the drain resumes and
 *   completes; every acknowledged object and version reads back byte-exact,
 *   nothing was lost or duplicated, the drained pool holds no object data,
 *   and `svc server` restarted without the drained pool's argument serves
 *   everything; a PUT staged while its pool closes gets `SlowDown`; `svc
 *   decommission status` shows the rate and the ETA while it runs;
 * - three pools: a batch drains one pool at a time (the second waits
 *   `queued`, its keys answer `SlowDown`); the capacity rule refuses a
 *   batch the remaining pool cannot hold, and a refusal changes nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  GetObjectTaggingCommand,
  HeadObjectCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import type { DecommissionStatusReport } from '../src/object/admin/types.ts';
import { objectJournals, uploadFiles } from './helpers/movement.ts';
import { MovementServer } from './helpers/movement-server.ts';
import { canMountTmpfs } from './helpers/tmpfs.ts';
import { Workload } from './helpers/workload.ts';
import { runSvcCommand } from './svc-process.ts';

const MiB = 1024 * 1024;
const enabled = canMountTmpfs();
if (!enabled) console.log('skipped: cannot mount tmpfs (needs root)');

const servers: MovementServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.cleanup();
});

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

async function errorName(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof S3ServiceException) return err.name;
    throw err;
  }
}

/** Objects whose metadata, tags and checksums are checked after the move. */
interface Special {
  key: string;
  body: Buffer;
  etag: string;
}

async function writeSpecials(s3: S3Client): Promise<Special[]> {
  const out: Special[] = [];
  const tagged = randomBytes(150_000);
  const r1 = await s3.send(
    new PutObjectCommand({ Bucket: 'plain', Key: 'special/tagged', Body: tagged, Metadata: { owner: 'ops', tier: 'gold' }, ContentType: 'application/x-test', Tagging: 'a=1&b=two', ChecksumAlgorithm: 'SHA256', StorageClass: 'REDUCED_REDUNDANCY' }),
  );
  out.push({ key: 'special/tagged', body: tagged, etag: r1.ETag! });
  const parts = [randomBytes(5 * MiB), randomBytes(MiB + 17)];
  const up = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'plain', Key: 'special/multipart', Metadata: { kind: 'mp' }, ChecksumAlgorithm: 'CRC32' }));
  const etags = [];
  for (const [i, p] of parts.entries()) {
    const r = await s3.send(new UploadPartCommand({ Bucket: 'plain', Key: 'special/multipart', UploadId: up.UploadId, PartNumber: i + 1, Body: p, ChecksumAlgorithm: 'CRC32' }));
    etags.push({ PartNumber: i + 1, ETag: r.ETag!, ChecksumCRC32: r.ChecksumCRC32! });
  }
  const done = await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'plain', Key: 'special/multipart', UploadId: up.UploadId, MultipartUpload: { Parts: etags } }));
  out.push({ key: 'special/multipart', body: Buffer.concat(parts), etag: done.ETag! });
  return out;
}

async function checkSpecials(s3: S3Client, specials: readonly Special[]): Promise<void> {
  for (const sp of specials) {
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'plain', Key: sp.key, ChecksumMode: 'ENABLED' }));
    expect(head.ETag, sp.key).toBe(sp.etag);
    const got = await s3.send(new GetObjectCommand({ Bucket: 'plain', Key: sp.key }));
    expect(md5(Buffer.from(await got.Body!.transformToByteArray())), sp.key).toBe(md5(sp.body));
    if (sp.key === 'special/tagged') {
      expect(head.Metadata).toEqual({ owner: 'ops', tier: 'gold' });
      expect(head.ContentType).toBe('application/x-test');
      expect(head.StorageClass).toBe('REDUCED_REDUNDANCY');
      expect(head.ChecksumSHA256).toBe(createHash('sha256').update(sp.body).digest('base64'));
      const tags = await s3.send(new GetObjectTaggingCommand({ Bucket: 'plain', Key: sp.key }));
      expect(tags.TagSet).toEqual([
        { Key: 'a', Value: '1' },
        { Key: 'b', Value: 'two' },
      ]);
    } else {
      expect(head.Metadata).toEqual({ kind: 'mp' });
      expect(head.ChecksumCRC32).toMatch(/-2$/);
      expect(head.PartsCount ?? 2).toBe(2);
    }
  }
}

async function makeBuckets(s3: S3Client): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: 'ver' }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: 'ver', VersioningConfiguration: { Status: 'Enabled' } }));
  await s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
}

const poolState = (r: DecommissionStatusReport, id: number) => r.pools.find((p) => p.id === id)!;

describe.skipIf(!enabled)('decommission through a real svc server', () => {
  it('drains a pool under client load, survives kill -9 mid-drain, loses and duplicates nothing; the server runs without the drained pool', { timeout: 240_000 }, async () => {
    const srv = await MovementServer.create(
      [
        { name: 'p1', drives: 4, driveBytes: 96 * MiB },
        { name: 'p2', drives: 4, driveBytes: 96 * MiB },
      ],
      { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '2', SVC_DECOMMISSION_BUCKET_CONCURRENCY: '1' },
    );
    servers.push(srv);
    await srv.start();
    let s3 = srv.s3();
    let s3b = srv.s3();
    await makeBuckets(s3);
    const w = new Workload(() => [s3, s3b]);
    await w.seedStable(600, (i) => [100, 4000, 30_000, 12_000][i % 4]!);
    for (let i = 0; i < 14; i++) await w.putVer(s3, `w${i % 2}-v${i % 7}`, 2000 + i);
    const specials = await writeSpecials(s3);
    for (const sp of specials) w.plain.set(sp.key, { md5: md5(sp.body), size: sp.body.length });
    const onPool0 = (await objectJournals(srv.roots(0)[0]!)).filter((k) => k.startsWith('plain/stable/'));
    expect(onPool0.length).toBeGreaterThan(120);

    // A PUT of a key living on pool 0, staged before the pool closes: SlowDown at commit.
    const staged = onPool0[0]!.slice('plain/'.length);
    const body = new PassThrough();
    const pending = errorName(srv.s3().send(new PutObjectCommand({ Bucket: 'plain', Key: staged, Body: body, ContentLength: 64 * 1024 })));
    body.write(randomBytes(32 * 1024));
    // Let the request reach the server and pick its pool (generous: the machine may be loaded).
    await new Promise((r) => setTimeout(r, 1_000));

    const start = await srv.admin({ method: 'POST', path: 'v3/pools/decommission', query: { pool: srv.volumes[0]! } });
    expect(start.status, start.body).toBe(200);
    body.end(randomBytes(32 * 1024));
    expect(await pending).toBe('SlowDown');
    const got = await s3.send(new GetObjectCommand({ Bucket: 'plain', Key: staged }));
    expect(md5(Buffer.from(await got.Body!.transformToByteArray()))).toBe(w.stable.get(staged)!.md5);

    w.start(2, 2);
    // Watch the pool's drive empty (progress is persisted only every few seconds).
    for (;;) {
      const left = (await objectJournals(srv.roots(0)[0]!)).length;
      if (left <= onPool0.length - 25) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const mid = await srv.decommissionStatus();
    expect(poolState(mid, 0)).toMatchObject({ status: 'running', poolStatus: 'decommissioning' });
    expect(poolState(mid, 1).status).toBe('none');

    // kill -9 in the middle of the drain (no write in doubt: the clients pause first).
    await w.pause();
    await srv.kill9();
    // What the restarted drain still has to move (moves made after the last persisted progress are
    // not counted again, and how many those are depends on the machine's speed).
    const leftAtKill = (await objectJournals(srv.roots(0)[0]!)).length;
    expect(leftAtKill).toBeGreaterThan(20);
    await srv.start();
    s3 = srv.s3();
    s3b = srv.s3();
    // The restarted node resumes the drain by itself.
    const resumedBy = Date.now() + 60_000;
    while (!srv.logs().some((l) => l['event'] === 'decommission_active') && Date.now() < resumedBy) await new Promise((r) => setTimeout(r, 50));
    expect(srv.logs().find((l) => l['event'] === 'decommission_active')).toMatchObject({ pool: 0, resumed: true });
    w.resume();

    // The svc client shows progress: objects and bytes moved, rate, objects/s and (while it runs) the ETA.
    const env = { SVC_ENDPOINT: srv.url, SVC_ACCESS_KEY: srv.creds.accessKey, SVC_SECRET_KEY: srv.creds.secretKey };
    await srv.waitDecommission((r) => poolState(r, 0).decommissionInfo.objectsDecommissioned > 0 && poolState(r, 0).decommissionInfo.elapsedSeconds >= 1);
    const cli = await runSvcCommand(['decommission', 'status'], env);
    expect(cli.code, cli.err).toBe(0);
    for (const h of ['PROGRESS', 'OBJECTS', 'MOVED', 'FAILED', 'RATE', 'OBJ/S', 'ETA']) expect(cli.out).toContain(h);
    const row = cli.out.split('\n').find((l) => l.includes(srv.volumes[0]!))!;
    // … │ running │ [██░░…] 10 % │ 32 │ 524.1 KiB │ 0 │ 104.8 KiB/s │ 6.4/s │ 42s │ …
    expect(row).toMatch(/│ (running|complete) +│ \[.*\] +[\d.]+ % │ +[1-9]\d* │ +[\d.]+ (B|KiB|MiB) │ +0 │ +[\d.]+ (B|KiB|MiB)\/s │ +[\d.]+\/s │/);
    if (row.includes('running')) expect(row).toMatch(/\/s │ +[\d.]+(ms|s|m|h)/);

    const done = await srv.waitDecommission((r) => poolState(r, 0).status !== 'running', 120_000);
    await w.stop();
    expect(poolState(done, 0)).toMatchObject({ status: 'complete', poolStatus: 'decommissioned' });
    const info = poolState(done, 0).decommissionInfo;
    expect(info).toMatchObject({ complete: true, failed: false, canceled: false, objectsDecommissionedFailed: 0, lastError: null });
    // Counted as they go: at least what was left at the kill, less the keys clients deleted before
    // the drain reached them (half is a generous bound for those).
    expect(info.objectsDecommissioned).toBeGreaterThan(leftAtKill / 2);
    expect(w.errors).toEqual([]);
    expect(w.writes).toBeGreaterThan(50);
    expect(w.reads).toBeGreaterThan(50);
    expect(await w.diff(s3)).toEqual([]);
    await checkSpecials(s3, specials);
    for (const r of srv.roots(0)) {
      expect(await objectJournals(r)).toEqual([]);
      expect(await uploadFiles(r)).toEqual([]);
    }

    // Without the drained pool's argument.
    await srv.stop();
    await srv.start([srv.volumes[1]!]);
    s3 = srv.s3();
    expect(await w.diff(s3)).toEqual([]);
    await checkSpecials(s3, specials);
    const list = await srv.admin({ method: 'GET', path: 'v3/pools/list' });
    expect((list.json() as { cmdline: string; status: string }[]).map((p) => [p.cmdline, p.status])).toEqual([[srv.volumes[1], 'active']]);
  });

  it('three pools: a batch drains one pool at a time, in the order given, the queued pool answers SlowDown; capacity and every-pool refusals change nothing', { timeout: 180_000 }, async () => {
    // a and b: 2 drives × 64 MiB at EC:1 (64 MiB usable each); c: 4 × 16 MiB at EC:2 (32 MiB).
    // New objects go to the pool with the most free space: a and b fill first.
    const srv = await MovementServer.create(
      [
        { name: 'a', drives: 2, driveBytes: 64 * MiB },
        { name: 'b', drives: 2, driveBytes: 64 * MiB },
        { name: 'c', drives: 4, driveBytes: 16 * MiB },
      ],
      // the start check sizes a pool by what the scanner counted: a cycle a second keeps it current
      { SVC_DECOMMISSION_ENTRY_CONCURRENCY: '1', SVC_DECOMMISSION_BUCKET_CONCURRENCY: '1', SVC_SCANNER_INTERVAL: '1s' },
    );
    servers.push(srv);
    await srv.start();
    const s3 = srv.s3();
    await makeBuckets(s3);
    const w = new Workload(() => [s3]);
    // Many objects just above the inline size, so each drain takes a while (moves are per object).
    for (let i = 0; i < 240; i++) await w.putPlain(s3, `k${String(i).padStart(3, '0')}`, 130_000);
    const keysOn = async (pool: number) => (await objectJournals(srv.roots(pool)[0]!)).filter((k) => k.startsWith('plain/')).map((k) => k.slice('plain/'.length));
    // Placement counts each new object against the pool's sampled free space, so a and b take
    // turns (c has less room throughout); the refusals below rely on a and b holding the data.
    const [onA0, onB0] = [(await keysOn(0)).length, (await keysOn(1)).length];
    expect(onA0).toBeGreaterThan(40);
    expect(onB0).toBeGreaterThan(40);

    // The decommission start check sizes each pool by the object bytes the scanner counted (on
    // drives that share a file system the drives' used space says nothing): wait for a count of
    // what was just written.
    const scanned = async (objects: number) => {
      const end = Date.now() + 60_000;
      for (;;) {
        const info = (await srv.admin({ method: 'GET', path: 'v3/info' })).json() as { dataUsage?: { buckets: { name: string; objects: number }[] } };
        if (info.dataUsage?.buckets.find((b) => b.name === 'plain')?.objects === objects) return;
        if (Date.now() > end) throw new Error(`the scanner did not count ${objects} objects in plain: ${JSON.stringify(info.dataUsage)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    await scanned(240);
    // c cannot take a and b (~30 MB) with 30 % to spare; nor can every pool go.
    const before = await srv.decommissionStatus();
    const refused = await srv.admin({ method: 'POST', path: 'v3/pools/decommission', query: { pool: '0,1', 'by-id': 'true' } });
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({ Code: 'XSvcDecommissionNotAllowed' });
    expect(refused.body).toContain('insufficient target pool capacity');
    const every = await srv.admin({ method: 'POST', path: 'v3/pools/decommission', query: { pool: '0,1,2', 'by-id': 'true' } });
    expect(every.status).toBe(400);
    expect(every.body).toContain('at least one active pool must remain');
    expect(await srv.decommissionStatus()).toEqual(before);

    // With half the data deleted it fits: b first, then a.
    for (let i = 0; i < 240; i++) if (i % 4 < 2) await w.deletePlain(s3, `k${String(i).padStart(3, '0')}`);
    await scanned(120);
    const onA = (await keysOn(0)).sort();
    const batch = await srv.admin({ method: 'POST', path: 'v3/pools/decommission', query: { pool: `${srv.volumes[1]},${srv.volumes[0]}` } });
    expect(batch.status, batch.body).toBe(200);
    // Right after the batch is accepted a waits in the queue behind b.
    const initial = await srv.decommissionStatus();
    expect(poolState(initial, 0).status).toBe('queued');
    expect(poolState(initial, 0).decommissionInfo).toMatchObject({ queued: true, waitingReason: 'queued' });
    // b leaves the queue first; a fast drain may already be complete when the status is read, and
    // then a may have started. One at a time and the order are checked from the start times below.
    const first = await srv.waitDecommission((r) => poolState(r, 1).status !== 'queued');
    expect(['running', 'complete']).toContain(poolState(first, 1).status);
    expect(poolState(first, 1).status === 'running' && poolState(first, 0).status !== 'queued', 'a runs while b still runs').toBe(false);
    expect(['queued', 'running']).toContain(poolState(first, 0).status);
    expect(poolState(first, 2).status).toBe('none');
    // A pool in the batch takes no writes of its keys, no new uploads of them; new keys go to c.
    // The key a drains last, so it is still there whether a is queued or has just started.
    const last = onA[onA.length - 1]!;
    const fast = srv.s3({ maxAttempts: 1 });
    expect(await errorName(fast.send(new PutObjectCommand({ Bucket: 'plain', Key: last, Body: 'x' })))).toBe('SlowDown');
    expect(await errorName(fast.send(new CreateMultipartUploadCommand({ Bucket: 'plain', Key: last })))).toBe('SlowDown');
    await w.putPlain(s3, 'new-during-drain', 1000);
    expect(await keysOn(2)).toContain('new-during-drain');

    let overlap = false;
    const done = await srv.waitDecommission((r) => {
      if (r.pools.filter((p) => p.status === 'running').length > 1) overlap = true;
      return r.pools.slice(0, 2).every((p) => p.status === 'complete' || p.status === 'failed');
    }, 120_000);
    expect(overlap).toBe(false);
    expect(done.pools.map((p) => p.status)).toEqual(['complete', 'complete', 'none']);
    expect(poolState(done, 1).decommissionInfo.startTime < poolState(done, 0).decommissionInfo.startTime).toBe(true);
    for (const p of [0, 1]) for (const r of srv.roots(p)) expect(await objectJournals(r)).toEqual([]);
    expect(await w.diff(s3)).toEqual([]);
    await srv.stop();
    await srv.start([srv.volumes[2]!]);
    expect(await w.diff(srv.s3())).toEqual([]);
  });
});
