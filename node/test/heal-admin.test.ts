/**
 * The admin heal route of a real `svc server` (4 temp-dir drives, STANDARD
 * EC:2, REDUCED_REDUNDANCY EC:0), every rule of SPEC Admin API rule 5
 * refused or accepted through real HTTP, the clientToken / forceStart /
 * forceStop sequences, and what a heal does: dry runs change nothing, a
 * zero-parity object reports `no-parity object is unrecoverable`, too few
 * shards refuse and change nothing, concurrent PUTs and deletes during a heal
 * are neither resurrected nor lost.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealResultItem, HealStartSuccess, HealTaskStatus } from '../src/object/admin/types.ts';
import { bytes } from './engine-helpers.ts';
import { getBytes, type HealServer, shardFile, startHealServer, until } from './helpers/heal-server.ts';

let s: HealServer;
beforeAll(async () => {
  // Slowest: an admin heal takes a while per object, long enough to talk to it while it runs.
  s = await startHealServer(4, { SVC_STORAGE_CLASS_RRS: 'EC:0', SVC_HEAL_SPEED: 'slowest', SVC_SCANNER_INTERVAL: '1h' });
  for (const b of ['rules', 'many', 'zero', 'few', 'busy', 'dry']) await s.s3.send(new CreateBucketCommand({ Bucket: b }));
  await Promise.all(Array.from({ length: 40 }, (_, i) => s.s3.send(new PutObjectCommand({ Bucket: 'many', Key: `k/${String(i).padStart(3, '0')}`, Body: bytes(100 + i, i) }))));
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

interface Err {
  Code: string;
  Message: string;
}

function tree(dir: string, out = new Map<string, number>()): Map<string, number> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (p.endsWith('.svc.sys/tmp') || p.endsWith('.svc.sys/usage')) continue;
      tree(p, out);
    } else out.set(p, statSync(p).size);
  }
  return out;
}
const trees = () => s.roots.map((r) => tree(r));

async function heal(path: string, body?: object, query: Record<string, string> = {}) {
  return s.call('POST', `v3/heal/${path}`, query, body === undefined ? undefined : JSON.stringify(body));
}

async function start(path: string, body: object, query: Record<string, string> = {}): Promise<HealStartSuccess> {
  const r = await heal(path, body, query);
  expect(r.status, r.body).toBe(200);
  return r.json() as HealStartSuccess;
}

async function status(path: string, token: string): Promise<HealTaskStatus> {
  const r = await heal(path, undefined, { clientToken: token });
  expect(r.status, r.body).toBe(200);
  return r.json() as HealTaskStatus;
}

/** Follows a sequence to its end, collecting every item. */
async function finish(path: string, token: string): Promise<{ last: HealTaskStatus; items: HealResultItem[] }> {
  const items: HealResultItem[] = [];
  const last = await until(
    `heal ${token} to end`,
    async () => {
      const st = await status(path, token);
      items.push(...(st.Items ?? []));
      return st.Summary === 'running' ? undefined : st;
    },
    120_000,
    200,
  );
  return { last, items };
}

