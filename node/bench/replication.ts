/**
 * Replication section: how fast bucket replication moves bytes to another
 * svc, as a share of a plain copy of the same bytes in the same run. Two
 * real `svc server` processes (4 drive folders each), N objects of 1 MiB on
 * A. The ceiling: each object read from A and written to B by an S3 client
 * (GET streamed into PUT, 16 at a time, the replication workers' width). The
 * measured: the same objects replicated by A's engine (a rule with
 * ExistingObjectReplication and a resync: the walk queues them, the copy
 * workers drain the queue), timed from the resync start until A's status
 * counts all N copies done. Every replica must be on B with its version id,
 * or the section fails.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutBucketReplicationCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { AdminClient } from '../src/cli/admin/client.ts';
import { section } from './harness.ts';
import { s3Client } from './lib/s3-workload.ts';
import { ServerProcess } from './lib/server-process.ts';

const MiB = 1024 * 1024;
const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;
const COUNT = Math.max(16, Math.round(64 * scale));
const CREDS = { accessKey: 'bench', secretKey: 'bench-secret-key' };
const WIDTH = 16;

async function pool(n: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

section('replication: 1 MiB objects to another svc by the engine vs a plain GET→PUT copy, same run', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-repl-'));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const servers: ServerProcess[] = [];
  const clients: S3Client[] = [];
  try {
    for (const site of ['a', 'b']) for (let i = 1; i <= 4; i++) await mkdir(join(base, site, `d${i}`), { recursive: true });
    const [a, b] = await Promise.all(['a', 'b'].map((site) => ServerProcess.svc([join(base, site, 'd{1...4}')], CREDS)));
    servers.push(a!, b!);
    const s3 = (p: ServerProcess) => {
      const c = s3Client(`http://127.0.0.1:${p.port}`, CREDS, agent, { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
      clients.push(c);
      return c;
    };
    const [sa, sb] = [s3(a!), s3(b!)];
    for (const [c, bucket] of [
      [sa, 'src'],
      [sb, 'copy'],
      [sb, 'dst'],
    ] as const) {
      await c.send(new CreateBucketCommand({ Bucket: bucket }));
      await c.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));
    }
    const body = randomBytes(MiB);
    await pool(COUNT, WIDTH, (i) => sa.send(new PutObjectCommand({ Bucket: 'src', Key: `o/${i}`, Body: body })));

    // Ceiling: the same bytes copied by a client, GET streamed into PUT.
    const t0 = performance.now();
    await pool(COUNT, WIDTH, async (i) => {
      const got = await sa.send(new GetObjectCommand({ Bucket: 'src', Key: `o/${i}` }));
      await sb.send(new PutObjectCommand({ Bucket: 'copy', Key: `o/${i}`, Body: got.Body as Readable, ContentLength: got.ContentLength! }));
    });
    const plainS = (performance.now() - t0) / 1000;

    // Replication: a target, a rule for existing objects, a resync; done when A counts N copies.
    const admin = new AdminClient({ name: 'bench', url: `http://127.0.0.1:${a!.port}`, ...CREDS });
    const target = { endpoint: `127.0.0.1:${b!.port}`, targetbucket: 'dst', credentials: CREDS, secure: false, type: 'replication' };
    const arn = JSON.parse((await admin.request('PUT', 'v3/set-remote-target', { bucket: 'src' }, JSON.stringify(target))).text) as string;
    await sa.send(
      new PutBucketReplicationCommand({
        Bucket: 'src',
        ReplicationConfiguration: {
          Role: '',
          Rules: [{ ID: 'all', Priority: 1, Status: 'Enabled', Filter: { Prefix: '' }, DeleteMarkerReplication: { Status: 'Disabled' }, ExistingObjectReplication: { Status: 'Enabled' }, Destination: { Bucket: arn } }],
        },
      }),
    );
    const t1 = performance.now();
    await admin.request('POST', 'v3/replication/resync/start', { bucket: 'src' });
    for (;;) {
      const st = JSON.parse((await admin.request('GET', 'v3/replication/status', { bucket: 'src' })).text) as { targets: { completed: { count: number }; failed: { count: number }; lastError?: string }[] }[];
      const t = st[0]?.targets[0];
      if (t !== undefined && t.completed.count >= COUNT) break;
      if (t !== undefined && t.failed.count > 0) throw new Error(`replication copies failed: ${t.lastError ?? ''}`);
      if (performance.now() - t1 > 300_000) throw new Error(`replication copied ${t?.completed.count ?? 0} of ${COUNT} in 5 minutes`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const replS = (performance.now() - t1) / 1000;
    const listed = await sb.send(new ListObjectVersionsCommand({ Bucket: 'dst', MaxKeys: 1000 }));
    const want = await sa.send(new ListObjectVersionsCommand({ Bucket: 'src', MaxKeys: 1000 }));
    const ids = (l: typeof listed) => (l.Versions ?? []).map((v) => `${v.Key} ${v.VersionId}`).sort().join('\n');
    if ((listed.Versions ?? []).length !== COUNT || ids(listed) !== ids(want)) throw new Error(`B holds ${(listed.Versions ?? []).length} of ${COUNT} replicas, or other version ids`);

    ctx.info(`servers ${a!.pid} → ${b!.pid}; N = ${COUNT} objects of 1 MiB; ${WIDTH} at a time both ways`);
    const mbs = (s: number) => (COUNT * MiB) / 1e6 / s;
    ctx.row({ name: `replicate ${COUNT} × 1 MiB (resync, copy workers)`, value: mbs(replS), unit: 'MB/s', ceiling: { name: 'plain GET→PUT copy of the same bytes', value: mbs(plainS) } });
  } finally {
    for (const c of clients) c.destroy();
    agent.destroy();
    await Promise.all(servers.map((s) => s.stop()));
    await rm(base, { recursive: true, force: true });
  }
});
