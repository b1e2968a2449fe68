/**
 * S3 section: the real `svc server` (4 drives, EC:2) runs as its own
 * process; this process drives it with `@aws-sdk/client-s3` at its default
 * settings (signed payloads over http, a CRC32 checksum) and reads the
 * server's CPU time from /proc. Four rows, each in wall-clock and per
 * server CPU-second (user + system of every server thread):
 *
 *   PUT 64 MiB ×8, 4 concurrent      GET 64 MiB ×8, 4 concurrent
 *   PUT 4 KiB ×1000, 16 concurrent   GET 4 KiB ×1000, 16 concurrent
 *
 * and the 64 MiB rows again with SSE-S3 (the server has a key store), each
 * as a share of its unencrypted row of the same run;
 *
 * beside ceilings measured in the same run: the same client against a plain
 * node:http server process (loopback HTTP, no S3, no disk), single-stream
 * MD5 + SHA-256 (node:crypto), the native multi-buffer hash at 8 streams
 * (what large signed PUTs use where it beats OpenSSL), the fsync'd small-file create rate and raw
 * disk write/read. Then a streamed 1 GiB PUT and its GET, each against a
 * freshly started server (so the figure is that transfer's footprint, not
 * what earlier rows left in the heap) with the server's peak RSS. The targets
 * (about 3× Ceph RGW on this machine kind) are printed as notes (✓ / ✗)
 * next to the per-CPU-second figures. The drives live under `BENCH_DIR`
 * (folders, or fresh XFS file systems with `BENCH_FS=xfs`:
 * `lib/bench-volumes.ts`); the disk and create ceilings run beside the first.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type Row, section, type SectionContext } from './harness.ts';
import { benchVolumes, foldersIn } from './lib/bench-volumes.ts';
import { diskCeilings, hashCeilings, multiBufferCeilings, smallFileCreateRate } from './lib/ceilings.ts';
import { processStatusBytes, RssSampler } from './lib/proc.ts';
import { BIG, BIG_COUNT, drain, MB, MiB, type Run, run, s3Client, SMALL, SMALL_COUNT, type RowKey, type Workload, workload } from './lib/s3-workload.ts';
import { ServerProcess } from './lib/server-process.ts';

const STREAM_BYTES = 1024 * MiB;
const CREDS = { accessKey: 'bench', secretKey: 'bench-secret-key' };

/** Issue 17's targets per server CPU-second. */
const TARGET = { bigPut: 200, bigGet: 600, smallPut: 300, smallGet: 1100 };
const RSS_LIMIT = 200 * MiB;

function client(port: number, agent: Agent): S3Client {
  return s3Client(`http://127.0.0.1:${port}`, CREDS, agent);
}

/** SSE-S3 64 MiB PUT and GET (same counts and concurrency as the unencrypted rows), after them on the same server. */
async function sseWorkload(server: ServerProcess, s3: S3Client, big: Buffer): Promise<{ put: Run; get: Run }> {
  const put = (key: string) => s3.send(new PutObjectCommand({ Bucket: 'bench', Key: key, Body: big, ServerSideEncryption: 'AES256' }));
  const get = async (key: string) => {
    const r = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: key }));
    if ((await drain(r.Body)) !== BIG) throw new Error(`GET ${key}: short`);
  };
  await put('sse/warm');
  await get('sse/warm');
  const putRun = await run(server, BIG_COUNT, 4, (i) => put(`sse/${i}`));
  const getRun = await run(server, BIG_COUNT, 4, (i) => get(`sse/${i}`));
  return { put: putRun, get: getRun };
}

function target(value: number, min: number): string {
  return `target ≥ ${min} ${value >= min ? '✓' : '✗'}`;
}

