/**
 * The heal workers on real temp-dir drives: the background heal drains the
 * read-repair queue with retry and backoff (a drive that was offline for a
 * write is healed once it is back; give-up after the last attempt); a root
 * heal stopped by a graceful shutdown is persisted as `root-heal-<id>.json`
 * and resumed from its cursor; results wait (at most the cap) for status
 * calls; the scanner's cycles count objects and usage and queue what needs
 * healing; a drive emptied under a formatted layer leaves its set.
 */
import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HealOpts, HealTaskStatus } from '../src/object/admin/types.ts';
import { BackgroundHeal } from '../src/background/heal/background.ts';
import { Healer } from '../src/background/heal/healer.ts';
import { HealSequences, rootHealRecordPath } from '../src/background/heal/sequences.ts';
import { Scanner } from '../src/background/scanner.ts';
import { readUsage } from '../src/object/usage.ts';
import type { ServerPools } from '../src/object/server-pools.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { bytes, type Fixture, get, makeFixture, put } from './engine-helpers.ts';
import { until } from './helpers/heal-server.ts';

let fx: Fixture | undefined;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
  await fx?.cleanup();
  fx = undefined;
});

const layerOf = (f: Fixture) => f.layer as unknown as ServerPools;
const healerOf = (f: Fixture) => {
  const l = layerOf(f);
  return new Healer({ pools: l.pools, locker: l.locker, records: l.sysRecords, clock: systemClock, logger: silentLogger });
};
const ROOT: HealOpts = { recursive: true, dryRun: false, remove: false, recreate: false, scanMode: 1, updateParity: false, nolock: false };

describe('background heal of the read-repair queue', () => {
  it('retries with backoff while the drive is away and heals once it is back', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await fx.offline(1);
    await put(fx.layer, 'b', 'o', bytes(2 * 1024 * 1024));
    expect(layerOf(fx).mrf.peek().some((e) => e.object === 'o' && e.reason === 'write-partial')).toBe(true);
    // Counts heal attempts: while the only drive the object missed is offline there is nothing to
    // heal onto, so none is made (an attempt would hold the object's write lock for nothing).
    const healer = healerOf(fx);
    let attempts = 0;
    const healInSet = healer.healInSet.bind(healer);
    healer.healInSet = (...a: Parameters<typeof healInSet>) => {
      attempts++;
      return healInSet(...a);
    };
    const bg = new BackgroundHeal({ healer, mrf: layerOf(fx).mrf, clock: systemClock, logger: silentLogger, tranquility: 0, retryBaseMs: 100, retryMaxMs: 200 });
    bg.start();
    stops.push(() => bg.stop());
    await until('a retry pending', () => bg.progress().retrying > 0 || undefined, 15_000, 20);
    expect(bg.progress().itemsHealed).toBe(0);
    expect(attempts).toBe(0);
    await fx.online(1);
    await until('healed', () => bg.progress().itemsHealed > 0 || undefined, 30_000, 20);
    const p = bg.progress();
    expect(p.queued).toBe(0);
    expect(p.perDrive[fx.roots[1]!]!.items_healed).toBe(1);
    expect(p.bytesHealed).toBeGreaterThan(1024 * 1024 / 2);
    expect(readdirSync(join(fx.roots[1]!, 'b', 'o'))).toHaveLength(2);
  });

  it('gives up after the last attempt (the scanner finds the object again)', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await fx.offline(0);
    await put(fx.layer, 'b', 'o', bytes(5000));
    const bg = new BackgroundHeal({ healer: healerOf(fx), mrf: layerOf(fx).mrf, clock: systemClock, logger: silentLogger, tranquility: 0, retryBaseMs: 10, retryMaxMs: 20, maxAttempts: 3 });
    bg.start();
    stops.push(() => bg.stop());
    await until('given up', () => bg.progress().itemsFailed > 0 || undefined, 15_000, 20);
    expect(bg.progress()).toMatchObject({ queued: 0, itemsHealed: 0, itemsFailed: 1 });
    expect(bg.progress().lastError).toMatch(/b\/o/);
    await fx.online(0);
  });
});

