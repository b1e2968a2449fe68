/**
 * Heal section (64 MiB objects, as the object PUT/GET section): a wiped drive of a 4-drive EC:2 set (real LocalDrives in a
 * temp dir, formatted, the drive replacement path: format into the slot,
 * set heal) rebuilt flat out, its shard bytes written per second beside the
 * raw disk write ceiling measured in the same run over the same files (one
 * drive's shard files, each written and fsync'd); target ≥ 50 %. Then client
 * GET throughput while the same rebuild runs at its default pace, beside the
 * same GETs on the idle set; target ≥ 70 %.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DriveHealer } from '../src/background/heal/drive-healer.ts';
import { Healer } from '../src/background/heal/healer.ts';
import { HealSequences } from '../src/background/heal/sequences.ts';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import { BITROT_HASH_SIZE, shardFileDataSize, shardSize } from '../src/erasure/index.ts';
import { newPoolFormats, writeFormatFile } from '../src/storage/format.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { eventual } from '../src/util/eventual.ts';
import { SPEED_TRANQUILITY } from '../src/util/heal-config.ts';
import { silentLogger } from '../src/util/logger.ts';
import type { Worker } from '../src/util/worker.ts';
import { section, writeFileSynced } from './harness.ts';

const MiB = 1024 * 1024;
const N = 4;
const K = 2;
const OBJECT = 64 * MiB;
const OBJECTS = Number(process.env.BENCH_HEAL_OBJECTS ?? '8');
const MBs = 1e6;

async function drain(body: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

/** Lets the kernel write back what earlier steps left dirty, so one measurement does not pay for another. */
function settle(): void {
  execFileSync('sync');
}

/** Writes `count` files of `size` bytes under `dir`, each fsync'd (write-behind flushes like LocalDrive): bytes per second. */
async function rawWrite(dir: string, count: number, size: number): Promise<number> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  settle();
  const data = randomBytes(size);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await writeFileSynced(join(dir, `f${i}`), data, 2 * MiB);
  return (count * size) / ((performance.now() - t0) / 1000);
}

