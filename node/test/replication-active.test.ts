/**
 * Replication between two svc sites (real `svc server` processes, four
 * drives each), driven the way users drive it:
 *
 * - `svc replicate add|ls|status|rm` (the client, shaped like mc replicate):
 *   a target and a rule added with delete, delete-marker and
 *   existing-objects, copies and deletes replicated, the status counted,
 *   rules and targets removed.
 * - Two-way (active-active): concurrent writes of the same keys on both
 *   sites converge to the same versions and the same latest version (the
 *   newest by modification time) on both, and no copy is ever copied back
 *   (each site replicated exactly the writes it took).
 * - Resync: a bucket that held 2 000 objects before the rule existed is
 *   replicated by `svc replicate resync start`, to the last version; so are
 *   objects written before the bucket's versioning was enabled (null
 *   versions, single-part and multipart), as null versions on the target.
 * - A copy the target refuses (its credential may read but not write there)
 *   reads FAILED, waits in the retry queue, and completes once the target
 *   grants the write.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CompleteMultipartUploadCommand, CreateBucketCommand, CreateMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutBucketReplicationCommand, PutBucketVersioningCommand, PutObjectCommand, type S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../src/cli/admin/client.ts';
import { METRIC } from '../src/telemetry/names.ts';
import { OtlpReceiver } from './helpers/otlp-receiver.ts';
import { issueLeaf, makeCa } from './helpers/certs.ts';
import { runSvcCommand } from './svc-process.ts';
import { allVersions, ROOT, rowLine, ruleFor, Site, until } from './helpers/replication.ts';

async function versioned(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
}

async function drained(s: Site, bucket: string, ms = 120_000): Promise<void> {
  await until(
    `${s.name}'s queue of ${bucket} to drain`,
    async () => {
      const st = await s.replStatus(bucket);
      return st.targets.every((t) => t.queued.count === 0 && t.failed.count === 0) && st.resync.every((r) => r.state !== 'running') ? true : undefined;
    },
    ms,
    250,
  );
}

describe('replication: the client, two-way, resync', () => {
  let a: Site;
  let b: Site;
  let receiver: OtlpReceiver;
  const cli = (args: string[]) => runSvcCommand(args, { SVC_ENDPOINT: a.endpoint, SVC_ACCESS_KEY: ROOT.accessKey, SVC_SECRET_KEY: ROOT.secretKey, HOME: a.work });

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    [a, b] = await Promise.all([Site.start('a', { SVC_OBS_ENDPOINT: receiver.url, SVC_OBS_METER_INTERVAL: '300ms' }), Site.start('b')]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await receiver?.close();
  });

  it('svc replicate add, ls, status, rm', async () => {
    await versioned(a.s3, 'cli');
    await versioned(b.s3, 'cli-dr');
    const remote = `http://${ROOT.accessKey}:${ROOT.secretKey}@${b.hostPort}/cli-dr`;
    // A remote bucket without versioning is refused before anything is stored.
    await b.s3.send(new CreateBucketCommand({ Bucket: 'plain' }));
    const refused = await cli(['replicate', 'add', 'cli', '--remote-bucket', remote.replace('/cli-dr', '/plain')]);
    expect(refused.code).not.toBe(0);
    expect(refused.err + refused.out).toMatch(/XSvcReplicationTargetNotVersioned|versioning/);
    const unreachable = await cli(['replicate', 'add', 'cli', '--remote-bucket', `http://x:y@127.0.0.1:1/cli-dr`]);
    expect(unreachable.code).not.toBe(0);
    expect(unreachable.err + unreachable.out).toMatch(/could not be used/);
    // An https target whose certificate the node does not trust: the reason and the remedy.
    const ca = await makeCa(join(a.work, 'untrusted-ca'));
    const leaf = await issueLeaf(ca, join(a.work, 'untrusted-leaf'), { dns: ['localhost'], ips: ['127.0.0.1'] });
    const tlsTarget = createHttpsServer({ cert: await readFile(leaf.certFile), key: await readFile(leaf.keyFile) }, (_req, res) => res.end());
    await new Promise<void>((r) => tlsTarget.listen(0, '127.0.0.1', r));
    try {
      const untrusted = await cli(['replicate', 'add', 'cli', '--remote-bucket', `https://x:y@127.0.0.1:${(tlsTarget.address() as AddressInfo).port}/cli-dr`]);
      expect(untrusted.code).toBe(1);
      expect(untrusted.err).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE.*; trust the target's CA by adding it to the CAs\/ folder of every node's certificate directory/);
    } finally {
      await new Promise((r) => tlsTarget.close(r));
    }

    const add = await cli(['replicate', 'add', 'cli', '--remote-bucket', remote, '--priority', '3', '--replicate', 'delete,delete-marker,existing-objects', '--bandwidth', '10MiB', '--id', 'dr', '--json']);
    expect(add.code, add.err).toBe(0);
    const arn = (JSON.parse(add.out) as { arn: string }).arn;
    expect(arn).toMatch(/^arn:svc:replication::[0-9a-f]{16}:cli-dr$/);
    const ls = await cli(['replicate', 'ls', 'cli']);
    expect(ls.code, ls.err).toBe(0);
    expect(ls.out).toContain(`dr  priority 3  Enabled  →  http://${b.hostPort}/cli-dr`);
    expect(ls.out).toContain('replicate delete-marker,delete,existing-objects');

    const v1 = await a.s3.send(new PutObjectCommand({ Bucket: 'cli', Key: 'doc.txt', Body: 'one' }));
    const v2 = await a.s3.send(new PutObjectCommand({ Bucket: 'cli', Key: 'doc.txt', Body: 'two' }));
    await drained(a, 'cli');
    expect((await b.s3.send(new HeadObjectCommand({ Bucket: 'cli-dr', Key: 'doc.txt', VersionId: v1.VersionId }))).VersionId).toBe(v1.VersionId);
    // DeleteReplication: deleting a version on A deletes it on B.
    await a.s3.send(new DeleteObjectCommand({ Bucket: 'cli', Key: 'doc.txt', VersionId: v1.VersionId }));
    await drained(a, 'cli');
    await until('the version delete on B', async () => ((await allVersions(b.s3, 'cli-dr')).map(rowLine).join() === (await allVersions(a.s3, 'cli')).map(rowLine).join() ? true : undefined), 30_000, 200);
    expect((await allVersions(b.s3, 'cli-dr')).map((v) => v.versionId)).toEqual([v2.VersionId]);

    // Two versions and the version delete.
    const st = await cli(['replicate', 'status', 'cli']);
    expect(st.code, st.err).toBe(0);
    expect(st.out).toMatch(/online/);
    expect(st.out).toMatch(/queued 0 .*failed 0 .*replicated 3 /);
    expect(st.out).toContain('bandwidth limit 10 MiB/s');
    const js = JSON.parse((await cli(['replicate', 'status', 'cli', '--json'])).out) as { targets: { completed: { count: number }; bandwidthLimit: number }[] };
    expect(js.targets[0]!.completed.count).toBe(3);
    expect(js.targets[0]!.bandwidthLimit).toBe(10 * 1024 * 1024);
    // The same numbers as OTLP metrics, per bucket and target.
    const point = (name: string) => receiver.points(name).filter((p) => p.resource['process.pid'] === a.srv.child.pid && p.attributes.bucket === 'cli' && p.attributes.target === arn).pop();
    await receiver.waitFor(() => (point(METRIC.replicationCompleted)?.value === 3 ? true : undefined), 30_000, 'svc_replication_completed_objects of cli');
    expect(point(METRIC.replicationQueued)?.value).toBe(0);
    expect(point(METRIC.replicationFailed)?.value).toBe(0);
    expect(point(METRIC.replicationLag)?.value).toBe(0);
    expect(point(METRIC.replicationTargetOnline)?.value).toBe(1);
    expect(point(METRIC.replicationCompletedBytes)?.value).toBe(6);
    // The console's bucket page shows the same target and counts.
    const { ConsoleClient } = await import('./helpers/console.ts');
    const con = new ConsoleClient(`http://127.0.0.1:${a.srv.consolePort}/svc/console/`);
    expect((await con.signIn(ROOT.accessKey, ROOT.secretKey)).status).toBe(200);
    const page = (await con.call('GET', 'api/buckets/cli/replication')).json<{ targets: { arn: string; online: boolean; targetBucket: string; queued: { count: number }; completed: { count: number; bytes: number }; lagMs: number }[] }>();
    expect(page.targets).toEqual([expect.objectContaining({ arn, online: true, targetBucket: 'cli-dr', queued: { count: 0, bytes: 0 }, completed: { count: 3, bytes: 6 }, lagMs: 0 })]);

    // A target a rule uses cannot be removed on its own; rm takes rule and target.
    const inUse = await a.admin('DELETE', 'v3/remove-remote-target', { bucket: 'cli', arn });
    expect(inUse.status).toBe(409);
    const rm = await cli(['replicate', 'rm', 'cli', '--all']);
    expect(rm.code, rm.err).toBe(0);
    expect((await cli(['replicate', 'ls', 'cli'])).out).toContain('no replication rules');
    expect(JSON.parse((await a.admin('GET', 'v3/list-remote-targets', { bucket: 'cli' })).body)).toEqual([]);
    // Without rules nothing is queued any more.
    await a.s3.send(new PutObjectCommand({ Bucket: 'cli', Key: 'after-rm', Body: 'x' }));
    expect((await a.s3.send(new HeadObjectCommand({ Bucket: 'cli', Key: 'after-rm' }))).ReplicationStatus).toBeUndefined();
  }, 240_000);

  it('two-way: concurrent writes converge to the same latest versions, no copy is copied back', async () => {
    await versioned(a.s3, 'two-way');
    await versioned(b.s3, 'two-way');
    const toB = await a.addTarget('two-way', b, 'two-way');
    const toA = await b.addTarget('two-way', a, 'two-way');
    await a.s3.send(new PutBucketReplicationCommand({ Bucket: 'two-way', ReplicationConfiguration: { Role: '', Rules: [ruleFor(toB)] } }));
    await b.s3.send(new PutBucketReplicationCommand({ Bucket: 'two-way', ReplicationConfiguration: { Role: '', Rules: [ruleFor(toA)] } }));

    const KEYS = 40;
    const WRITES = 150;
    const made = { a: 0, b: 0 };
    const writer = async (s: Site, side: 'a' | 'b', w: number) => {
      for (let i = 0; i < WRITES / 3; i++) {
        const key = `k${(i * 7 + w * 13 + (side === 'a' ? 0 : 5)) % KEYS}`;
        if (i % 11 === 10) await s.s3.send(new DeleteObjectCommand({ Bucket: 'two-way', Key: key }));
        else await s.s3.send(new PutObjectCommand({ Bucket: 'two-way', Key: key, Body: `${side}-${w}-${i}-${randomBytes(8).toString('hex')}` }));
        made[side]++;
      }
    };
    await Promise.all([0, 1, 2].flatMap((w) => [writer(a, 'a', w), writer(b, 'b', w)]));
    expect(made).toEqual({ a: WRITES, b: WRITES });
    await Promise.all([drained(a, 'two-way'), drained(b, 'two-way')]);

    const [va, vb] = await Promise.all([allVersions(a.s3, 'two-way'), allVersions(b.s3, 'two-way')]);
    // Every write of either side exists once on both: no lost version, no duplicate.
    expect(va.length).toBe(2 * WRITES);
    expect(new Set(va.map((v) => v.versionId)).size).toBe(2 * WRITES);
    expect(vb.map(rowLine)).toEqual(va.map(rowLine));
    // The latest of every key is the newest by modification time, the same object on both sites.
    for (const key of new Set(va.map((v) => v.key))) {
      const rows = va.filter((v) => v.key === key);
      const newest = rows.reduce((m, v) => (v.lastModified > m.lastModified ? v : m));
      expect(rows.find((v) => v.isLatest)!.versionId, key).toBe(newest.versionId);
      if (!newest.deleteMarker) {
        const [ga, gb] = await Promise.all([a.s3.send(new GetObjectCommand({ Bucket: 'two-way', Key: key })), b.s3.send(new GetObjectCommand({ Bucket: 'two-way', Key: key }))]);
        expect(await gb.Body!.transformToString()).toBe(await ga.Body!.transformToString());
        expect(gb.VersionId).toBe(ga.VersionId);
      }
    }
    // Count the copies: each site copied exactly the writes it took, and nothing moves any more.
    const count = async () => [(await a.replStatus('two-way')).targets[0]!.completed.count, (await b.replStatus('two-way')).targets[0]!.completed.count];
    expect(await count()).toEqual([WRITES, WRITES]);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await count()).toEqual([WRITES, WRITES]);
    expect((await allVersions(a.s3, 'two-way')).length).toBe(2 * WRITES);
  }, 300_000);

  it('a copy the target refuses reads FAILED, is retried with backoff and completes once the target allows it', async () => {
    await versioned(a.s3, 'refused');
    await versioned(b.s3, 'refused-dr');
    const onB = new AdminClient({ name: 'b', url: b.endpoint, accessKey: ROOT.accessKey, secretKey: ROOT.secretKey });
    const policy = (actions: string[]) => JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: actions, Resource: ['arn:aws:s3:::refused-dr', 'arn:aws:s3:::refused-dr/*'] }] });
    await onB.request('PUT', 'v3/add-canned-policy', { name: 'repl-read' }, policy(['s3:ListBucket', 's3:GetBucketVersioning', 's3:GetBucketLocation', 's3:GetObject', 's3:GetObjectVersion']));
    await onB.encrypted('PUT', 'v3/add-user', { accessKey: 'replicator' }, { secretKey: 'replicator-secret-1', status: 'enabled' }, false);
    await onB.encrypted('POST', 'v3/idp/builtin/policy/attach', {}, { policies: ['repl-read'], user: 'replicator' }, true);
    const arn = await a.addTarget('refused', { hostPort: b.hostPort, accessKey: 'replicator', secretKey: 'replicator-secret-1' }, 'refused-dr');
    await a.s3.send(new PutBucketReplicationCommand({ Bucket: 'refused', ReplicationConfiguration: { Role: '', Rules: [ruleFor(arn)] } }));

    const put = await a.s3.send(new PutObjectCommand({ Bucket: 'refused', Key: 'kept', Body: 'kept until the target takes it' }));
    const failed = await until(
      'the refused copy to read FAILED',
      async () => {
        const t = (await a.replStatus('refused')).targets[0]!;
        const h = await a.s3.send(new HeadObjectCommand({ Bucket: 'refused', Key: 'kept', VersionId: put.VersionId }));
        return h.ReplicationStatus === 'FAILED' && t.failed.count === 1 ? t : undefined;
      },
      60_000,
      200,
    );
    expect(failed).toMatchObject({ online: true, queued: { count: 0, bytes: 0 }, failed: { count: 1, bytes: 30 } });
    expect(failed.lastError).toMatch(/AccessDenied/);
    expect(failed.lagMs).toBeGreaterThan(0);
    expect((await allVersions(b.s3, 'refused-dr')).length).toBe(0);

    // The target grants the write: the retry queue's next attempt copies it (backoff 1 s doubling).
    await onB.request('PUT', 'v3/add-canned-policy', { name: 'repl-write' }, policy(['s3:PutObject', 's3:ReplicateObject', 's3:PutObjectTagging', 's3:ReplicateDelete', 's3:DeleteObject']));
    await onB.encrypted('POST', 'v3/idp/builtin/policy/attach', {}, { policies: ['repl-write'], user: 'replicator' }, true);
    await until('the retried copy to complete', async () => ((await a.s3.send(new HeadObjectCommand({ Bucket: 'refused', Key: 'kept', VersionId: put.VersionId }))).ReplicationStatus === 'COMPLETED' ? true : undefined), 120_000, 250);
    const t = (await a.replStatus('refused')).targets[0]!;
    expect(t).toMatchObject({ failed: { count: 0, bytes: 0 }, queued: { count: 0, bytes: 0 }, completed: { count: 1, bytes: 30 }, lagMs: 0 });
    const there = await b.s3.send(new GetObjectCommand({ Bucket: 'refused-dr', Key: 'kept', VersionId: put.VersionId }));
    expect(await there.Body!.transformToString()).toBe('kept until the target takes it');
    expect(there.ReplicationStatus).toBe('REPLICA');
  }, 240_000);

  it('objects written before versioning was enabled (null versions), single-part and multipart, are replicated by resync as null versions', async () => {
    await a.s3.send(new CreateBucketCommand({ Bucket: 'pre-versioning' }));
    await versioned(b.s3, 'pre-versioning-dr');
    const small = randomBytes(3000);
    await a.s3.send(new PutObjectCommand({ Bucket: 'pre-versioning', Key: 'small', Body: small }));
    const big = randomBytes(6 * 1024 * 1024);
    const mpu = await a.s3.send(new CreateMultipartUploadCommand({ Bucket: 'pre-versioning', Key: 'big' }));
    const parts = [];
    for (const [i, chunk] of [big.subarray(0, 5 * 1024 * 1024), big.subarray(5 * 1024 * 1024)].entries()) {
      const p = await a.s3.send(new UploadPartCommand({ Bucket: 'pre-versioning', Key: 'big', UploadId: mpu.UploadId!, PartNumber: i + 1, Body: chunk }));
      parts.push({ PartNumber: i + 1, ETag: p.ETag! });
    }
    await a.s3.send(new CompleteMultipartUploadCommand({ Bucket: 'pre-versioning', Key: 'big', UploadId: mpu.UploadId!, MultipartUpload: { Parts: parts } }));
    await a.s3.send(new PutBucketVersioningCommand({ Bucket: 'pre-versioning', VersioningConfiguration: { Status: 'Enabled' } }));
    const add = await cli(['replicate', 'add', 'pre-versioning', '--remote-bucket', `http://${ROOT.accessKey}:${ROOT.secretKey}@${b.hostPort}/pre-versioning-dr`, '--replicate', 'existing-objects']);
    expect(add.code, add.err).toBe(0);
    const start = await cli(['replicate', 'resync', 'start', 'pre-versioning']);
    expect(start.code, start.err).toBe(0);
    await until('the resync to complete', async () => {
      const r = JSON.parse((await cli(['replicate', 'resync', 'status', 'pre-versioning', '--json'])).out) as { state: string }[];
      return r[0]?.state === 'completed' ? true : undefined;
    }, 60_000, 250);
    await drained(a, 'pre-versioning', 60_000);
    const status = await a.replStatus('pre-versioning');
    expect(status.targets[0]!.failed.count, status.targets[0]!.lastError).toBe(0);
    const [va, vb] = await Promise.all([allVersions(a.s3, 'pre-versioning'), allVersions(b.s3, 'pre-versioning-dr')]);
    expect(va.map((v) => v.versionId)).toEqual(['null', 'null']);
    expect(vb.map(rowLine)).toEqual(va.map(rowLine));
    for (const [key, body] of [['small', small], ['big', big]] as const) {
      expect((await a.s3.send(new HeadObjectCommand({ Bucket: 'pre-versioning', Key: key }))).ReplicationStatus).toBe('COMPLETED');
      const got = await b.s3.send(new GetObjectCommand({ Bucket: 'pre-versioning-dr', Key: key, VersionId: 'null' }));
      expect(Buffer.from(await got.Body!.transformToByteArray()).equals(body)).toBe(true);
    }
  }, 120_000);

  it('resync replicates a bucket that had 2 000 objects before the rule existed', async () => {
    await versioned(a.s3, 'old');
    await versioned(b.s3, 'old-dr');
    const N = 2000;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (;;) {
          const i = next++;
          if (i >= N) return;
          await a.s3.send(new PutObjectCommand({ Bucket: 'old', Key: `pre/${String(i).padStart(4, '0')}`, Body: randomBytes(200 + (i % 500)), ...(i % 4 === 0 ? { Tagging: 'era=old' } : {}) }));
        }
      }),
    );
    const remote = `http://${ROOT.accessKey}:${ROOT.secretKey}@${b.hostPort}/old-dr`;
    // Resync needs a rule with existing-objects.
    const add0 = await cli(['replicate', 'add', 'old', '--remote-bucket', remote, '--id', 'no-existing']);
    expect(add0.code, add0.err).toBe(0);
    const early = await cli(['replicate', 'resync', 'start', 'old']);
    expect(early.code).not.toBe(0);
    expect(early.err + early.out).toMatch(/ExistingObjectReplication/);
    const add = await cli(['replicate', 'add', 'old', '--remote-bucket', remote, '--replicate', 'existing-objects,delete-marker', '--id', 'no-existing']);
    expect(add.code, add.err).toBe(0);
    // The rule alone copies nothing that was written before it.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await allVersions(b.s3, 'old-dr')).length).toBe(0);

    const start = await cli(['replicate', 'resync', 'start', 'old', '--json']);
    expect(start.code, start.err).toBe(0);
    expect((JSON.parse(start.out) as { state: string }[])[0]!.state).toBe('running');
    await until('the resync to complete', async () => {
      const r = JSON.parse((await cli(['replicate', 'resync', 'status', 'old', '--json'])).out) as { state: string; scanned: number; queued: number }[];
      return r[0]?.state === 'completed' ? r[0] : undefined;
    }, 180_000, 500).then((r) => {
      expect(r.scanned).toBe(N);
      expect(r.queued).toBe(N);
    });
    await drained(a, 'old', 180_000);
    const [va, vb] = await Promise.all([allVersions(a.s3, 'old'), allVersions(b.s3, 'old-dr')]);
    expect(va.length).toBe(N);
    expect(vb.map(rowLine)).toEqual(va.map(rowLine));
    expect((await a.s3.send(new HeadObjectCommand({ Bucket: 'old', Key: 'pre/1234' }))).ReplicationStatus).toBe('COMPLETED');
    expect((await b.s3.send(new HeadObjectCommand({ Bucket: 'old-dr', Key: 'pre/0004' }))).TagCount).toBe(1);
    // A second resync finds everything COMPLETED and queues nothing; cancel with nothing running is refused.
    await cli(['replicate', 'resync', 'start', 'old']);
    await until('the second resync', async () => {
      const r = JSON.parse((await cli(['replicate', 'resync', 'status', 'old', '--json'])).out) as { state: string; scanned: number; queued: number }[];
      return r[0]?.state === 'completed' ? r[0] : undefined;
    }, 60_000, 250).then((r) => expect(r.queued).toBe(0));
    const cancel = await cli(['replicate', 'resync', 'cancel', 'old']);
    expect(cancel.code).not.toBe(0);
    expect(cancel.err + cancel.out).toMatch(/XSvcReplicationResyncInvalid|no resync/);
  }, 360_000);
});
