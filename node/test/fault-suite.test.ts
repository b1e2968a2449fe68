/**
 * The fault suite (issue 27): four real `svc` processes, each in a mount
 * namespace and a network namespace of its own on a private bridge, two
 * drives each (8 drives, EC:4), under a writer/reader workload that goes on
 * through one fault after another:
 *
 *   drive wiped · drive corrupted (bitrot) · drive full (tmpfs) · drive
 *   read-only (a read-only remount) · node killed (SIGKILL, writes in
 *   flight) · node stopped (SIGSTOP) · node clock-skewed (libfaketime,
 *   +10 min) · node partitioned (its link down) · node slowed (netem delay
 *   and loss; a token bucket and random drops where the kernel lacks netem)
 *   · a crash mid-PUT and mid-multipart upload
 *
 * Clients use the nodes a load balancer would (not the one taken away);
 * every object the cluster acknowledged is remembered with its MD5 and, at
 * the end, with every node back, read back and compared: none may be lost
 * or different. Each read during the run is checked too. The result table
 * is printed and kept with every node's log in artifacts/fault-suite/, with
 * the GET p99 while one node of four is stopped: the target is a second
 * (reported met or not), asserted against max(2 s, 15 x the baseline's
 * median GET of the same run) so a loaded machine cannot fail it while a
 * frozen peer holding reads (30 s) fails it anywhere. docs/fault-suite.md has the matrix and the decisions.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, mkdirSync, openSync, readdirSync, readFileSync, statfsSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { keepAliveHandler } from './helpers/s3-client.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, skewedClockEnv, TestCluster } from './helpers/cluster.ts';
import { canUseNetNamespaces, NetNamespaces } from './helpers/netns.ts';
import { canMountTmpfs, mountTmpfs } from './helpers/tmpfs.ts';

const hasFaketime = skewedClockEnv('+1s') !== undefined;
const enabled = canUseMountNamespaces() && canUseNetNamespaces() && canMountTmpfs() && hasFaketime;
const BUCKET = 'faults';
/** Where the report and every node's log are kept (CI keeps artifacts/). */
const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../artifacts/fault-suite');
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PhaseStats {
  name: string;
  fault: string;
  seconds: number;
  putOk: number;
  putFailed: number;
  getOk: number;
  getFailed: number;
  latencies: number[];
  /** When the phase's fault was applied (performance.now()). */
  began: number;
  /** When each read of `latencies` began, ms after the phase's fault was applied. */
  startedAt: number[];
  /** How long the fault's window lasted (ms from `began` until it was undone). */
  windowMs: number;
  /** This test process's longest event-loop stall during the phase (ms): a read's time includes it. */
  loopStallMs: number;
  /** Failed requests by status and error name (e.g. `503 ErasureWriteQuorum`). */
  errors: Map<string, number>;
}

function newPhase(name: string, fault: string, seconds: number): PhaseStats {
  return { name, fault, seconds, putOk: 0, putFailed: 0, getOk: 0, getFailed: 0, latencies: [], startedAt: [], windowMs: 0, loopStallMs: 0, errors: new Map(), began: performance.now() };
}

function tally(p: PhaseStats, op: 'PUT' | 'GET', err: unknown): void {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  const what = `${op} ${e.$metadata?.httpStatusCode ?? 'no status'} ${e.name ?? 'Error'}`;
  p.errors.set(what, (p.errors.get(what) ?? 0) + 1);
}

/** Retries `fn` while it fails (a client's retries of a 503), up to `timeoutMs`. */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > end) throw new Error(`still failing after ${timeoutMs} ms: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`, { cause: err });
      await sleep(500);
    }
  }
}

/** The `n` slowest reads of a phase: "latency ms @ start s" each. */
function slowest(p: PhaseStats, n: number): string {
  return p.latencies
    .map((ms, i) => ({ ms, at: p.startedAt[i]! }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n)
    .map((r) => `${Math.round(r.ms)} @ ${(r.at / 1000).toFixed(1)}`)
    .join(', ');
}

function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
}