describe('admin heal sequences', () => {
  it('a root heal stopped by a graceful shutdown is persisted and resumes from its cursor with the same token', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    for (let i = 0; i < 40; i++) await put(fx.layer, 'b', `k${String(i).padStart(2, '0')}`, bytes(300, i));
    for (const d of fx.drives) await d.flush();
    await rm(join(fx.roots[2]!, 'b'), { recursive: true });
    const l = layerOf(fx);
    const mk = () => new HealSequences({ healer: healerOf(fx!), records: l.sysRecords, clock: systemClock, logger: silentLogger, nodeIndex: 0, tranquility: 3 });
    const first = mk();
    const start = (await first.heal({ kind: 'start', bucket: '', prefix: '', opts: ROOT, forceStart: false, clientAddress: 'test' })) as { clientToken: string };
    await until('some objects healed', () => (first.running()[0]!.progress().objectsScanned >= 5 ? true : undefined), 20_000, 10);
    await first.close();
    const seq = first.running().length === 0 ? undefined : first.running()[0];
    expect(seq).toBeUndefined();
    const id = start.clientToken.split(':')[0]!;
    const rec = JSON.parse(Buffer.from((await l.sysRecords.read(rootHealRecordPath(id)))!).toString()) as { token: string; cursor: { stage: string; marker?: string }; progress: { objectsScanned: number } };
    expect(rec.token).toBe(start.clientToken);
    expect(rec.cursor.stage).toBe('buckets');
    const scannedBefore = rec.progress.objectsScanned;
    expect(scannedBefore).toBeGreaterThan(0);
    expect(scannedBefore).toBeLessThan(40);

    const second = mk();
    expect(await second.resume()).toBe(1);
    const st = await until(
      'the resumed heal to finish',
      async () => {
        const s = (await second.heal({ kind: 'status', clientToken: start.clientToken, bucket: '', prefix: '' })) as HealTaskStatus;
        return s.Summary === 'finished' ? s : undefined;
      },
      30_000,
      50,
    );
    // The walk went on after the cursor (each object once) and the progress carried over.
    expect(st.Progress.objectsScanned).toBe(40);
    expect(readdirSync(join(fx.roots[2]!, 'b')).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`));
    // The record goes with the final persist, just after the status says finished.
    await until('the root heal record removed', async () => ((await l.sysRecords.read(rootHealRecordPath(id))) === undefined ? true : undefined), 30_000, 50);
    for (let i = 0; i < 40; i++) expect((await get(fx.layer, 'b', `k${String(i).padStart(2, '0')}`)).equals(bytes(300, i))).toBe(true);
  });

  it('results wait for a status call: the walk pauses at the cap and goes on once they are taken', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    for (let i = 0; i < 12; i++) await put(fx.layer, 'b', `k${i}`, bytes(100, i));
    await rm(join(fx.roots[0]!, 'b'), { recursive: true });
    const l = layerOf(fx);
    const seqs = new HealSequences({ healer: healerOf(fx), records: l.sysRecords, clock: systemClock, logger: silentLogger, nodeIndex: 0, tranquility: 0, maxUnconsumed: 5 });
    stops.push(() => seqs.close());
    const start = (await seqs.heal({ kind: 'start', bucket: 'b', prefix: '', opts: { ...ROOT, dryRun: true }, forceStart: false, clientAddress: 'test' })) as { clientToken: string };
    const seq = seqs.running()[0]!;
    await until('the cap reached', () => (seq.progress().itemsQueued >= 5 ? true : undefined), 30_000, 10);
    await new Promise((r) => setTimeout(r, 300));
    expect(seq.progress().itemsQueued).toBe(5);
    expect(seq.progress().objectsScanned).toBeLessThan(12);
    const items: unknown[] = [];
    await until(
      'all results taken',
      async () => {
        const st = (await seqs.heal({ kind: 'status', clientToken: start.clientToken, bucket: 'b', prefix: '' })) as HealTaskStatus;
        items.push(...(st.Items ?? []));
        return st.Summary === 'finished' ? st : undefined;
      },
      10_000,
      20,
    );
    // The bucket (its volume missing on a drive) and its 12 objects.
    expect(items).toHaveLength(13);
  });
});

/** A background heal and a scanner over the fixture, stopped after the test. */
function scan(f: Fixture, intervalMs: number, deepSample: number): Scanner {
  const healer = healerOf(f);
  const bg = new BackgroundHeal({ healer, mrf: layerOf(f).mrf, clock: systemClock, logger: silentLogger, tranquility: 0 });
  bg.start();
  const scanner = new Scanner({ healer, background: bg, clock: systemClock, logger: silentLogger, node: 'n', nodeIndex: 0, scans: () => true, intervalMs, tranquility: 0, deepSample });
  scanner.start();
  stops.push(async () => {
    await scanner.stop();
    await bg.stop();
  });
  return scanner;
}

describe('scanner', () => {
  it('counts objects and usage per bucket, advances its cycle counters, and queues what needs healing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await fx.layer.makeBucket('c');
    await fx.layer.setBucketVersioning('c', 'Enabled');
    await put(fx.layer, 'b', 'x', bytes(1000));
    await put(fx.layer, 'b', 'y', bytes(3 * 1024 * 1024));
    await put(fx.layer, 'c', 'v', bytes(10));
    await put(fx.layer, 'c', 'v', bytes(20));
    await fx.layer.deleteObject('c', 'v', {});
    await rm(join(fx.roots[3]!, 'b', 'x'), { recursive: true });
    const scanner = scan(fx, 200, 0);
    await until('two cycles', () => (scanner.progress().cycles >= 2 ? true : undefined), 20_000, 20);
    const p = scanner.progress();
    expect(p.cyclesByResult.success).toBeGreaterThanOrEqual(2);
    expect(p.lastCycle?.result).toBe('success');
    expect(p.objectsScanned).toBeGreaterThanOrEqual(6);
    expect(p.healsQueued).toBeGreaterThanOrEqual(1);
    await until('x healed on drive 3', () => (readdirSync(join(fx!.roots[3]!, 'b')).includes('x') ? true : undefined), 30_000, 20);
    const u = (await readUsage(layerOf(fx).sysRecords, 1))!;
    expect(u.buckets['b']).toMatchObject({ objects: 2, versions: 2, deleteMarkers: 0, size: 1000 + 3 * 1024 * 1024 });
    expect(u.buckets['c']).toMatchObject({ objects: 0, versions: 3, deleteMarkers: 1, size: 30 });
    expect(u.pools[0]).toMatchObject({ objects: 2, size: 1000 + 3 * 1024 * 1024 + 30 });
    expect(u.rawSize).toBe(2 * u.size);
  });

  it('a sampled deep pass finds bitrot a size check cannot, and the heal fixes it', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    await fx.layer.makeBucket('b');
    await put(fx.layer, 'b', 'o', bytes(2 * 1024 * 1024 + 3));
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
    const v = decodeXlMeta(readFileSync(join(fx.roots[2]!, 'b', 'o', 'xl.meta')))[0]!;
    const file = join(fx.roots[2]!, 'b', 'o', v.dataDir, 'part.1');
    const good = readFileSync(file);
    const bad = Buffer.from(good);
    bad[500] = bad[500]! ^ 0x55;
    writeFileSync(file, bad);
    const scanner = scan(fx, 100, 1);
    await until('the shard rewritten', () => (readFileSync(file).equals(good) ? true : undefined), 30_000, 20);
    expect(scanner.progress().deepChecks).toBeGreaterThan(0);
  });
});

describe('slot membership', () => {
  it('a drive emptied under a formatted layer leaves its set: nothing is written there until its format is back', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 1, formatted: true });
    await fx.layer.makeBucket('b');
    const { readdirSync: ls, rmSync } = await import('node:fs');
    for (const e of ls(fx.roots[1]!)) rmSync(join(fx.roots[1]!, e), { recursive: true, force: true });
    await new Promise((r) => setTimeout(r, 1100)); // the drive's format cache
    await layerOf(fx).probeDrives();
    expect(layerOf(fx).pools.member(0, 0, 1).membership).toBe('unformatted');
    expect(fx.layer.health().onlineDrives).toBe(3);
    await put(fx.layer, 'b', 'new', bytes(2 * 1024 * 1024));
    expect((await get(fx.layer, 'b', 'new')).equals(bytes(2 * 1024 * 1024))).toBe(true);
    expect(ls(fx.roots[1]!).filter((e) => e !== '.svc.sys')).toEqual([]);
  });
});
