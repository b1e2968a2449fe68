import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytes, type Fixture, makeFixture, put } from './engine-helpers.ts';

let fx: Fixture;
const KEYS = ['a', 'a-b', 'a/b', 'a/b/c', 'a/c', 'b/', 'b/x', 'dir/obj', 'dir/sub/1', 'dir/sub/2', 'z~', 'é'];

beforeAll(async () => {
  // Two sets of 4: keys hash to different sets, the listing merges them.
  fx = await makeFixture({ drives: 4, sets: 2, standardParity: 2 });
  await fx.layer.makeBucket('l');
  for (const k of KEYS) await put(fx.layer, 'l', k, bytes(10));
});
afterAll(async () => {
  await fx.cleanup();
});

/** Reference S3 listing semantics over a sorted key list. */
function model(keys: string[], prefix: string, delimiter: string, marker: string | undefined, maxKeys: number) {
  const entries: { key: string; prefix: boolean }[] = [];
  for (const k of [...keys].sort()) {
    if (!k.startsWith(prefix)) continue;
    let e = { key: k, prefix: false };
    if (delimiter !== '') {
      const i = k.indexOf(delimiter, prefix.length);
      if (i >= 0) e = { key: k.slice(0, i + delimiter.length), prefix: true };
    }
    if (marker !== undefined && e.key <= marker) continue;
    if (entries.length > 0 && entries[entries.length - 1]!.key === e.key) continue;
    entries.push(e);
  }
  return { page: entries.slice(0, maxKeys), truncated: entries.length > maxKeys };
}

describe('listing merge over sets', () => {
  it('lists all keys across sets in order', async () => {
    const r = await fx.layer.listObjects('l', { maxKeys: 1000 });
    expect(r.objects.map((o) => o.name)).toEqual([...KEYS].sort());
    expect(r.isTruncated).toBe(false);
  });

  it('prefix / delimiter / marker / max-keys agree with the S3 model (property)', async () => {
    const prefixes = ['', 'a', 'a/', 'dir/', 'dir/s', 'b', 'zz'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...prefixes),
        fc.constantFrom('', '/', '-', 'b'),
        fc.option(fc.constantFrom(...KEYS, 'a/', 'dir/sub/', 'm'), { nil: undefined }),
        fc.integer({ min: 1, max: 6 }),
        async (prefix, delimiter, marker, maxKeys) => {
          const r = await fx.layer.listObjects('l', {
            prefix,
            delimiter,
            maxKeys,
            ...(marker !== undefined ? { marker } : {}),
          });
          const want = model(KEYS, prefix, delimiter, marker, maxKeys);
          const got = [...r.objects.map((o) => ({ key: o.name, prefix: false })), ...r.prefixes.map((p) => ({ key: p, prefix: true }))].sort(
            (x, y) => (x.key < y.key ? -1 : 1),
          );
          expect(got).toEqual(want.page);
          expect(r.isTruncated).toBe(want.truncated);
          if (r.isTruncated) expect(r.nextMarker).toBe(want.page[want.page.length - 1]!.key);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('pages through everything with nextMarker', async () => {
    const seen: string[] = [];
    let marker: string | undefined;
    for (;;) {
      const r = await fx.layer.listObjects('l', { maxKeys: 3, ...(marker !== undefined ? { marker } : {}) });
      seen.push(...r.objects.map((o) => o.name));
      if (!r.isTruncated) break;
      marker = r.nextMarker;
    }
    expect(seen).toEqual([...KEYS].sort());
  });

  it('list quorum modes', async () => {
    for (const q of ['disk', 'reduced', 'optimal', 'auto', 'strict'] as const) {
      const layer = await fx.reopen({ listQuorum: q });
      const r = await layer.listObjects('l', { maxKeys: 1000 });
      expect(r.objects.length).toBe(KEYS.length);
    }
    await fx.offline(0);
    try {
      const strict = await fx.reopen({ listQuorum: 'strict' });
      await expect(strict.listObjects('l', { maxKeys: 1000 })).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
      const optimal = await fx.reopen({ listQuorum: 'optimal' });
      expect((await optimal.listObjects('l', { maxKeys: 1000 })).objects.length).toBe(KEYS.length);
    } finally {
      await fx.online(0);
    }
  });

  it('a bucket with objects cannot be deleted unless forced', async () => {
    await expect(fx.layer.deleteBucket('l')).rejects.toMatchObject({ code: 'BucketNotEmpty' });
    await fx.layer.makeBucket('empty');
    expect((await fx.layer.listBuckets()).map((b) => b.name)).toEqual(['empty', 'l']);
    await fx.layer.deleteBucket('empty');
    await expect(fx.layer.getBucketInfo('empty')).rejects.toMatchObject({ code: 'NoSuchBucket' });
    expect((await fx.layer.listBuckets()).map((b) => b.name)).toEqual(['l']);
  });
});