/** Writers PUT new keys (never overwrite: an unacknowledged write leaves no doubt about an acknowledged one); readers GET acknowledged keys and check their bytes. */
class Workload {
  readonly acked = new Map<string, { md5: string; size: number }>();
  readonly integrity: string[] = [];
  phase: PhaseStats = newPhase('warm-up', '', 0);
  /** Nodes clients may use now (a load balancer's view). */
  targets: number[] = [1, 2, 3, 4];
  #running = false;
  #loops: Promise<void>[] = [];
  /** Requests in flight per node. */
  readonly #inflight = new Map<number, number>();
  #seq = 0;
  readonly #clients: Map<number, S3Client>;

  constructor(clients: Map<number, S3Client>) {
    this.#clients = clients;
  }

  /** Sends through one of the current targets, counting the request in flight on that node. */
  async #send<T>(send: (c: S3Client) => Promise<T>): Promise<T> {
    const t = this.targets;
    const k = t[Math.floor(Math.random() * t.length)]!;
    this.#inflight.set(k, (this.#inflight.get(k) ?? 0) + 1);
    try {
      return await send(this.#clients.get(k)!);
    } finally {
      this.#inflight.set(k, this.#inflight.get(k)! - 1);
    }
  }

  /**
   * Until no request is in flight to a node outside the targets (a load balancer draining it),
   * so a fault applied next meets only the requests it is meant to meet. Without it, a reader
   * whose GET had just gone to the node about to be frozen hung there for its whole timeout, and
   * with both readers caught so the frozen phase measured no read at all.
   */
  async drain(timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    const busy = () => [...this.#inflight].filter(([k, n]) => n > 0 && !this.targets.includes(k));
    while (busy().length > 0) {
      if (Date.now() > end) throw new Error(`requests still in flight to node(s) ${busy().map(([k]) => k).join(', ')} after ${timeoutMs} ms`);
      await sleep(20);
    }
  }

  start(writers: number, readers: number): void {
    this.#running = true;
    for (let w = 0; w < writers; w++) this.#loops.push(this.#writer(w));
    for (let r = 0; r < readers; r++) this.#loops.push(this.#reader());
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  async #writer(w: number): Promise<void> {
    const sizes = [1_000, 60_000, 700_000, 3_000_000];
    while (this.#running) {
      const n = this.#seq++;
      const key = `w${w}/${String(n).padStart(6, '0')}`;
      const body = randomBytes(sizes[n % sizes.length]!);
      const p = this.phase;
      try {
        await this.#send((c) => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body })));
        this.acked.set(key, { md5: md5(body), size: body.length });
        p.putOk++;
      } catch (err) {
        p.putFailed++;
        tally(p, 'PUT', err);
      }
      await sleep(40);
    }
  }

  async #reader(): Promise<void> {
    while (this.#running) {
      const keys = [...this.acked.keys()];
      if (keys.length === 0) {
        await sleep(50);
        continue;
      }
      const key = keys[Math.floor(Math.random() * keys.length)]!;
      const p = this.phase;
      const t0 = performance.now();
      try {
        const bytes = await this.#send(async (c) => {
          const got = await c.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
          return got.Body!.transformToByteArray();
        });
        p.latencies.push(performance.now() - t0);
        p.startedAt.push(t0 - p.began);
        p.getOk++;
        if (md5(bytes) !== this.acked.get(key)!.md5) this.integrity.push(`${p.name}: ${key} read back different bytes`);
      } catch (err) {
        p.getFailed++;
        tally(p, 'GET', err);
      }
      await sleep(20);
    }
  }
}

