/**
 * The spec's quorum table and every EC:0 rule, over real temp-dir drives
 * taken offline by replacing their root with a plain file.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bytes, type Fixture, get, makeFixture, put } from './engine-helpers.ts';

const MiB = 1024 * 1024;
let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.cleanup();
  fx = undefined;
});

async function tmpEntries(root: string): Promise<string[]> {
  return (await readdir(join(root, '.svc.sys/tmp'))).filter((n) => n !== '.trash');
}

describe('quorum table', () => {
  it('4 drives EC:2: reads survive 2 drives removed, writes need 3', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const small = bytes(1000, 1);
    const large = bytes(2 * MiB + 17, 2);
    await put(layer, 'b', 'small', small);
    await put(layer, 'b', 'large', large);

    await fx.offline(0);
    await fx.offline(3);
    expect((await get(layer, 'b', 'small')).equals(small)).toBe(true);
    expect((await get(layer, 'b', 'large')).equals(large)).toBe(true);
    expect(layer.mrf.peek().some((e) => e.object === 'large' && e.reason === 'read-missing')).toBe(true);
    await expect(put(layer, 'b', 'new', bytes(10))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await expect(put(layer, 'b', 'new-large', bytes(MiB * 2))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    // Delete markers and version deletes need majority (3 of 4).
    await expect(layer.deleteObject('b', 'small', {})).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    expect(layer.health()).toMatchObject({ readQuorum: true, writeQuorum: false, onlineDrives: 2, totalDrives: 4 });

    // Three of four: writes and deletes work; the missed drive is queued for heal.
    await fx.online(3);
    await put(layer, 'b', 'new', bytes(10));
    expect(layer.mrf.peek().some((e) => e.object === 'new' && e.reason === 'write-partial' && e.slots.includes(0))).toBe(true);
    await layer.deleteObject('b', 'small', {});
    await expect(layer.getObjectInfo('b', 'small', {})).rejects.toMatchObject({ code: 'NoSuchKey' });

    // Three drives down: below read quorum.
    await fx.offline(1);
    await fx.offline(2);
    await expect(layer.getObjectInfo('b', 'large', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await fx.online(0);
    await fx.online(1);
    await fx.online(2);
    // Nothing of the refused writes was committed anywhere.
    await expect(layer.getObjectInfo('b', 'new-large', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    for (const r of fx.roots) expect(await tmpEntries(r)).toEqual([]);
  });

  it('2 drives EC:1 (K = M): one drive down still reads, writes fail', async () => {
    fx = await makeFixture({ drives: 2, standardParity: 1 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(MiB + 5);
    await put(layer, 'b', 'o', data);
    await fx.offline(1);
    expect((await get(layer, 'b', 'o')).equals(data)).toBe(true);
    await expect(put(layer, 'b', 'o2', bytes(5))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    expect(layer.health()).toMatchObject({ readQuorum: true, writeQuorum: false });
  });

  it('write quorum K+1 when K = M, K otherwise (6 drives EC:2 tolerate 2 down for writes)', async () => {
    fx = await makeFixture({ drives: 6, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    await fx.offline(0);
    await fx.offline(1);
    const data = bytes(MiB + 1);
    await put(layer, 'b', 'o', data);
    await fx.offline(2);
    await expect(put(layer, 'b', 'o2', data)).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await fx.online(0);
    await fx.online(1);
    await fx.online(2);
    expect((await get(layer, 'b', 'o')).equals(data)).toBe(true);
  });
});

describe('version vote', () => {
  it('an acknowledged newer version whose drives went offline is never replaced by an older one (no stale read)', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('v');
    await layer.setBucketVersioning('v', 'Enabled');
    const v1 = await put(layer, 'v', 'k', bytes(1000, 1));
    await fx.offline(3);
    const v2 = await put(layer, 'v', 'k', bytes(1000, 2)); // on drives 0-2: write quorum 3
    await fx.online(3);
    expect((await get(layer, 'v', 'k')).equals(bytes(1000, 2))).toBe(true);
    // Drives 2 and 3 left: v2 has one vote, v1 two (K = 2). v2 could be the
    // latest (it is), so the answer is ErasureReadQuorum, never v1.
    await fx.offline(0);
    await fx.offline(1);
    await expect(layer.getObjectInfo('v', 'k', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    expect((await get(layer, 'v', 'k', { versionId: v1.versionId })).equals(bytes(1000, 1))).toBe(true);
    await fx.online(0);
    await fx.online(1);
    expect((await layer.getObjectInfo('v', 'k', {})).versionId).toBe(v2.versionId);
  });

  it('delete markers need a majority to win the vote, as to be written', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('m');
    await layer.setBucketVersioning('m', 'Enabled');
    await put(layer, 'm', 'k', bytes(100, 3));
    await layer.deleteObject('m', 'k', {});
    await expect(layer.getObjectInfo('m', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    // Two drives left: the marker has 2 of the 3 votes it needs and could
    // still be the latest; the version behind it is not served.
    await fx.offline(0);
    await fx.offline(1);
    await expect(layer.getObjectInfo('m', 'k', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await fx.online(0);
    // Three drives: the marker has its majority again.
    await expect(layer.getObjectInfo('m', 'k', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
  });
});

describe('health', () => {
  it('follows drive state through probes, per set read and write quorum', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const layer = fx.layer as typeof fx.layer & { probeDrives(): Promise<void> };
    expect(layer.health()).toEqual({ readQuorum: true, writeQuorum: true, onlineDrives: 4, totalDrives: 4 });
    await fx.offline(0);
    await layer.probeDrives();
    expect(layer.health()).toEqual({ readQuorum: true, writeQuorum: true, onlineDrives: 3, totalDrives: 4 });
    await fx.offline(1);
    await layer.probeDrives();
    expect(layer.health()).toEqual({ readQuorum: true, writeQuorum: false, onlineDrives: 2, totalDrives: 4 });
    await fx.offline(2);
    await layer.probeDrives();
    expect(layer.health().readQuorum).toBe(false);
    for (const i of [0, 1, 2]) await fx.online(i);
    await layer.probeDrives();
    expect(layer.health().onlineDrives).toBe(4);
    const cap = await layer.capacity();
    expect(cap[0]!.drives.every((d) => d.online && d.total > 0)).toBe(true);
    expect(cap[0]!.usableTotal).toBe(Math.floor(cap[0]!.rawTotal / 2));
  });
});

describe('EC:0 rules', () => {
  it('one drive offline: HEAD/GET ErasureReadQuorum, PUT ErasureWriteQuorum with nothing committed, delete succeeds', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 0, rrsParity: 0 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(MiB + 3);
    await put(layer, 'b', 'keep', data);
    await put(layer, 'b', 'gone', bytes(100));
    await put(layer, 'b', 'inline', bytes(100));
    await fx.offline(2);
    await expect(layer.getObjectInfo('b', 'keep', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await expect(layer.getObject('b', 'keep', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await expect(layer.getObject('b', 'inline', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await expect(put(layer, 'b', 'new', bytes(MiB * 2))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await expect(put(layer, 'b', 'new-inline', bytes(10))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    // Deletes use majority (3 of 4).
    await layer.deleteObject('b', 'gone', {});
    // Bucket operations, .svc.sys metadata and listings still work.
    await layer.makeBucket('other');
    await layer.setBucketVersioning('other', 'Enabled');
    expect((await layer.getBucketInfo('other')).versioning).toBe('Enabled');
    const list = await layer.listObjects('b', { maxKeys: 100 });
    expect(list.objects.map((o) => o.name)).toEqual(['inline', 'keep']);
    // Delete markers work with one drive down.
    await layer.deleteObject('other', 'whatever', {});
    await fx.online(2);
    expect((await get(layer, 'b', 'keep')).equals(data)).toBe(true);
    await expect(layer.getObjectInfo('b', 'new', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(layer.getObjectInfo('b', 'new-inline', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    await expect(layer.getObjectInfo('b', 'gone', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
    for (const r of fx.roots) {
      expect(await tmpEntries(r)).toEqual([]);
      await expect(readdir(join(r, 'b/new'))).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });

  it('STANDARD EC:2 with RRS EC:0: only REDUCED_REDUNDANCY objects have zero-parity semantics', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2, rrsParity: 0 });
    const { layer } = fx;
    await layer.makeBucket('b');
    await put(layer, 'b', 'std', bytes(MiB + 1));
    const rrs = await put(layer, 'b', 'rrs', bytes(MiB + 1), { storageClass: 'REDUCED_REDUNDANCY' });
    expect(rrs.parityBlocks).toBe(0);
    await fx.offline(1);
    expect((await get(layer, 'b', 'std')).equals(bytes(MiB + 1))).toBe(true);
    await expect(layer.getObjectInfo('b', 'rrs', {})).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
    await expect(put(layer, 'b', 'rrs2', bytes(10), { storageClass: 'REDUCED_REDUNDANCY' })).rejects.toMatchObject({
      code: 'ErasureWriteQuorum',
    });
    await put(layer, 'b', 'std2', bytes(10));
  });

  it('a corrupt just-written shard is not committed (EC:0: the write fails)', async () => {
    // A drive whose createFile stores something else than it was given: the
    // pre-commit verification catches it.
    fx = await makeFixture({ drives: 2, standardParity: 0, rrsParity: 0 });
    const d = fx.drives[1]!;
    const orig = d.createFile.bind(d);
    d.createFile = async (vol, path, size, stream) => {
      async function* flip() {
        let first = true;
        for await (const c of stream) {
          if (first) {
            const x = Buffer.from(c);
            x[x.length - 1]! ^= 0xff;
            first = false;
            yield x;
          } else yield c;
        }
      }
      return orig(vol, path, size, flip());
    };
    await fx.layer.makeBucket('b');
    await expect(put(fx.layer, 'b', 'o', bytes(MiB + 9))).rejects.toMatchObject({ code: 'ErasureWriteQuorum' });
    await expect(fx.layer.getObjectInfo('b', 'o', {})).rejects.toMatchObject({ code: 'NoSuchKey' });
  });
});

describe('bitrot', () => {
  it('a flipped byte in a shard file is detected, the object reads byte-exact, read-repair is queued', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(2 * MiB + 100);
    await put(layer, 'b', 'o', data);
    // Corrupt the shard of every drive holding a data shard (shard 1 and 2) in block 1.
    let flipped = 0;
    for (const r of fx.roots) {
      const dir = join(r, 'b/o');
      const dd = (await readdir(dir)).find((n) => n !== 'xl.meta')!;
      const file = join(dir, dd, 'part.1');
      const { decodeXlMeta } = await import('../src/storage/xl-meta.ts');
      const meta = decodeXlMeta(await readFile(join(dir, 'xl.meta')));
      if (meta[0]!.erasure!.index !== 1) continue;
      const buf = await readFile(file);
      buf[8 + 512 * 1024 + 8 + 1000]! ^= 0x01; // inside block 1's shard data
      await writeFile(file, buf);
      flipped++;
    }
    expect(flipped).toBe(1);
    expect((await get(layer, 'b', 'o')).equals(data)).toBe(true);
    expect(layer.mrf.peek().some((e) => e.object === 'o' && e.reason === 'read-bitrot')).toBe(true);
    // Ranged read of the corrupt block also decodes correctly.
    const r = await get(layer, 'b', 'o', { range: { start: MiB + 10, end: MiB + 5000 } });
    expect(r.equals(data.subarray(MiB + 10, MiB + 5001))).toBe(true);
  });

  it('a corrupt xl.meta on one drive is voted out', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(5000);
    await put(layer, 'b', 'o', data);
    const f = join(fx.roots[0]!, 'b/o/xl.meta');
    const buf = await readFile(f);
    buf[20]! ^= 0xff;
    await writeFile(f, buf);
    expect((await get(layer, 'b', 'o')).equals(data)).toBe(true);
  });
});

describe('inline reads of the S3 GET (reuseBuffers)', () => {
  /** The bytes of a result's chunks (an array for the in-place path, a generator for the stream). */
  const bytesOf = async (chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array> | undefined): Promise<Buffer> => {
    const got: Buffer[] = [];
    for await (const c of chunks!) got.push(Buffer.from(c));
    return Buffer.concat(got);
  };

  it('come verified from the metadata already read, in one piece, and release the read lock at once', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(1000, 3);
    await put(layer, 'b', 'o', data);
    const whole = await layer.getObject('b', 'o', { reuseBuffers: true });
    expect(Array.isArray(whole.chunks)).toBe(true);
    expect((await bytesOf(whole.chunks)).equals(data)).toBe(true);
    const ranged = await layer.getObject('b', 'o', { reuseBuffers: true, range: { start: 10, end: 700 } });
    expect(ranged.range).toEqual({ start: 10, end: 700 });
    expect((await bytesOf(ranged.chunks)).equals(data.subarray(10, 701))).toBe(true);
    // Neither result was consumed or destroyed: an overwrite (the key's write lock) still goes through.
    const next = bytes(900, 4);
    await put(layer, 'b', 'o', next);
    expect((await get(layer, 'b', 'o')).equals(next)).toBe(true);
    // The chunks handed out before are views of the old version's metadata: unchanged.
    expect((await bytesOf(whole.chunks)).equals(data)).toBe(true);
    await put(layer, 'b', 'empty', Buffer.alloc(0));
    const empty = await layer.getObject('b', 'empty', { reuseBuffers: true });
    expect((await bytesOf(empty.chunks)).length).toBe(0);
    expect(layer.mrf.peek()).toEqual([]);
  });

  it('a shard frame failing its bitrot check, or a drive without the version, goes through the stream: decoded, and queued for heal', async () => {
    fx = await makeFixture({ drives: 4, standardParity: 2 });
    const { layer } = fx;
    await layer.makeBucket('b');
    const data = bytes(1000, 5);
    await put(layer, 'b', 'rot', data);
    await put(layer, 'b', 'gone', data);
    const { decodeXlMeta, encodeXlMeta } = await import('../src/storage/xl-meta.ts');
    // Flip a byte of data shard 1's frame inside a well-formed xl.meta (its own checksums rewritten).
    let flipped = 0;
    for (const r of fx.roots) {
      const f = join(r, 'b/rot/xl.meta');
      const versions = decodeXlMeta(await readFile(f));
      if (versions[0]!.erasure!.index !== 1) continue;
      const inline = Buffer.from(versions[0]!.inlineData!);
      inline[8 + 100]! ^= 0x01;
      versions[0]!.inlineData = inline;
      await writeFile(f, encodeXlMeta(versions));
      flipped++;
    }
    expect(flipped).toBe(1);
    const rot = await layer.getObject('b', 'rot', { reuseBuffers: true });
    expect(Array.isArray(rot.chunks)).toBe(false);
    expect((await bytesOf(rot.chunks)).equals(data)).toBe(true);
    expect(layer.mrf.peek().some((e) => e.object === 'rot' && e.reason === 'read-bitrot')).toBe(true);

    await fx.offline(3);
    const gone = await layer.getObject('b', 'gone', { reuseBuffers: true });
    expect(Array.isArray(gone.chunks)).toBe(false);
    expect((await bytesOf(gone.chunks)).equals(data)).toBe(true);
    expect(layer.mrf.peek().some((e) => e.object === 'gone' && e.reason === 'read-missing' && e.slots.includes(3))).toBe(true);
  });
});
