/**
 * Data-movement section: the decommission drain of a pool (every object
 * read from its K data shards, re-encoded and written with fsync to the
 * other pool, then removed from the source), 64 MiB objects and 4 KiB
 * objects, beside the raw disk copy rate measured in the same run: the
 * same shard files copied from the source pool's drives to the target
 * pool's drives (read, write, fsync, four drives in parallel), expressed in
 * object bytes per second like the drain. Both pools are 4 LocalDrives at
 * EC:2 in a temp dir on this machine's disk; the drain runs with the
 * default concurrency (SVC_DECOMMISSION_*_CONCURRENCY).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_PEERS } from '../src/background/movement/context.ts';
import { DataMovement } from '../src/background/movement/data-movement.ts';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import { PoolRecords } from '../src/object/records/store.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { section } from './harness.ts';

const MiB = 1024 * 1024;
const MB = 1e6;
const N = 4;
const PARITY = 2;
const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;

interface Bench {
  base: string;
  layer: ServerPools;
  drives: LocalDrive[][];
  cmdlines: string[];
}

async function setup(): Promise<Bench> {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-move-'));
  const drives: LocalDrive[][] = [];
  for (let p = 0; p < 2; p++) {
    const ds: LocalDrive[] = [];
    for (let i = 0; i < N; i++) {
      const dir = join(base, `p${p}`, `d${i}`);
      await mkdir(dir, { recursive: true });
      const d = new LocalDrive(dir);
      await d.init();
      ds.push(d);
    }
    drives.push(ds);
  }
  const cmdlines = [0, 1].map((p) => `${base}/p${p}/d{0...${N - 1}}`);
  const layer = await createObjectLayer({
    deploymentId: '11111111-2222-4333-8444-666666666666',
    pools: drives.map((ds, p) => ({ cmdline: cmdlines[p]!, sets: [ds], standardParity: PARITY, rrsParity: 1 })),
    logger: silentLogger,
    clock: systemClock,
  });
  return { base, layer, drives, cmdlines };
}

/** Writes `count` objects of `size` bytes onto pool 0 (pool 1 closed meanwhile). */
async function fill(b: Bench, bucket: string, count: number, size: number): Promise<void> {
  await b.layer.makeBucket(bucket);
  b.layer.setPoolAdmission(1, false, 'bench');
  const body = randomBytes(size);
  for (let i = 0; i < count; i++) await b.layer.putObject(bucket, `o${i}`, putDataFromBuffer(body), {});
  b.layer.setPoolAdmission(1, true);
  for (const d of b.drives.flat()) await d.flush();
}

/** Drains pool 0 and resolves with the wall seconds it took. */
async function drain(b: Bench): Promise<number> {
  const dm = new DataMovement({
    ctx: { layer: b.layer, records: new PoolRecords(b.layer.sysRecords), clock: systemClock, logger: silentLogger, selfId: 'bench' },
    pools: b.cmdlines.map((cmdline, id) => ({ id, cmdline, ellipsis: true })),
    leads: () => true,
    peers: NO_PEERS,
    decommissionBucketConcurrency: 4,
    decommissionEntryConcurrency: 8,
    rebalanceMaxAttempts: 3,
  });
  await dm.start();
  const records = new PoolRecords(b.layer.sysRecords);
  const t0 = performance.now();
  await dm.decommission.start([0]);
  for (;;) {
    const e = (await records.readPoolMeta())?.pools.find((p) => p.cmdline === b.cmdlines[0])?.decommission;
    if (e?.state === 'completed') break;
    if (e?.state === 'failed' || e?.state === 'canceled') throw new Error(`drain ${e.state}: ${e.lastError}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const seconds = (performance.now() - t0) / 1000;
  await dm.close();
  return seconds;
}

/** Files under `dir` (recursive), with `.svc.sys` left out. */
async function files(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
    if (rel === '' && e.name === '.svc.sys') continue;
    const r = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await files(dir, r)));
    else out.push(r);
  }
  return out;
}

/**
 * Copies every file of pool 0's drives to `raw-copy/` on pool 1's drives
 * (drive i to drive i, in parallel; read, write in 1 MiB chunks, fsync each
 * file); resolves with the wall seconds.
 */
async function rawCopy(b: Bench): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    b.drives[0]!.map(async (src, i) => {
      const dst = b.drives[1]![i]!.root;
      for (const f of await files(src.root)) {
        const to = join(dst, 'raw-copy', f);
        await mkdir(join(to, '..'), { recursive: true });
        const rf = await open(join(src.root, f), 'r');
        const wf = await open(to, 'w');
        try {
          const buf = Buffer.allocUnsafe(MiB);
          for (;;) {
            const { bytesRead } = await rf.read(buf, 0, MiB, null);
            if (bytesRead === 0) break;
            await wf.write(buf.subarray(0, bytesRead));
          }
          await wf.sync();
        } finally {
          await rf.close();
          await wf.close();
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(b.drives[1]!.map((d) => rm(join(d.root, 'raw-copy'), { recursive: true, force: true })));
  return seconds;
}

section('data movement: decommission drain vs raw disk copy (2 pools of 4 drives EC:2)', async (ctx) => {
  for (const [label, size, count] of [
    ['64 MiB objects', 64 * MiB, Math.max(3, Math.round(4 * scale))],
    ['4 KiB objects', 4096, Math.round(400 * scale)],
  ] as const) {
    const b = await setup();
    try {
      await fill(b, 'bench', count, size);
      // The ceiling first: the same bytes, copied file by file, on the same disks.
      const raw = await rawCopy(b);
      const seconds = await drain(b);
      const bytes = size * count;
      const rawRate = bytes / raw / MB;
      ctx.row({ name: `raw disk copy, ${label} (object bytes)`, value: rawRate, unit: 'MB/s' });
      ctx.row({
        name: `decommission drain, ${label}`,
        value: bytes / seconds / MB,
        unit: 'MB/s',
        ceiling: { name: 'raw copy', value: rawRate },
        ...(size >= MiB ? { note: 'target ≥ 50%' } : {}),
      });
      ctx.row({ name: `decommission drain, ${label} (objects)`, value: count / seconds, unit: 'objects/s', ceiling: { name: 'raw copy', value: count / raw } });
    } finally {
      await b.layer.close();
      for (const d of b.drives.flat()) await d.flush();
      await rm(b.base, { recursive: true, force: true });
    }
  }
});