describe.skipIf(!enabled)('fault suite: every acknowledged object survives', () => {
  let net: NetNamespaces;
  let c: TestCluster;
  const clients = new Map<number, S3Client>();
  let w: Workload;
  const phases: PhaseStats[] = [];
  /** Lines under the table (crash outcomes, totals, the p99 verdict). */
  const extra: string[] = [];
  let reported = false;

  /** Prints the result table (also when the run stopped half way) and keeps it in artifacts/. */
  function report(): void {
    reported = true;
    const ms = (xs: number[], q: number) => (xs.length === 0 ? '-' : Math.round(quantile(xs, q)).toString());
    const rows = phases.map((p) => [
      p.name,
      p.fault,
      String(p.seconds),
      String(p.putOk),
      String(p.putFailed),
      String(p.getOk),
      String(p.getFailed),
      ms(p.latencies, 0.5),
      ms(p.latencies, 0.99),
      ms(p.latencies, 1),
      String(Math.round(p.loopStallMs)),
      [...p.errors].map(([k, n]) => `${n}x ${k}`).join(', ') || '-',
    ]);
    const head = ['phase', 'fault', 's', 'PUT ok', 'PUT failed', 'GET ok', 'GET failed', 'GET p50 ms', 'GET p99 ms', 'GET max ms', 'test stall ms', 'failures'];
    const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (r: string[]) => r.map((x, i) => x.padEnd(width[i]!)).join('  ').trimEnd();
    const text = [
      '',
      'fault suite: 4 nodes x 2 drives (EC:4), each node in its own network and mount namespace',
      line(head),
      line(head.map((h, i) => '-'.repeat(width[i]!))),
      ...rows.map(line),
      ...extra,
      '',
    ].join('\n');
    process.stdout.write(text);
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'report.txt'), text);
  }

  beforeAll(async () => {
    net = NetNamespaces.create(4);
    // A fast scanner, so the damage of one phase is healed before the next piles on.
    c = await TestCluster.create({ nodes: 4, drivesPerNode: 2, network: net, env: { SVC_SCANNER_INTERVAL: '2s', SVC_HEAL_SPEED: 'fast' } });
    // Node 4's second drive is a small file system of its own: it can be filled. Big enough
    // for what the whole run writes to it (a quarter of every object, ~0.3 GB here): at 256 MiB
    // it filled up by itself in later phases, so a node killed there met a full drive as a
    // second fault and left writes exactly at quorum.
    mountTmpfs(c.drivePath(4, 0, 2), 1 << 30);
    await Promise.all([1, 2, 3, 4].map((k) => c.start(k)));
    await Promise.all([1, 2, 3, 4].map((k) => c.waitReady(k, 90_000)));
    await settle();
    for (const k of [1, 2, 3, 4]) {
      clients.set(
        k,
        new S3Client({
          endpoint: c.url(k),
          region: 'us-east-1',
          forcePathStyle: true,
          credentials: { accessKeyId: c.accessKey, secretAccessKey: c.secretKey },
          maxAttempts: 1,
          // A request hung longer than this fails (and is counted) rather than holding a worker.
          requestHandler: keepAliveHandler({ connectionTimeout: 2_000, requestTimeout: 20_000, throwOnRequestTimeout: true }),
        }),
      );
    }
    await clients.get(1)!.send(new CreateBucketCommand({ Bucket: BUCKET }));
    w = new Workload(clients);
  }, 180_000);

  afterAll(async () => {
    await w?.stop();
    if (!reported && phases.length > 0) report();
    if (c !== undefined) {
      mkdirSync(ARTIFACTS, { recursive: true });
      for (const k of [1, 2, 3, 4]) copyFileSync(c.logPath(k), join(ARTIFACTS, `node${k}.log`));
    }
    for (const cl of clients.values()) cl.destroy();
    if (c !== undefined) for (const k of [1, 2, 3, 4]) if (c.isRunning(k)) c.signal(k, 'SIGCONT');
    await c?.close();
    net?.closeSync();
  });

  /** Until every node takes writes and reaches every other node (between phases: one fault at a time). */
  async function settle(timeoutMs = 60_000): Promise<void> {
    for (const k of [1, 2, 3, 4]) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const r = await c.get(k, '/compat/health/cluster').catch(() => ({ status: 0, body: '' }));
        const peers = r.status === 200 ? (JSON.parse(r.body) as { details: { peers?: { detail?: string } } }).details.peers?.detail : undefined;
        if (peers?.startsWith('4 of 4 nodes reachable') === true) break;
        if (Date.now() > end) throw new Error(`node ${k} did not take writes with every node reachable (${r.status} ${peers ?? r.body.slice(0, 300)}):\n${await c.warnings(20)}`);
        await sleep(250);
      }
    }
  }

  /** Runs the workload for `ms` with a fault applied, records the phase. */
  async function phase(name: string, fault: string, ms: number, apply: () => Promise<string | void> | string | void, undo: () => Promise<void> | void, targets = [1, 2, 3, 4]): Promise<PhaseStats> {
    const p = newPhase(name, fault, ms / 1000);
    w.targets = targets;
    await w.drain();
    w.phase = p;
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const detail = await apply();
    p.began = performance.now();
    if (typeof detail === 'string') p.fault = `${fault}: ${detail}`;
    await sleep(ms);
    // The fault's window ends here: reads begun from now on (the node coming back, the settle
    // below) are the recovery's, not the fault's. They used to count in the phase, and its
    // slowest reads were those after the SIGCONT, not while the node was stopped.
    w.phase = newPhase(`after ${name}`, '', 0);
    p.windowMs = performance.now() - p.began;
    stalls.disable();
    p.loopStallMs = stalls.max / 1e6;
    await undo();
    phases.push(p);
    await settle();
    w.targets = [1, 2, 3, 4];
    return p;
  }

  /** Files named part.1 under a drive (shards to corrupt). */
  function shardFiles(dir: string, out: string[] = []): string[] {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) shardFiles(p, out);
      else if (e.name === 'part.1') out.push(p);
    }
    return out;
  }

  function inNodeNs(k: number, ...args: string[]): void {
    const r = spawnSync('nsenter', [`--mount=/proc/${c.pid(k)}/ns/mnt`, '--', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${args.join(' ')} in node ${k}: ${r.stderr}`);
  }

  async function restart(k: number, env: Record<string, string> = {}, wrap: string[] = []): Promise<void> {
    await c.stop(k);
    await c.start(k, env, wrap);
  }

  it('runs every fault with the workload on and loses nothing acknowledged', { timeout: 900_000 }, async () => {
    w.start(2, 2);
    await phase('baseline', 'none', 10_000, () => undefined, () => undefined);

    // Early, on a healthy cluster: the GET latency with one node of four frozen is the issue's measure.
    const stopped = await phase(
      'node stopped',
      'node 4 SIGSTOPped',
      12_000,
      () => c.signal(4, 'SIGSTOP'),
      () => c.signal(4, 'SIGCONT'),
      [1, 2, 3],
    );
    await c.waitReady(4, 60_000);

    await phase(
      'drive wiped',
      'node 2 drive 1 emptied under the running node',
      8_000,
      () => {
        const d = c.drivePath(2, 0, 1);
        for (const e of readdirSync(d)) spawnSync('rm', ['-rf', join(d, e)]);
      },
      () => undefined,
    );

    await phase(
      'drive corrupted',
      'bytes flipped in shard files of node 3 drive 1',
      6_000,
      () => {
        const files = shardFiles(join(c.drivePath(3, 0, 1), BUCKET)).slice(0, 25);
        for (const f of files) {
          const b = readFileSync(f);
          if (b.length > 100) {
            b[50] = b[50]! ^ 0xff;
            writeFileSync(f, b);
          }
        }
        return `${files.length} files`;
      },
      () => undefined,
    );

    const filler = join(c.drivePath(4, 0, 2), 'filler');
    await phase(
      'drive full',
      'node 4 drive 2 (tmpfs) filled',
      8_000,
      () => {
        // Filled to the last byte, in 8 MiB writes (ENOSPC ends it).
        const fd = openSync(filler, 'w');
        const chunk = Buffer.alloc(8 << 20, 1);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        } finally {
          closeSync(fd);
        }
        const left = statfsSync(c.drivePath(4, 0, 2));
        return `${Math.round(statSync(filler).size / 1e6)} MB filler, ${Number(left.bavail * left.bsize)} bytes left`;
      },
      () => unlinkSync(filler),
    );

    const ro = join(c.sharedPath, 'd2');
    await phase(
      'drive read-only',
      'node 1 drive 2 remounted read-only',
      8_000,
      async () => {
        inNodeNs(1, 'mount', '--bind', ro, ro);
        // The kernel refuses (EBUSY) while a write the node opened through the new mount is open: retried.
        for (let i = 0; ; i++) {
          try {
            inNodeNs(1, 'mount', '-o', 'remount,bind,ro', ro);
            return i === 0 ? undefined : `after ${i + 1} attempts`;
          } catch (err) {
            if (i >= 50) throw err;
            await sleep(100);
          }
        }
      },
      // Detached at once (lazily: a read open through it finishes there), the drive writable again.
      () => inNodeNs(1, 'umount', '-l', ro),
    );

    await phase(
      'node killed',
      'node 3 SIGKILLed with writes in flight, restarted',
      8_000,
      () => c.stop(3, 'SIGKILL'),
      async () => {
        await c.start(3);
        await c.waitReady(3, 60_000);
      },
      [1, 2, 4],
    );

    await phase(
      'clock skewed',
      'node 2 restarted 10 min ahead (libfaketime)',
      8_000,
      () => restart(2, skewedClockEnv('+600s')),
      async () => {
        await restart(2);
        await c.waitReady(2, 60_000);
      },
      [1, 3, 4],
    );

    await phase('partitioned', 'node 1 cut off', 8_000, () => net.fault(1, 'partition'), () => net.clear(1), [2, 3, 4]);
    await phase('slowed', 'node 3 link', 8_000, () => net.fault(3, 'slow'), () => net.clear(3));
    await w.stop();

    // Crash mid-PUT: a 24 MiB body trickling into node 4, which is killed half way.
    const s3 = (k: number) => clients.get(k)!;
    const big = randomBytes(24 << 20);
    const torn = s3(4)
      .send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'crash/put',
          ContentLength: big.length,
          Body: Readable.from(
            (async function* () {
              for (let i = 0; i < 24; i++) {
                yield big.subarray(i << 20, (i + 1) << 20);
                await sleep(100);
              }
            })(),
          ),
        }),
      )
      .then(
        () => 'acknowledged',
        () => 'failed',
      );
    await sleep(1_000);
    await c.stop(4, 'SIGKILL');
    const putOutcome = await torn;
    await c.start(4);
    await c.waitReady(4, 60_000);
    await settle();
    // Never half visible: absent, or whole.
    const after = await eventually(() =>
      s3(1)
        .send(new GetObjectCommand({ Bucket: BUCKET, Key: 'crash/put' }))
        .then(
          async (r) => md5(await r.Body!.transformToByteArray()),
          (e: { name?: string }) => {
            if (e.name === 'NoSuchKey') return 'NoSuchKey';
            throw e;
          },
        ),
    );
    expect(after === 'NoSuchKey' || after === md5(big)).toBe(true);
    if (putOutcome === 'acknowledged') w.acked.set('crash/put', { md5: md5(big), size: big.length });

    // Crash mid-multipart: part 2 streaming into node 2 when it dies; the upload completes through node 1.
    const part = (n: number) => randomBytes(5 << 20).fill(n, 0, 1);
    const p1 = part(1);
    const p2 = part(2);
    const up = await eventually(() => s3(2).send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: 'crash/multipart' })));
    const e1 = await eventually(() => s3(2).send(new UploadPartCommand({ Bucket: BUCKET, Key: 'crash/multipart', UploadId: up.UploadId, PartNumber: 1, Body: p1 })));
    const cut = s3(2)
      .send(
        new UploadPartCommand({
          Bucket: BUCKET,
          Key: 'crash/multipart',
          UploadId: up.UploadId,
          PartNumber: 2,
          ContentLength: p2.length,
          Body: Readable.from(
            (async function* () {
              for (let i = 0; i < 5; i++) {
                yield p2.subarray(i << 20, (i + 1) << 20);
                await sleep(200);
              }
            })(),
          ),
        }),
      )
      .catch(() => undefined);
    await sleep(400);
    await c.stop(2, 'SIGKILL');
    await cut;
    // Through node 1, retried as an SDK retries a 503 while the cluster sees node 2 go.
    let attempts = 0;
    const e2 = await eventually(() => {
      attempts++;
      return s3(1).send(new UploadPartCommand({ Bucket: BUCKET, Key: 'crash/multipart', UploadId: up.UploadId, PartNumber: 2, Body: p2 }));
    }, 90_000);
    await eventually(() =>
      s3(1).send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key: 'crash/multipart',
          UploadId: up.UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag: e1.ETag }, { PartNumber: 2, ETag: e2.ETag }] },
        }),
      ),
      90_000,
    );
    extra.push(`crash mid-PUT: ${putOutcome}, afterwards ${after === 'NoSuchKey' ? 'absent' : 'whole'}; crash mid-multipart: part 2 re-sent through node 1 (${attempts} attempt(s)), completed`);
    w.acked.set('crash/multipart', { md5: md5(Buffer.concat([p1, p2])), size: p1.length + p2.length });
    await c.start(2);
    await c.waitReady(2, 60_000);
    await settle();

    // Every acknowledged object, read back with every node up. A 503 is retried for a
    // minute, as a client retries it (a loaded node can miss a ping and be skipped for a
    // moment); an object still unreadable then, or with different bytes, is lost.
    const lost: string[] = [];
    const keys = [...w.acked.keys()];
    let next = 0;
    let retried = 0;
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        while (next < keys.length) {
          const key = keys[next++]!;
          const want = w.acked.get(key)!;
          let attempts = 0;
          try {
            const b = await eventually(async () => {
              attempts++;
              const r = await s3(((i + attempts) % 4) + 1).send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
              return r.Body!.transformToByteArray();
            }, 60_000);
            if (md5(b) !== want.md5) lost.push(`${key}: different bytes`);
          } catch (err) {
            lost.push(`${key}: ${(err as Error).name}`);
          }
          if (attempts > 1) retried++;
        }
      }),
    );
    // The listing names every acknowledged key (listed again while one is missing, for a minute).
    const list = async (): Promise<Set<string>> => {
      const listed = new Set<string>();
      let token: string | undefined;
      do {
        const page = await s3(3).send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }));
        for (const o of page.Contents ?? []) listed.add(o.Key!);
        token = page.NextContinuationToken;
      } while (token !== undefined);
      return listed;
    };
    let listings = 0;
    let unlisted = keys;
    const listEnd = Date.now() + 60_000;
    while (unlisted.length > 0 && Date.now() < listEnd) {
      if (listings++ > 0) await sleep(1_000);
      const listed = await list().catch(() => new Set<string>());
      unlisted = keys.filter((k) => !listed.has(k));
    }
    extra.push(`final read-back: ${retried} object(s) needed a retry; listings until complete: ${listings}`);

    const stoppedP99 = quantile(stopped.latencies, 0.99);
    const baseP50 = quantile(phases[0]!.latencies, 0.5);
    // The issue's target is 1 s, reported below. The assertion must not flake on a
    // shared machine whose load stretches every request, so its bound scales with the
    // median GET of the baseline phase of the same run, never below 2 s: a hung peer
    // holding reads (30 s before the fix) fails it on any machine whose median GET is
    // under 2 s. (The baseline's own p99 is one or two outliers of a few dozen reads.)
    const bound = Math.max(2_000, 15 * baseP50);
    extra.push(
      `acknowledged objects: ${keys.length}, read back identical: ${keys.length - lost.length}, lost or different: ${lost.length}, missing from the listing: ${unlisted.length}`,
      `reads checked during the run: ${phases.reduce((a, p) => a + p.getOk, 0)}, different bytes: ${w.integrity.length}`,
      `GET p99 with one of 4 nodes stopped (SIGSTOP): ${Math.round(stoppedP99)} ms over ${stopped.latencies.length} reads ` +
        `(target under 1000 ms: ${stoppedP99 < 1_000 ? 'met' : 'NOT met'}; bound this run ${Math.round(bound)} ms = max(2000, 15 x baseline p50 ${Math.round(baseP50)} ms))`,
      `  slowest reads with node 4 stopped (ms, begun at s after SIGSTOP): ${slowest(stopped, 5)}; this test process stalled up to ${Math.round(stopped.loopStallMs)} ms (baseline ${Math.round(phases[0]!.loopStallMs)} ms)`,
    );
    report();

    expect(lost).toEqual([]);
    expect(unlisted).toEqual([]);
    expect(w.integrity).toEqual([]);
    expect(keys.length).toBeGreaterThan(50);
    expect(stopped.latencies.length).toBeGreaterThan(20);
    // the stopped phase's reads are those begun while node 4 was stopped (not after its SIGCONT)
    expect(Math.max(...stopped.startedAt)).toBeLessThanOrEqual(stopped.windowMs);
    expect(stoppedP99).toBeLessThan(bound);
  });
});
