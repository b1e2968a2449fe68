/**
 * Inline budgets, large objects, 10 000-part metadata through the engine,
 * multiple pools.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromStream } from '../src/object/put-data.ts';
import type { FileVersion } from '../src/storage/drive.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { bytes, DEPLOYMENT_ID, type Fixture, get, makeFixture, md5, put, readAllBody } from './engine-helpers.ts';

const MiB = 1024 * 1024;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

async function isInline(root: string, bucket: string, key: string): Promise<boolean> {
  return (await readdir(join(root, bucket, key))).length === 1;
}

describe('inline budget', () => {
  it('256 KiB / K capped at 128 KiB per shard; divided by 8 on versioned buckets', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 }); // K = 2: 128 KiB per shard → 256 KiB objects
    const { layer, roots } = fx;
    await layer.makeBucket('u');
    await layer.makeBucket('v');
    await layer.setBucketVersioning('v', 'Enabled');
    await put(layer, 'u', 'at', bytes(256 * 1024));
    await put(layer, 'u', 'over', bytes(256 * 1024 + 1));
    await put(layer, 'v', 'at', bytes(32 * 1024));
    await put(layer, 'v', 'over', bytes(32 * 1024 + 1));
    expect(await isInline(roots[0]!, 'u', 'at')).toBe(true);
    expect(await isInline(roots[0]!, 'u', 'over')).toBe(false);
    expect(await isInline(roots[0]!, 'v', 'at')).toBe(true);
    expect(await isInline(roots[0]!, 'v', 'over')).toBe(false);
  });

  it('a configured inline block replaces the default; unknown-size bodies are inlined when they fit', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2, inlineBlock: 1000 });
    const { layer, roots } = fx;
    await layer.makeBucket('b');
    await put(layer, 'b', 'at', bytes(2000));
    await put(layer, 'b', 'over', bytes(2001));
    async function* chunks(n: number) {
      for (let i = 0; i < n; i += 100) yield bytes(Math.min(100, n - i), i);
    }
    await layer.putObject('b', 'stream-at', putDataFromStream(chunks(2000)), {});
    await layer.putObject('b', 'stream-over', putDataFromStream(chunks(5000)), {});
    expect(await isInline(roots[1]!, 'b', 'at')).toBe(true);
    expect(await isInline(roots[1]!, 'b', 'over')).toBe(false);
    expect(await isInline(roots[1]!, 'b', 'stream-at')).toBe(true);
    expect(await isInline(roots[1]!, 'b', 'stream-over')).toBe(false);
    const back = await get(layer, 'b', 'stream-over');
    const want = Buffer.concat(Array.from({ length: 50 }, (_, i) => bytes(100, i * 100)));
    expect(back.equals(want)).toBe(true);
  });
});

describe('large and wide', () => {
  it('100 MiB streamed object on 12+4 round-trips byte-exact', { timeout: 120_000 }, async () => {
    fx = await makeFixture({ drives: 16, standardParity: 4 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const size = 100 * MiB;
    const chunk = bytes(MiB, 7);
    async function* src() {
      for (let i = 0; i < size / MiB; i++) {
        chunk.writeUInt32LE(i, 0);
        yield chunk;
      }
    }
    const info = await layer.putObject('b', 'big', putDataFromStream(src(), size), {});
    const { createHash } = await import('node:crypto');
    const want = createHash('md5');
    for (let i = 0; i < size / MiB; i++) {
      chunk.writeUInt32LE(i, 0);
      want.update(chunk);
    }
    expect(info.etag).toBe(want.digest('hex'));
    // Lose four drives (the parity budget) and read it back through decode.
    for (const i of [0, 5, 10, 15]) await fx.offline(i);
    const r = await layer.getObject('b', 'big', {});
    const got = createHash('md5');
    let n = 0;
    for await (const c of r.body) {
      got.update(c as Buffer);
      n += (c as Buffer).length;
    }
    expect(n).toBe(size);
    expect(got.digest('hex')).toBe(info.etag);
  });

  it('10 000-part object metadata round-trips through the engine', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer, drives } = fx;
    await layer.makeBucket('b');
    // Store a real 2-part object, then extend its metadata to 10 000 zero-size
    // parts on every drive (uploading 10 000 parts is too slow for a unit run).
    const up = await layer.newMultipartUpload('b', 'many', {});
    const { putDataFromBuffer } = await import('../src/object/put-data.ts');
    const p1 = await layer.putObjectPart('b', 'many', up.uploadId, 1, putDataFromBuffer(bytes(100, 1)));
    await layer.completeMultipartUpload('b', 'many', up.uploadId, [{ number: 1, etag: p1.etag }]);
    const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
    for (const d of drives) {
      const [v] = decodeXlMeta(await d.readXlMeta('b', 'many')) as [FileVersion];
      const parts = [v.parts[0]!, ...Array.from({ length: 9_999 }, (_, i) => ({ number: i + 2, size: 0, etag: md5(Buffer.from(`${i}`)), modTime: 1 }))];
      await d.writeMetadata('b', 'many', { ...v, parts, dataDir: '' });
    }
    const info = await layer.getObjectInfo('b', 'many', {});
    expect(info.parts.length).toBe(10_000);
    expect(info.parts[9_999]!.number).toBe(10_000);
    expect(info.parts[5_000]!.etag).toBe(md5(Buffer.from('4999')));
  });
});

describe('pools', () => {
  it('new objects go to the pool with most free space; existing objects stay in their pool', async () => {
    const base = await mkdtemp(join(tmpdir(), 'svc-pools-'));
    try {
      const mk = async (name: string, n: number) => {
        const ds: LocalDrive[] = [];
        for (let i = 0; i < n; i++) {
          await mkdir(join(base, `${name}${i}`));
          const d = new LocalDrive(join(base, `${name}${i}`));
          await d.init();
          ds.push(d);
        }
        return ds;
      };
      const p0 = await mk('p0-', 2);
      const p1 = await mk('p1-', 4);
      // Pool 1 reports more free space (4 drives vs 2 on the same filesystem).
      const layer = await createObjectLayer({
        deploymentId: DEPLOYMENT_ID,
        pools: [
          { cmdline: 'p0', sets: [p0], standardParity: 1, rrsParity: 1 },
          { cmdline: 'p1', sets: [p1], standardParity: 2, rrsParity: 1 },
        ],
        logger: silentLogger,
        clock: systemClock,
      });
      await layer.makeBucket('b');
      const info = await put(layer, 'b', 'k', bytes(1000));
      expect(info.dataBlocks).toBe(2);
      expect(info.parityBlocks).toBe(2);
      expect(await readdir(join(base, 'p1-0', 'b'))).toEqual(['k']);
      expect(await readdir(join(base, 'p0-0', 'b'))).toEqual([]);
      // An overwrite stays in pool 1, a delete finds it there.
      await put(layer, 'b', 'k', bytes(2000));
      expect((await readAllBody((await layer.getObject('b', 'k', {})).body)).length).toBe(2000);
      const cap = await layer.capacity();
      expect(cap.length).toBe(2);
      expect(cap[1]!.usableTotal).toBe(Math.floor(cap[1]!.rawTotal * 0.5));
      expect(cap[0]!.drives.length).toBe(2);
      await layer.deleteObject('b', 'k', {});
      await expect(layer.getObjectInfo('b', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
      for (const d of [...p0, ...p1]) await d.flush();
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