section('heal: wiped-drive rebuild vs raw disk write; client GETs during a heal vs idle', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-heal-'));
  // The workers sleep on unref'd timers (a server's listener keeps its process alive; here nothing else would).
  const alive = setInterval(() => undefined, 1000);
  try {
    const roots = Array.from({ length: N }, (_, i) => join(base, `d${i}`));
    const fmts = newPoolFormats({ cmdline: 'bench', setCount: 1, setDriveCount: N }, '11111111-2222-4333-8444-555555555555');
    const drives: LocalDrive[] = [];
    for (const [i, r] of roots.entries()) {
      await mkdir(r);
      await writeFormatFile(r, fmts[i]!);
      const d = new LocalDrive(r);
      await d.init();
      drives.push(d);
    }
    const layer = (await createObjectLayer({
      deploymentId: fmts[0]!.id,
      pools: [{ cmdline: 'bench', sets: [drives], standardParity: N - K, rrsParity: 1, ids: fmts[0]!.erasure.sets }],
      logger: silentLogger,
      clock: systemClock,
    })) as ServerPools;
    await layer.makeBucket('bench');
    const payload = randomBytes(OBJECT);
    for (let i = 0; i < OBJECTS; i++) {
      payload.writeUInt32LE(i, 0);
      await layer.putObject('bench', `o/${i}`, putDataFromBuffer(payload), {});
    }
    for (const d of drives) await d.flush();
    // One drive's share: the shard file of every object (framed), which a rebuild writes.
    const shardData = shardFileDataSize(OBJECT, MiB, K);
    const shardFile = shardData + Math.ceil(shardData / shardSize(MiB, K)) * BITROT_HASH_SIZE;
    const ceiling = async () => Math.max(await rawWrite(join(base, 'raw'), OBJECTS, shardFile), await rawWrite(join(base, 'raw'), OBJECTS, shardFile));

    const healer = new Healer({ pools: layer.pools, locker: layer.locker, records: layer.sysRecords, clock: systemClock, logger: silentLogger });
    /** Wipes drive 2, lets the drive healer rebuild it at `speed`, and calls `during` while it runs. */
    const rebuild = async (speed: 'fastest' | 'default', during?: (running: () => boolean, worker: Worker<unknown>) => Promise<void>) => {
      const victim = roots[2]!;
      for (const e of await readdir(victim)) await rm(join(victim, e), { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 1100)); // the drive's format cache
      settle();
      const rebuilds = eventual<HealSequences>('the heal sequences');
      const dh = new DriveHealer({ pools: layer.pools, clock: systemClock, logger: silentLogger, selfId: 'bench', sequences: rebuilds.eventual });
      // The pace of SVC_HEAL_SPEED, as the node composes it (background/healing.ts).
      const seqs = new HealSequences({
        healer,
        records: layer.sysRecords,
        formats: dh,
        clock: systemClock,
        logger: silentLogger,
        nodeIndex: 0,
        rebuildTranquility: SPEED_TRANQUILITY[speed],
        rebuildConcurrency: speed === 'fastest' ? 4 : 1,
      });
      rebuilds.settle(seqs);
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await dh.check();
      const seq = seqs.running()[0];
      if (seq === undefined) throw new Error('the wiped drive was not detected');
      const running = () => !seq.ended;
      const bg = during?.(running, seq.worker as Worker<unknown>);
      await seq.worker.done();
      const seconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      await bg;
      if (seq.progress().objectsFailed > 0 || seq.progress().objectsRefused > 0) throw new Error('the rebuild did not heal every object');
      return { seconds, cpuSeconds, bytes: seq.progress().bytesHealed };
    };

    const rawBefore = await ceiling();
    const flat = await rebuild('fastest');
    const raw = Math.max(rawBefore, await ceiling());
    ctx.row({ name: 'raw disk write+fsync (one drive\'s shard files)', value: raw / MBs, unit: 'MB/s' });
    ctx.row({ name: 'rebuild, per CPU-second of this process', value: flat.bytes / flat.cpuSeconds / MBs, unit: 'MB/cpu-s' });
    ctx.row({
      name: `rebuild of a wiped drive (${OBJECTS} x 64 MiB, EC:2)`,
      value: flat.bytes / flat.seconds / MBs,
      unit: 'MB/s',
      ceiling: { name: 'raw write', value: raw / MBs },
      note: 'target ≥ 50%',
    });

    // Client GETs with the rebuild (default pace) paused and running, in
    // alternating windows (this machine drifts by the second): the two sums
    // compare the same moments.
    const gets = async (until: () => boolean, maxMs: number) => {
      let bytes = 0;
      let i = 0;
      const t0 = performance.now();
      while (until() && performance.now() - t0 < maxMs) {
        const r = await layer.getObject('bench', `o/${i++ % OBJECTS}`, {});
        bytes += await drain(r.body);
      }
      return { bytes, seconds: (performance.now() - t0) / 1000 };
    };
    const idleSum = { bytes: 0, seconds: 0 };
    const duringSum = { bytes: 0, seconds: 0 };
    let windows = 0;
    const paced = await rebuild('default', async (running, worker) => {
      while (running() && windows < 12) {
        worker.pause();
        await new Promise((r) => setTimeout(r, 150)); // the step under way ends
        const a = await gets(running, 700);
        worker.resume();
        const b = await gets(running, 700);
        if (!running()) break;
        idleSum.bytes += a.bytes;
        idleSum.seconds += a.seconds;
        duringSum.bytes += b.bytes;
        duringSum.seconds += b.seconds;
        windows++;
      }
      worker.resume();
    });
    if (windows === 0) throw new Error('the paced rebuild ended before a GET window');
    const idle = idleSum.bytes / idleSum.seconds;
    const during = duringSum.bytes / duringSum.seconds;
    ctx.row({ name: 'client GET 64 MiB, idle', value: idle / MBs, unit: 'MB/s' });
    ctx.row({
      name: 'client GET 64 MiB during a rebuild (default pace)',
      value: during / MBs,
      unit: 'MB/s',
      ceiling: { name: 'idle', value: idle / MBs },
      note: `target ≥ 70% (${windows} paired windows)`,
    });
    ctx.row({
      name: 'rebuild at the default pace, under that GET load',
      value: paced.bytes / paced.seconds / MBs,
      unit: 'MB/s',
      note: 'paused in every other window above',
    });
    await layer.close();
    for (const d of drives) await d.flush();
  } finally {
    clearInterval(alive);
    await rm(base, { recursive: true, force: true });
  }
});
