/**
 * Healing in a real `svc server` on temp-dir drives, as an operator meets it:
 * bitrot found by a read is rewritten by read-repair within seconds (the
 * issue's failure: afterwards losing parity-many other drives still reads);
 * a drive emptied while the node runs, and one replaced across a restart,
 * is rebuilt to exactly what it held and replacement recovery reports
 * `completed`; the scanner's usage shows in `svc admin info`.
 */
import { readFileSync } from 'node:fs';
import { rmSync, mkdirSync } from 'node:fs';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BgHealState, ReplacementRecoveryStatus, ServerInfoMessage } from '../src/object/admin/types.ts';
import { bytes } from './engine-helpers.ts';
import { flipByte, getBytes, giveBack, holdings, type HealServer, shardFile, startHealServer, takeAway, until, wipe } from './helpers/heal-server.ts';

let s: HealServer;
beforeAll(async () => {
  s = await startHealServer(4);
  await s.s3.send(new CreateBucketCommand({ Bucket: 'data' }));
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

const BIG = bytes(3 * 1024 * 1024 + 1234, 7);

describe('healing in a running server', { timeout: 180_000 }, () => {
  it('read-repair rewrites a corrupt shard within seconds; then losing parity-many other drives still reads', async () => {
    await s.s3.send(new PutObjectCommand({ Bucket: 'data', Key: 'rot', Body: BIG }));
    // Shard 1 is a data shard: a plain GET reads it, finds the bitrot, decodes around it.
    const [victim, file] = shardFile(s.roots, 'data', 'rot', 1);
    const good = readFileSync(file);
    flipByte(file, 4096);
    expect((await getBytes(s.s3, 'data', 'rot')).equals(BIG)).toBe(true);
    await until('the shard rewritten by read-repair', () => readFileSync(shardFile(s.roots, 'data', 'rot', 1)[1]).equals(good), 20_000, 100);
    const others = [0, 1, 2, 3].filter((i) => i !== victim).slice(0, 2);
    for (const i of others) takeAway(s.roots[i]!);
    try {
      expect((await getBytes(s.s3, 'data', 'rot')).equals(BIG)).toBe(true);
    } finally {
      for (const i of others) giveBack(s.roots[i]!);
    }
  });

  it('a drive emptied while the node runs is rebuilt to exactly what it held; recovery reports completed', async () => {
    for (let i = 0; i < 12; i++) await s.s3.send(new PutObjectCommand({ Bucket: 'data', Key: `w/${i}`, Body: i % 3 === 0 ? bytes(200 + i, i) : bytes(1024 * 1024 + i * 777, i) }));
    const want = holdings(s.roots[2]!);
    wipe(s.roots[2]!);
    const done = await until(
      'replacement recovery completed',
      async () => {
        const r = (await s.call('GET', 'v4/heal/replacement-recovery')).json() as ReplacementRecoveryStatus;
        const i = r.instances.find((x) => x.endpoint === s.roots[2]);
        return i?.state === 'completed' ? r : undefined;
      },
      60_000,
      250,
    );
    const inst = done.instances.find((x) => x.endpoint === s.roots[2])!;
    expect(inst).toMatchObject({ pool: 0, set: 0, slot: 2, state: 'completed' });
    // The rebuild walked every object of the set (read-repair may have healed some of them first).
    expect(inst.objectsScanned).toBeGreaterThanOrEqual(13);
    expect(inst.reason).toMatch(/without a format/);
    expect(done.state).toBe('idle');
    expect(holdings(s.roots[2]!)).toEqual(want);
    for (let i = 0; i < 12; i++) expect((await getBytes(s.s3, 'data', `w/${i}`)).length).toBe(i % 3 === 0 ? 200 + i : 1024 * 1024 + i * 777);
  });

  it('a drive replaced across a restart is rebuilt at start-up', async () => {
    const want = holdings(s.roots[1]!);
    await s.run.stop();
    rmSync(s.roots[1]!, { recursive: true, force: true });
    mkdirSync(s.roots[1]!);
    await s.restart();
    await until(
      'the replaced drive rebuilt',
      async () => {
        const r = (await s.call('GET', 'v4/heal/replacement-recovery')).json() as ReplacementRecoveryStatus;
        return r.instances.find((x) => x.endpoint === s.roots[1])?.state === 'completed' ? true : undefined;
      },
      60_000,
      250,
    );
    expect(holdings(s.roots[1]!)).toEqual(want);
    expect((await getBytes(s.s3, 'data', 'rot')).equals(BIG)).toBe(true);
  });

  it('the scanner accounts usage that server info shows', async () => {
    const info = await until('a scanner cycle with the objects counted', async () => {
      const i = (await s.call('GET', 'v3/info')).json() as ServerInfoMessage;
      return i.objects.count !== undefined && i.objects.count >= 13 ? i : undefined;
    });
    expect(info.objects.count).toBe(13);
    expect(info.usage.size).toBe(BIG.length + [...Array(12).keys()].reduce((a, i) => a + (i % 3 === 0 ? 200 + i : 1024 * 1024 + i * 777), 0));
    expect(info.dataUsage?.buckets).toEqual([{ name: 'data', objects: 13, versions: 13, deleteMarkers: 0, size: info.usage.size }]);
    // The operator's view: `svc admin info`.
    const r = await s.cli(['admin', 'info']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/Objects: 13 \(13 versions, 0 delete markers\), [\d.]+ MiB of data/);
    expect(r.out).toMatch(/data[ │]+13[ │]+13[ │]+0[ │]+[\d.]+ MiB/);
  });

  it('the scanner cycle counters advance (background-heal status)', async () => {
    const bg = async () => ((await s.call('POST', 'v3/background-heal/status')).json() as BgHealState).scanner;
    const a = await bg();
    const b = await until('two more cycles', async () => {
      const x = await bg();
      return x.cycles >= a.cycles + 2 ? x : undefined;
    });
    expect(b.cyclesByResult.success).toBeGreaterThanOrEqual(a.cyclesByResult.success + 2);
    expect(b.lastCycleResult).toBe('success');
    expect(Date.parse(b.lastCycleAt)).toBeGreaterThan(Date.parse(a.lastCycleAt));
  });
});
