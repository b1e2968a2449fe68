import { afterEach, describe, expect, it } from 'vitest';
import { hasCode } from '../src/util/errors.ts';
import { bytes, type Fixture, get, makeFixture, md5, put } from './engine-helpers.ts';

const MiB = 1024 * 1024;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

/** Inline budget per shard for K data shards on an unversioned bucket. */
function inlineLimit(k: number): number {
  const perShard = Math.min(Math.floor((256 * 1024) / k), 128 * 1024);
  return perShard * k; // largest object whose every shard fits (single block)
}

const GEOMETRIES: [number, number][] = [
  [2, 2],
  [4, 2],
  [4, 4],
  [8, 4],
  [12, 4],
  [8, 8],
  [1, 0],
];

describe('object round trips over real drives', () => {
  for (const [k, m] of GEOMETRIES) {
    it(`${k}+${m}: sizes 0, 1, inline ±1, 1 MiB ±1, 3 MiB+7 round-trip byte-exact`, async () => {
      fx = await makeFixture({ drives: k + m, standardParity: m, rrsParity: 0 });
      const { layer } = fx;
      await layer.makeBucket('b');
      const lim = inlineLimit(k);
      const sizes = [0, 1, lim - 1, lim, lim + 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 7];
      for (const size of sizes) {
        const data = bytes(size, size);
        const info = await put(layer, 'b', `o-${size}`, data);
        expect(info.size).toBe(size);
        expect(info.etag).toBe(md5(data));
        expect(info.dataBlocks).toBe(k);
        expect(info.parityBlocks).toBe(m);
        const back = await get(layer, 'b', `o-${size}`);
        expect(back.length).toBe(size);
        expect(back.equals(data)).toBe(true);
      }
      // Inline vs shard files: the boundary object is inline (no data dir), +1 is not.
      const { readdir } = await import('node:fs/promises');
      const dirAt = await readdir(`${fx.roots[0]}/b/o-${lim}`);
      const dirAfter = await readdir(`${fx.roots[0]}/b/o-${lim + 1}`);
      expect(dirAt).toEqual(['xl.meta']);
      expect(dirAfter.length).toBe(2);
    });
  }

  it('range reads across block and part boundaries', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(3 * MiB + 123);
    await put(layer, 'b', 'r', data);
    for (const [s, e] of [
      [0, 0],
      [MiB - 5, MiB + 5],
      [2 * MiB, 3 * MiB + 122],
      [17, 2 * MiB + 3],
    ] as const) {
      const r = await layer.getObject('b', 'r', { range: { start: s, end: e } });
      expect(r.range).toEqual({ start: s, end: e });
      const parts: Buffer[] = [];
      for await (const c of r.body) parts.push(c as Buffer);
      expect(Buffer.concat(parts).equals(data.subarray(s, e + 1))).toBe(true);
    }
    const suffix = await get(layer, 'b', 'r', { range: { suffix: 10 } });
    expect(suffix.equals(data.subarray(data.length - 10))).toBe(true);
    await expect(layer.getObject('b', 'r', { range: { start: data.length } })).rejects.toMatchObject({ code: 'InvalidRange' });
  });

  it('metadata, tags, checksums, content headers and updateObjectMetadata', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const { putDataFromBuffer } = await import('../src/object/put-data.ts');
    const data = bytes(1000);
    await layer.putObject('b', 'm', putDataFromBuffer(data, { algorithm: 'CRC32', value: 'AAAAAA==', type: 'FULL_OBJECT' }), {
      userMeta: { color: 'blue' },
      tags: 'a=1',
      contentHeaders: { contentType: 'text/plain', cacheControl: 'no-cache' },
    });
    const info = await layer.getObjectInfo('b', 'm', {});
    expect(info.userMeta).toEqual({ color: 'blue' });
    expect(info.tags).toBe('a=1');
    expect(info.contentHeaders).toEqual({ contentType: 'text/plain', cacheControl: 'no-cache' });
    expect(info.checksum).toEqual({ algorithm: 'CRC32', value: 'AAAAAA==', type: 'FULL_OBJECT' });
    const upd = await layer.updateObjectMetadata('b', 'm', { tags: 'b=2', userMeta: { color: 'red' } });
    expect(upd.tags).toBe('b=2');
    const again = await layer.getObjectInfo('b', 'm', {});
    expect(again.tags).toBe('b=2');
    expect(again.userMeta).toEqual({ color: 'red' });
    expect((await get(layer, 'b', 'm')).equals(data)).toBe(true);
  });

  it('preconditions on read and conditional writes', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const info = await put(layer, 'b', 'p', bytes(10));
    await expect(layer.getObjectInfo('b', 'p', { preconditions: { ifNoneMatch: info.etag } })).rejects.toMatchObject({ code: 'NotModified' });
    await expect(layer.getObjectInfo('b', 'p', { preconditions: { ifMatch: 'nope' } })).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await expect(put(layer, 'b', 'p', bytes(5), { preconditions: { ifNoneMatch: '*' } })).rejects.toMatchObject({ code: 'PreconditionFailed' });
    await put(layer, 'b', 'p', bytes(5), { preconditions: { ifMatch: info.etag } });
    expect((await get(layer, 'b', 'p')).length).toBe(5);
  });

  it('copy as get → put on the same key does not deadlock', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(2 * MiB + 3);
    await put(layer, 'b', 'c', data);
    const { putDataFromStream } = await import('../src/object/put-data.ts');
    const src = await layer.getObject('b', 'c', {});
    await layer.putObject('b', 'c', putDataFromStream(src.body, src.info.size), { userMeta: { copied: 'yes' } });
    const back = await layer.getObjectInfo('b', 'c', {});
    expect(back.userMeta.copied).toBe('yes');
    expect((await get(layer, 'b', 'c')).equals(data)).toBe(true);
  });

  it('a body that fails mid-stream commits nothing', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    await put(layer, 'b', 'x', bytes(100));
    async function* bad() {
      yield bytes(MiB + 5);
      throw new Error('client went away');
    }
    const { putDataFromStream } = await import('../src/object/put-data.ts');
    await expect(layer.putObject('b', 'x', putDataFromStream(bad()), {})).rejects.toThrow('client went away');
    expect((await get(layer, 'b', 'x')).equals(bytes(100))).toBe(true);
    const { readdir } = await import('node:fs/promises');
    for (const r of fx.roots) {
      const tmp = (await readdir(`${r}/.svc.sys/tmp`)).filter((n) => n !== '.trash');
      expect(tmp).toEqual([]);
    }
  });

  it('a body longer or shorter than its declared size commits nothing (below a block, a block, several blocks)', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    await put(layer, 'b', 'x', bytes(100));
    const { putDataFromStream } = await import('../src/object/put-data.ts');
    for (const declared of [0, 4096, MiB, 3 * MiB + 7]) {
      for (const actual of [declared + 1, declared + MiB, declared - 1]) {
        if (actual < 0) continue;
        async function* body() {
          yield bytes(actual);
        }
        await expect(layer.putObject('b', 'x', putDataFromStream(body(), declared), {})).rejects.toMatchObject({ code: 'IncompleteBody' });
      }
    }
    expect((await get(layer, 'b', 'x')).equals(bytes(100))).toBe(true);
  });

  it('unknown bucket and key errors', async () => {
    fx = await makeFixture({ drives: 2, standardParity: 1 });
    const { layer } = fx;
    await expect(layer.getObjectInfo('nob', 'k', {})).rejects.toMatchObject({ code: 'NoSuchBucket' });
    await layer.makeBucket('b');
    await expect(layer.makeBucket('b')).rejects.toMatchObject({ code: 'BucketAlreadyOwnedByYou' });
    await expect(layer.getObjectInfo('b', 'k', {})).rejects.toSatisfy((e: unknown) => hasCode(e, 'NoSuchKey'));
    await expect(layer.getObjectInfo('b', '../etc/passwd', {})).rejects.toMatchObject({ code: 'InvalidObjectName' });
  });
});