function rows(ctx: SectionContext, svc: Workload, http: Workload, extra: { hash: number; createPerDrive: number; diskWrite: number; diskRead: number }): void {
  const big = (r: Run) => (BIG_COUNT * BIG) / MB / r.wall;
  const bigCpu = (r: Run) => (BIG_COUNT * BIG) / MB / r.cpu;
  const ops = (r: Run) => SMALL_COUNT / r.wall;
  const opsCpu = (r: Run) => SMALL_COUNT / r.cpu;
  /** A per-server-CPU-second row against the loopback HTTP ceiling, with its target. */
  const perCpu = (name: string, key: RowKey, unit: string, rate: (r: Run) => number, min: number, method: string): Row => ({
    name: `${name}, per server CPU-s`,
    value: rate(svc[key]),
    unit,
    ceiling: { name: `loopback HTTP ${method}`, value: rate(http[key]) },
    note: target(rate(svc[key]), min),
  });
  const out: Row[] = [
    { name: 'PUT 64 MiB ×N, 4 concurrent', value: big(svc.bigPut), unit: 'MB/s', ceiling: { name: 'raw disk write ÷ 2 (EC 2+2)', value: extra.diskWrite / 2 } },
    perCpu('PUT 64 MiB', 'bigPut', 'MB/cpu-s', bigCpu, TARGET.bigPut, 'PUT'),
    { name: 'PUT 64 MiB, per server CPU-s (vs hashing)', value: bigCpu(svc.bigPut), unit: 'MB/cpu-s', ceiling: { name: 'single-stream MD5+SHA-256', value: extra.hash } },
    { name: 'GET 64 MiB ×N, 4 concurrent', value: big(svc.bigGet), unit: 'MB/s', ceiling: { name: 'raw disk read', value: extra.diskRead } },
    perCpu('GET 64 MiB', 'bigGet', 'MB/cpu-s', bigCpu, TARGET.bigGet, 'GET'),
    { name: 'PUT 4 KiB ×N, 16 concurrent', value: ops(svc.smallPut), unit: 'ops/s', ceiling: { name: "fsync'd creates ÷ 4 drives", value: extra.createPerDrive } },
    perCpu('PUT 4 KiB', 'smallPut', 'ops/cpu-s', opsCpu, TARGET.smallPut, 'PUT'),
    { name: 'GET 4 KiB ×N, 16 concurrent', value: ops(svc.smallGet), unit: 'ops/s', ceiling: { name: 'loopback HTTP GET', value: ops(http.smallGet) } },
    perCpu('GET 4 KiB', 'smallGet', 'ops/cpu-s', opsCpu, TARGET.smallGet, 'GET'),
  ];
  for (const r of out) ctx.row(r);
}

/** A 1 GiB body generated as it is sent (the client never holds it). */
function streamBody(bytes: number, chunk: Buffer): Readable {
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const c = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= c.length;
      this.push(c);
    },
  });
}

/**
 * The streamed 1 GiB PUT, then the GET of it from a server restarted over
 * the same drives, so each peak is that transfer's own (RSS does not shrink
 * back after the PUT). `start` launches a fresh server.
 */
async function streamed(ctx: SectionContext, start: () => Promise<ServerProcess>, agent: Agent): Promise<void> {
  const chunk = randomBytes(MiB);
  const want = createHash('md5');
  for (let off = 0; off < STREAM_BYTES; off += MiB) want.update(chunk);
  const note = (peak: number, idle: number) => `peak RSS ${(peak / MiB).toFixed(0)} MiB (idle ${(idle / MiB).toFixed(0)}), limit < ${RSS_LIMIT / MiB} ${peak < RSS_LIMIT ? '✓' : '✗'}`;
  const measured = async (op: (server: ServerProcess, s3: S3Client) => Promise<unknown>): Promise<{ run: Run; peak: number; idle: number }> => {
    const server = await start();
    const s3 = client(server.port, agent);
    try {
      const idle = processStatusBytes(server.pid, 'VmRSS');
      const rss = new RssSampler(server.pid);
      const r = await run(server, 1, 1, () => op(server, s3));
      return { run: r, peak: rss.stop(), idle };
    } finally {
      s3.destroy();
      await server.stop();
    }
  };
  const put = await measured((_, s3) =>
    s3.send(new PutObjectCommand({ Bucket: 'bench', Key: 'stream/1g', Body: streamBody(STREAM_BYTES, chunk), ContentLength: STREAM_BYTES })),
  );
  const got = createHash('md5');
  let n = 0;
  const get = await measured(async (_, s3) => {
    const r = await s3.send(new GetObjectCommand({ Bucket: 'bench', Key: 'stream/1g' }));
    for await (const c of r.Body as AsyncIterable<Uint8Array>) {
      got.update(c);
      n += c.length;
    }
  });
  if (n !== STREAM_BYTES || got.digest('hex') !== want.digest('hex')) throw new Error('streamed 1 GiB GET returned different bytes');
  ctx.row({ name: 'PUT 1 GiB streamed (aws-chunked)', value: STREAM_BYTES / MB / put.run.cpu, unit: 'MB/cpu-s', note: note(put.peak, put.idle) });
  ctx.row({ name: 'GET 1 GiB streamed', value: STREAM_BYTES / MB / get.run.cpu, unit: 'MB/cpu-s', note: note(get.peak, get.idle) });
}