describe('heal route: every rule of rule 5 through real HTTP', { timeout: 180_000 }, () => {
  it('refuses what the rules refuse, changing nothing', async () => {
    const before = trees();
    const refused: [string, string, object | undefined, Record<string, string>, string, RegExp][] = [
      ['root heal, neither recursive nor pool and set', '', {}, {}, 'InvalidArgument', /recursive=true, or both pool and set/],
      ['root heal, pool without set', '', { pool: 0 }, {}, 'InvalidArgument', /recursive=true, or both pool and set/],
      ['set without pool', '', { set: 0 }, {}, 'InvalidArgument', /set needs pool/],
      ['pool out of range', '', { pool: 1, set: 0 }, {}, 'InvalidArgument', /pool 1 not found/],
      ['set out of range', '', { pool: 0, set: 1 }, {}, 'InvalidArgument', /set 1 not found/],
      ['readRepair=true', 'rules', { readRepair: true }, {}, 'InvalidArgument', /readRepair/],
      ['unknown query key', 'rules', {}, { sinceSeq: '1' }, 'InvalidArgument', /sinceSeq/],
      ['forceStart with forceStop', 'rules', {}, { forceStart: 'true', forceStop: 'true' }, 'InvalidRequest', /together/],
      ['clientToken with forceStart', 'rules', {}, { clientToken: 't:0', forceStart: '' }, 'InvalidRequest', /no clientToken/],
      ['forceStop without a token', 'rules', {}, { forceStop: 'true' }, 'InvalidRequest', /needs the clientToken/],
      ['a token no heal carries', 'rules', undefined, { clientToken: 'nope:0' }, 'XSvcHealInvalidClientToken', /no heal sequence/],
      ['a prefix without a bucket', '/x', {}, {}, 'InvalidArgument', /bucket/],
      ['a bad bucket name', 'A_B', {}, {}, 'InvalidBucketName', /bucket/i],
      ['a body that is not JSON', 'rules', undefined, {}, 'InvalidArgument', /not valid JSON/],
    ];
    for (const [name, path, body, query, code, msg] of refused) {
      const r = body === undefined && name.includes('JSON') ? await s.call('POST', `v3/heal/${path}`, query, '{nope') : await heal(path, body, query);
      expect(r.status, `${name}: ${r.body}`).toBe(400);
      const e = r.json() as Err;
      expect(e.Code, name).toBe(code);
      expect(e.Message, name).toMatch(msg);
    }
    // A repeated query key is refused too.
    const { signHeaders, rawRequest } = await import('./helpers/sigv4-signer.ts');
    const { createHash } = await import('node:crypto');
    const path = '/svc/admin/v3/heal/rules';
    const headers = await signHeaders(s.url, s.creds, {
      method: 'POST',
      path,
      query: { forceStart: ['true', 'true'] as unknown as string },
      headers: { 'x-amz-content-sha256': createHash('sha256').update('').digest('hex') },
    });
    const dup = await rawRequest(s.url, { method: 'POST', path: `${path}?forceStart=true&forceStart=true` }, headers);
    expect(dup.status).toBe(400);
    expect((JSON.parse(dup.body) as Err).Message).toMatch(/more than once/);
    expect(trees()).toEqual(before);
  });

  it('accepts a recursive root heal, a pool+set heal, a bucket heal (always recursive) and a prefix heal; nolock is forced off', async () => {
    const root = await start('', { recursive: true, dryRun: true, nolock: true });
    expect(root.clientToken).toMatch(/^[0-9a-f-]{36}:0$/);
    expect(root.clientAddress).toBe('127.0.0.1');
    const rs = await status('', root.clientToken);
    expect(rs.Settings).toMatchObject({ recursive: true, dryRun: true, nolock: false });
    await heal('', undefined, { clientToken: root.clientToken, forceStop: 'true' });
    const set = await start('', { pool: 0, set: 0, dryRun: true });
    expect((await status('', set.clientToken)).Settings).toMatchObject({ pool: 0, set: 0, recursive: false, nolock: false });
    await heal('', undefined, { clientToken: set.clientToken, forceStop: 'true' });
    const bucket = await start('rules', { recursive: false });
    const b = await finish('rules', bucket.clientToken);
    expect(b.last.Settings.recursive).toBe(true);
    expect(b.last.Summary).toBe('finished');
    await s.s3.send(new PutObjectCommand({ Bucket: 'rules', Key: 'p/one', Body: 'one' }));
    await s.s3.send(new PutObjectCommand({ Bucket: 'rules', Key: 'p/two', Body: 'two' }));
    // Not recursive: exactly the object the prefix names, its item answered even when healthy.
    const one = await start('rules/p/one', { recursive: false });
    const o = await finish('rules/p/one', one.clientToken);
    expect(o.items.map((i) => [i.type, i.bucket, i.object, i.outcome])).toEqual([['object', 'rules', 'p/one', 'ok']]);
    expect(o.items[0]!.before.drives.map((d) => d.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(o.items[0]!).toMatchObject({ dataBlocks: 2, parityBlocks: 2, diskCount: 4, setCount: 1, objectSize: 3 });
    // Recursive: every object under the prefix.
    const all = await start('rules/p/', { recursive: true });
    const a = await finish('rules/p/', all.clientToken);
    expect(a.last.Progress.objectsScanned).toBe(2);
  });

  it('clientToken, forceStart and forceStop correlate start, status and stop of one sequence', async () => {
    const first = await start('many', { dryRun: true });
    const running = await status('many', first.clientToken);
    expect(running.Summary).toBe('running');
    expect(running.ClientToken).toBe(first.clientToken);
    // Same path, no results waiting: already running.
    const again = await heal('many', { dryRun: true });
    expect(again.status).toBe(400);
    expect((again.json() as Err).Code).toBe('XSvcHealAlreadyRunning');
    // An overlapping path: refused.
    const overlap = await heal('many/k/', { recursive: true, dryRun: true });
    expect((overlap.json() as Err).Code).toBe('XSvcHealOverlappingPaths');
    const rootOverlap = await heal('', { recursive: true, dryRun: true });
    expect((rootOverlap.json() as Err).Code).toBe('XSvcHealOverlappingPaths');
    // The token is bound to its path.
    const other = await heal('rules', undefined, { clientToken: first.clientToken });
    expect((other.json() as Err).Code).toBe('XSvcHealInvalidClientToken');
    // forceStart stops the sequence on the path and starts a new one.
    const second = await start('many', { dryRun: true }, { forceStart: 'true' });
    expect(second.clientToken).not.toBe(first.clientToken);
    expect((await status('many', first.clientToken)).Summary).toBe('stopped');
    // forceStop with the token stops it; status says so.
    const stop = await heal('many', undefined, { clientToken: second.clientToken, forceStop: 'true' });
    expect(stop.status).toBe(200);
    expect((stop.json() as HealStartSuccess).clientToken).toBe(second.clientToken);
    const stopped = await status('many', second.clientToken);
    expect(stopped.Summary).toBe('stopped');
    expect(stopped.Detail).toMatch(/forceStop/);
    expect(stopped.Progress.objectsScanned).toBeLessThan(40);
  });

  it('status pops the results: each call returns only the items since the previous one', async () => {
    // One drive lost the bucket's objects: every object is an item of a dry run.
    const victim = s.roots[3]!;
    rmSync(join(victim, 'many', 'k'), { recursive: true, force: true });
    const before = trees();
    const seq = await start('many', { dryRun: true });
    const seen = new Set<number>();
    const { last, items } = await finish('many', seq.clientToken);
    for (const i of items) {
      expect(seen.has(i.resultId)).toBe(false);
      seen.add(i.resultId);
    }
    expect(last.Summary).toBe('finished');
    expect(items.filter((i) => i.type === 'object')).toHaveLength(40);
    expect(items.every((i) => i.outcome === 'would-heal' || i.type === 'bucket')).toBe(true);
    expect(items.find((i) => i.type === 'object')!.before.drives[3]!.state).toBe('missing');
    expect(items.find((i) => i.type === 'object')!.after.drives[3]!.state).toBe('missing');
    // The ended sequence answers with nothing new.
    expect((await status('many', seq.clientToken)).Items).toBeNull();
    // dryRun changed nothing.
    expect(trees()).toEqual(before);
    // The real heal rebuilds them.
    const real = await start('many', { recursive: true }, { forceStart: 'true' });
    const r = await finish('many', real.clientToken);
    expect(r.items.filter((i) => i.outcome === 'healed')).toHaveLength(40);
    expect(existsSync(join(victim, 'many', 'k', '000', 'xl.meta'))).toBe(true);
  });
});

describe('what a heal does', { timeout: 180_000 }, () => {
  it('a zero-parity object reports "no-parity object is unrecoverable" and nothing changes', async () => {
    await s.s3.send(new PutObjectCommand({ Bucket: 'zero', Key: 'z', Body: bytes(2 * 1024 * 1024, 5), StorageClass: 'REDUCED_REDUNDANCY' }));
    const [, file] = shardFile(s.roots, 'zero', 'z', 2);
    rmSync(file);
    const before = trees();
    for (const remove of [false, true]) {
      const seq = await start('zero/z', { recursive: false, remove });
      const { items } = await finish('zero/z', seq.clientToken);
      expect(items).toHaveLength(1);
      expect(items[0]!.outcome).toBe('refused');
      expect(items[0]!.detail).toContain('no-parity object is unrecoverable');
      expect(items[0]!.parityBlocks).toBe(0);
    }
    expect(trees()).toEqual(before);
  });

  it('dryRun reports what the heal would do and changes nothing; the same heal without it repairs', async () => {
    const body = (i: number) => bytes(1024 * 1024 + i, 20 + i);
    for (const [i, k] of ['a', 'b', 'c'].entries()) await s.s3.send(new PutObjectCommand({ Bucket: 'dry', Key: k, Body: body(i) }));
    rmSync(join(s.roots[1]!, 'dry', 'a'), { recursive: true }); // one drive lost the object
    rmSync(shardFile(s.roots, 'dry', 'b', 3)[1]); // one shard file is gone
    const before = trees();
    const dry = await start('dry', { dryRun: true });
    const d = await finish('dry', dry.clientToken);
    expect(d.last.Settings.dryRun).toBe(true);
    const item = (items: HealResultItem[], key: string) => items.find((i) => i.type === 'object' && i.object === key);
    expect(item(d.items, 'a')).toMatchObject({ outcome: 'would-heal' });
    expect(item(d.items, 'a')!.before.drives[1]!.state).toBe('missing');
    expect(item(d.items, 'a')!.after.drives[1]!.state).toBe('missing');
    expect(item(d.items, 'b')).toMatchObject({ outcome: 'would-heal' });
    expect(item(d.items, 'c')).toBeUndefined(); // healthy: nothing to report
    expect(d.last.Progress.objectsHealed).toBe(0);
    expect(trees()).toEqual(before);

    const real = await start('dry', {});
    const r = await finish('dry', real.clientToken);
    expect(item(r.items, 'a')).toMatchObject({ outcome: 'healed' });
    expect(item(r.items, 'a')!.after.drives.map((x) => x.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(item(r.items, 'b')).toMatchObject({ outcome: 'healed' });
    expect(existsSync(join(s.roots[1]!, 'dry', 'a'))).toBe(true);
    for (const [i, k] of ['a', 'b', 'c'].entries()) expect((await getBytes(s.s3, 'dry', k)).equals(body(i)), k).toBe(true);
  });

  it('too few shards: refused (data lost for good, kept without remove=true), nothing changes', async () => {
    await s.s3.send(new PutObjectCommand({ Bucket: 'few', Key: 'f', Body: bytes(3 * 1024 * 1024, 6) }));
    for (const shard of [1, 2, 3]) rmSync(shardFile(s.roots, 'few', 'f', shard)[1]);
    const before = trees();
    const seq = await start('few', {});
    const { items } = await finish('few', seq.clientToken);
    const item = items.find((i) => i.object === 'f')!;
    expect(item.outcome).toBe('refused');
    expect(item.detail).toMatch(/lost its data \(more shards missing than parity can rebuild: 1 of 4 shards are good, 2 needed\); kept until an operator heals with remove=true/);
    expect(trees()).toEqual(before);
  });

  it('concurrent PUTs and deletes during a heal are never resurrected or lost', async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `c/${String(i).padStart(2, '0')}`);
    await Promise.all(keys.map((k, i) => s.s3.send(new PutObjectCommand({ Bucket: 'busy', Key: k, Body: bytes(70_000 + i, i) }))));
    // Two drives miss every object: the heal rewrites all of them while clients work.
    for (const r of [s.roots[0]!, s.roots[2]!]) rmSync(join(r, 'busy', 'c'), { recursive: true, force: true });
    const seq = await start('busy', {});
    const deleted = new Set<string>();
    const latest = new Map<string, Buffer>();
    let round = 0;
    const status0 = await status('busy', seq.clientToken);
    expect(status0.Summary).toBe('running');
    while ((await status('busy', seq.clientToken)).Summary === 'running' && round < 40) {
      const del = keys[(round * 7) % keys.length]!;
      const put = keys[(round * 11 + 3) % keys.length]!;
      const fresh = `new/${round}`;
      const body = bytes(50_000 + round, 1000 + round);
      await Promise.all([
        s.s3.send(new DeleteObjectCommand({ Bucket: 'busy', Key: del })).then(() => {
          deleted.add(del);
          latest.delete(del);
        }),
        s.s3.send(new PutObjectCommand({ Bucket: 'busy', Key: fresh, Body: body })).then(() => latest.set(fresh, body)),
      ]);
      if (put !== del) {
        await s.s3.send(new PutObjectCommand({ Bucket: 'busy', Key: put, Body: body }));
        deleted.delete(put);
        latest.set(put, body);
      }
      round++;
    }
    expect(round).toBeGreaterThan(3);
    await finish('busy', seq.clientToken);
    for (const k of deleted) await expect(getBytes(s.s3, 'busy', k), k).rejects.toMatchObject({ name: 'NoSuchKey' });
    for (const [k, body] of latest) expect((await getBytes(s.s3, 'busy', k)).equals(body), k).toBe(true);
    // Untouched keys were healed and read back.
    for (const [i, k] of keys.entries()) {
      if (deleted.has(k) || latest.has(k)) continue;
      expect((await getBytes(s.s3, 'busy', k)).equals(bytes(70_000 + i, i)), k).toBe(true);
    }
    // A second heal finds nothing to bring back: deletes stay deleted on every drive.
    const again = await start('busy', { remove: true });
    const r = await finish('busy', again.clientToken);
    expect(r.items.filter((i) => i.type === 'object' && deleted.has(i.object) && i.outcome !== 'absent' && i.outcome !== 'removed')).toEqual([]);
    for (const k of deleted) await expect(getBytes(s.s3, 'busy', k), k).rejects.toMatchObject({ name: 'NoSuchKey' });
  });
});
