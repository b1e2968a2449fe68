/**
 * Issue 27 item 6: damage that healing used to leave alone while monitoring
 * said "ok", on a real `svc server` (4 temp-dir drives, a fast scanner):
 *
 * - a bucket's folder deleted from one drive (its format intact): the drive
 *   monitor recreates it, the drive reports the damage (admin info, the
 *   readiness detail), the scanner and background heal rebuild its objects
 *   there, and new writes land on all four drives again;
 * - a data folder orphaned by a crash (part files, no xl.meta naming them),
 *   beside an object and on its own: collected once older than the safety
 *   age, logged; a key that merely looks like a data folder is left alone.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getBytes, type HealServer, startHealServer, until } from './helpers/heal-server.ts';

interface InfoDisk {
  endpoint: string;
  state: string;
  healing: boolean;
  issues?: { kind: string; detail: string }[];
}

async function infoDrives(s: HealServer): Promise<InfoDisk[]> {
  const r = await s.call('GET', 'v3/info');
  expect(r.status).toBe(200);
  return (r.json() as { servers: { drives: InfoDisk[] }[] }).servers.flatMap((x) => x.drives);
}

describe('heal blind spots', () => {
  let s: HealServer;
  beforeAll(async () => {
    s = await startHealServer(4, { SVC_SCANNER_INTERVAL: '1s', SVC_SCANNER_SPEED: 'fastest', SVC_HEAL_SPEED: 'fastest', SVC_SCANNER_ORPHAN_AGE: '2s' });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('a bucket folder deleted from one drive is recreated, reported, and its objects healed back', async () => {
    await s.s3.send(new CreateBucketCommand({ Bucket: 'folder' }));
    const bodies = new Map<string, Buffer>();
    for (let i = 0; i < 6; i++) {
      const b = randomBytes(i % 2 === 0 ? 2_000 : 1_500_000);
      bodies.set(`k${i}`, b);
      await s.s3.send(new PutObjectCommand({ Bucket: 'folder', Key: `k${i}`, Body: b }));
    }
    rmSync(join(s.roots[0]!, 'folder'), { recursive: true });
    // The drive monitor gives the folder back and the drive says what happened.
    await until('the folder recreated', () => existsSync(join(s.roots[0]!, 'folder')), 20_000);
    const d = await until('the drive reported healing', async () => (await infoDrives(s)).find((x) => x.endpoint.endsWith('/d1') && x.healing), 20_000);
    expect(d.issues?.some((i) => i.kind === 'healing' && i.detail.includes('folder'))).toBe(true);
    // The readiness detail (re-evaluated every 10 s) names it too.
    await until(
      'the readiness detail naming the drive',
      async () => ((await (await fetch(`${s.url}/health/ready`)).json()) as { details: { storage: { detail?: string } } }).details.storage.detail?.match(/d1: healing/),
      25_000,
    );
    // New writes land on every drive again.
    await s.s3.send(new PutObjectCommand({ Bucket: 'folder', Key: 'after', Body: randomBytes(1_500_000) }));
    expect(existsSync(join(s.roots[0]!, 'folder', 'after', 'xl.meta'))).toBe(true);
    // The scanner finds the objects missing there and background heal rebuilds them.
    await until('every object healed back onto the drive', () => [...bodies.keys()].every((k) => existsSync(join(s.roots[0]!, 'folder', k, 'xl.meta'))), 60_000);
    for (const [k, b] of bodies) expect((await getBytes(s.s3, 'folder', k)).equals(b)).toBe(true);
    expect(s.run.logs().some((l) => l.event === 'heal_bucket_volume_recreated')).toBe(true);
    expect(s.run.logs().filter((l) => l.event === 'heal_mrf_gave_up')).toEqual([]);
  }, 120_000);

  it('collects data folders orphaned by a crash once older than the safety age, never a key that looks like one', async () => {
    await s.s3.send(new CreateBucketCommand({ Bucket: 'orphans' }));
    const body = randomBytes(1_200_000);
    await s.s3.send(new PutObjectCommand({ Bucket: 'orphans', Key: 'live', Body: body }));
    const uuidKey = `users/${randomUUID()}/avatar`;
    await s.s3.send(new PutObjectCommand({ Bucket: 'orphans', Key: uuidKey, Body: 'looks like a data dir' }));
    const old = new Date(Date.now() - 60_000);
    const plant = (dir: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'part.1'), randomBytes(4096));
      utimesSync(join(dir, 'part.1'), old, old);
      utimesSync(dir, old, old);
    };
    // Beside a live object (its xl.meta does not name it), and on its own (a crash before the first xl.meta).
    const beside = join(s.roots[1]!, 'orphans', 'live', randomUUID());
    const alone = join(s.roots[2]!, 'orphans', 'crashed', randomUUID());
    plant(beside);
    plant(alone);
    await until('orphans collected', () => !existsSync(beside) && !existsSync(alone), 60_000);
    expect(existsSync(join(s.roots[2]!, 'orphans', 'crashed'))).toBe(false);
    const collected = s.run.logs().filter((l) => l.event === 'orphan_data_collected');
    expect(collected.map((l) => l.object).sort()).toEqual(['crashed', 'live']);
    // What is named stays: the live object, and the key whose segment is a UUID.
    expect((await getBytes(s.s3, 'orphans', 'live')).equals(body)).toBe(true);
    expect((await getBytes(s.s3, 'orphans', uuidKey)).toString()).toBe('looks like a data dir');
    for (const root of s.roots) expect(readdirSync(join(root, 'orphans', 'live')).length).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