section('s3: @aws-sdk/client-s3 against svc server in its own process (4 drives EC:2)', async (ctx) => {
  const volumes = await benchVolumes(ctx, 'svc-drive', 4);
  const base = volumes.roots[0]!;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let svc: ServerProcess | undefined;
  let http: ServerProcess | undefined;
  try {
    // Ceilings first (this process alone busy): hashing and the disk. The small-file create rate
    // comes after the svc rows: its renames replace files, and on ext4 without a journal (this
    // machine's root file system) every create then scans the inodes freed in the last ~30 s
    // (`recently_deleted`), so deleting before the 4 KiB PUT row would charge the server for it.
    const hash = hashCeilings(ctx);
    const disk = await diskCeilings(ctx, base);
    multiBufferCeilings(ctx, hash);

    const big = randomBytes(BIG);
    const small = randomBytes(SMALL);
    http = await ServerProcess.httpCeiling(BIG);
    const httpClient = client(http.port, agent);
    const httpRun = await workload(http, httpClient, big, small);
    httpClient.destroy();
    await http.stop();
    http = undefined;

    const drives = await foldersIn(volumes, 'svc');
    // The same key store for the restarts below: the identity store is sealed with it once it exists.
    const kms = { SVC_KMS_SECRET_KEY: `bench-key:${randomBytes(32).toString('base64')}` };
    svc = await ServerProcess.svc([drives.arg], CREDS, kms);
    const s3 = client(svc.port, agent);
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    ctx.info(`server pid ${svc.pid}; figures per server CPU-second count every server thread; N = ${BIG_COUNT} large, ${SMALL_COUNT} small`);
    const svcRun = await workload(svc, s3, big, small);
    const creates = await smallFileCreateRate(ctx, base);
    rows(ctx, svcRun, httpRun, { hash: hash.md5Sha256, createPerDrive: creates / 4, diskWrite: disk.write, diskRead: disk.read });
    // SSE-S3 end to end, beside the unencrypted rows of this run (issue 16's target: ≥ 70 % of unencrypted).
    const sse = await sseWorkload(svc, s3, big);
    const mbs = (r: Run) => (BIG_COUNT * BIG) / MB / r.wall;
    const mbcpu = (r: Run) => (BIG_COUNT * BIG) / MB / r.cpu;
    const sseNote = (v: number, of: number) => `target ≥ 70% ${v >= 0.7 * of ? '✓' : '✗'}`;
    ctx.row({ name: 'PUT 64 MiB SSE-S3 ×N, 4 concurrent', value: mbs(sse.put), unit: 'MB/s', ceiling: { name: 'unencrypted PUT', value: mbs(svcRun.bigPut) }, note: sseNote(mbs(sse.put), mbs(svcRun.bigPut)) });
    ctx.row({ name: 'PUT 64 MiB SSE-S3, per server CPU-s', value: mbcpu(sse.put), unit: 'MB/cpu-s', ceiling: { name: 'unencrypted PUT', value: mbcpu(svcRun.bigPut) } });
    ctx.row({ name: 'GET 64 MiB SSE-S3 ×N, 4 concurrent', value: mbs(sse.get), unit: 'MB/s', ceiling: { name: 'unencrypted GET', value: mbs(svcRun.bigGet) }, note: sseNote(mbs(sse.get), mbs(svcRun.bigGet)) });
    ctx.row({ name: 'GET 64 MiB SSE-S3, per server CPU-s', value: mbcpu(sse.get), unit: 'MB/cpu-s', ceiling: { name: 'unencrypted GET', value: mbcpu(svcRun.bigGet) } });
    s3.destroy();
    await svc.stop();
    svc = undefined;
    await streamed(ctx, () => ServerProcess.svc([drives.arg], CREDS, kms), agent);
  } finally {
    agent.destroy();
    await http?.stop();
    await svc?.stop();
    await volumes.close();
  }
});

/*
 * The 4 KiB PUT row alone (`npm run bench -- small-put`), for A/B runs of one
 * change to the small-object write path: no ceilings, no other rows. The same
 * server setup, client, warm-up, count (`BENCH_SCALE`) and concurrency as the
 * row in the `s3` section; drives as there (`lib/bench-volumes.ts`; see
 * "Small PUTs and the file system" in docs/s3-api.md for why they matter).
 * `BENCH_SMALL_PUT_RUNS` repeats the timed row on the same server (fresh keys
 * each time) and prints each run.
 */
section('small-put: the 4 KiB PUT row alone, svc server in its own process (4 drives EC:2)', async (ctx) => {
  const volumes = await benchVolumes(ctx, 'svc-drive', 4);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let svc: ServerProcess | undefined;
  try {
    svc = await ServerProcess.svc([(await foldersIn(volumes, 'svc')).arg], CREDS);
    const s3 = client(svc.port, agent);
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    const small = randomBytes(SMALL);
    const put = (key: string) => s3.send(new PutObjectCommand({ Bucket: 'bench', Key: key, Body: small }));
    for (let i = 0; i < 32; i++) await put(`small/warm-${i}`);
    const runs = Math.max(1, Number(process.env.BENCH_SMALL_PUT_RUNS ?? '1') || 1);
    ctx.info(`server pid ${svc.pid}; N = ${SMALL_COUNT} per run, ${runs} run(s)`);
    for (let r = 0; r < runs; r++) {
      const res = await run(svc, SMALL_COUNT, 16, (i) => put(`small/${r}-${i}`));
      ctx.row({ name: `PUT 4 KiB ×N, 16 concurrent, run ${r + 1}`, value: SMALL_COUNT / res.wall, unit: 'ops/s' });
      ctx.row({ name: `PUT 4 KiB, per server CPU-s, run ${r + 1}`, value: SMALL_COUNT / res.cpu, unit: 'ops/cpu-s', note: target(SMALL_COUNT / res.cpu, TARGET.smallPut) });
    }
    s3.destroy();
  } finally {
    agent.destroy();
    await svc?.stop();
    await volumes.close();
  }
});
