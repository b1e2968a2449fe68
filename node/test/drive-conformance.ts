/**
 * The shared `Drive` conformance suite: every implementation (LocalDrive on a
 * temp dir, RemoteDrive over real internode RPC to a LocalDrive) runs exactly
 * these cases, so the remote one cannot drift from the local one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bitrotHash, shardFileDataSize } from '../src/erasure/index.ts';
import { type Drive, type FileVersion, SYS_VOL, TMP_DIR, type WalkEntry } from '../src/storage/drive.ts';
import { decodeXlMeta } from '../src/storage/xl-meta.ts';
import { SvcError } from '../src/util/errors.ts';

export interface DriveFixture {
  drive: Drive;
  cleanup(): Promise<void>;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(SvcError);
    return (err as SvcError).code;
  }
  throw new Error('expected the call to fail');
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of it) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

async function* chunked(buf: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let off = 0; off < buf.length; off += size) yield buf.subarray(off, Math.min(buf.length, off + size));
}

/** A plain erasure-coded version (2+2, one part) with `over` applied. */
export function version(over: Partial<FileVersion> = {}): FileVersion {
  return {
    versionId: randomUUID(),
    modTime: 1_700_000_000_000,
    type: 'object',
    dataDir: randomUUID(),
    erasure: { data: 2, parity: 2, blockSize: 1 << 20, index: 1, distribution: [1, 2, 3, 4] },
    size: 10,
    parts: [{ number: 1, size: 10, etag: 'e1', modTime: 1_700_000_000_000 }],
    etag: 'e1',
    contentHeaders: { contentType: 'text/plain' },
    userMeta: { k: 'v' },
    sysMeta: {},
    storageClass: 'STANDARD',
    tags: '',
    inline: false,
    ...over,
  };
}

/** Frames shard data the way the erasure layer does: [hash][block] per block. */
function framed(data: Uint8Array, blockSize: number): Buffer {
  const parts: Uint8Array[] = [];
  for (let off = 0; off < data.length; off += blockSize) {
    const block = data.subarray(off, Math.min(data.length, off + blockSize));
    parts.push(bitrotHash(block), block);
  }
  return Buffer.concat(parts);
}

async function walk(drive: Drive, vol: string, opts: Parameters<Drive['walkDir']>[1]): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  for await (const e of drive.walkDir(vol, opts)) out.push(e);
  return out;
}

export function runDriveConformance(name: string, makeDrive: () => Promise<DriveFixture>): void {
  describe(`Drive conformance: ${name}`, () => {
    let fx: DriveFixture;
    let d: Drive;
    beforeEach(async () => {
      fx = await makeDrive();
      d = fx.drive;
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it('reports disk info and online state', async () => {
      const info = await d.diskInfo();
      expect(info.online).toBe(true);
      expect(info.total).toBeGreaterThan(0);
      expect(info.free).toBeGreaterThan(0);
      expect(info.free).toBeLessThanOrEqual(info.total);
      expect(d.isOnline()).toBe(true);
      // No format.json: the drive claims no identity (an empty or replaced drive).
      expect(info.id).toBe('');
      expect(info.format).toBe('missing');
    });

    it('checkParts reports each part of a version as ok, missing or corrupt (deep: every frame)', async () => {
      const blockSize = 1 << 20;
      const k = 2;
      const shardBlock = Math.ceil(blockSize / k);
      await d.makeVol('bkt');
      const sizes = [3 * blockSize + 5, 1000, 2 * blockSize];
      const v = version({
        size: sizes.reduce((a, b) => a + b, 0),
        parts: sizes.map((size, i) => ({ number: i + 1, size, etag: `e${i}`, modTime: 1 })),
      });
      const stage = `${TMP_DIR}/${randomUUID()}`;
      const files: Buffer[] = [];
      for (const [i, size] of sizes.entries()) {
        const shard = randomBytes(shardFileDataSize(size, blockSize, k));
        const f = framed(shard, shardBlock);
        files.push(f);
        await d.createFile(SYS_VOL, `${stage}/${v.dataDir}/part.${i + 1}`, f.length, chunked(f, 64 << 10));
      }
      await d.renameData(SYS_VOL, stage, v, 'bkt', 'obj');
      expect(await d.checkParts('bkt', 'obj', v, { deep: false })).toEqual(['ok', 'ok', 'ok']);
      expect(await d.checkParts('bkt', 'obj', v, { deep: true })).toEqual(['ok', 'ok', 'ok']);
      // Part 2 loses its file, part 3 gets one flipped byte (same size: only a deep check sees it).
      await d.delete('bkt', `obj/${v.dataDir}/part.2`, { recursive: false });
      const bad = Buffer.from(files[2]!);
      bad[100] = (bad[100]! + 1) & 0xff;
      await d.createFile('bkt', `obj/${v.dataDir}/part.3`, bad.length, chunked(bad, 64 << 10));
      expect(await d.checkParts('bkt', 'obj', v, { deep: false })).toEqual(['ok', 'missing', 'ok']);
      expect(await d.checkParts('bkt', 'obj', v, { deep: true })).toEqual(['ok', 'missing', 'corrupt']);
      // A truncated part is corrupt without reading it.
      await d.createFile('bkt', `obj/${v.dataDir}/part.1`, 10, chunked(Buffer.alloc(10), 10));
      expect(await d.checkParts('bkt', 'obj', v, { deep: false })).toEqual(['corrupt', 'missing', 'ok']);
      // Inline versions and delete markers carry no files.
      expect(await d.checkParts('bkt', 'obj', version({ inline: true, dataDir: '' }), { deep: true })).toEqual(['ok']);
    });

    it('creates, lists, stats and deletes volumes with the contract errors', async () => {
      await d.makeVol('bkt');
      expect(await codeOf(d.makeVol('bkt'))).toBe('VolumeExists');
      const st = await d.statVol('bkt');
      expect(st.name).toBe('bkt');
      expect(typeof st.created).toBe('number');
      expect((await d.listVols()).map((v) => v.name)).toContain('bkt');
      expect((await d.listVols()).map((v) => v.name)).not.toContain(SYS_VOL);
      expect(await codeOf(d.statVol('nope'))).toBe('VolumeNotFound');
      await d.writeAll('bkt', 'a/b', new Uint8Array([1]));
      expect(await codeOf(d.deleteVol('bkt', false))).toBe('VolumeNotEmpty');
      await d.deleteVol('bkt', true);
      expect(await codeOf(d.statVol('bkt'))).toBe('VolumeNotFound');
      expect(await codeOf(d.deleteVol('bkt', false))).toBe('VolumeNotFound');
    });

    it('writes and reads whole files, binary-exact, and reports missing ones', async () => {
      await d.makeVol('bkt');
      const data = randomBytes(100_000);
      await d.writeAll('bkt', 'dir/file.bin', data);
      expect(Buffer.from(await d.readAll('bkt', 'dir/file.bin')).equals(data)).toBe(true);
      await d.writeAll('bkt', 'dir/file.bin', new Uint8Array(0));
      expect((await d.readAll('bkt', 'dir/file.bin')).length).toBe(0);
      expect(await codeOf(d.readAll('bkt', 'dir/none'))).toBe('FileNotFound');
      expect(await codeOf(d.readAll('nope', 'x'))).toMatch(/^(VolumeNotFound|FileNotFound)$/);
      expect(await codeOf(d.readAll('bkt', '../escape'))).toBe('InvalidArgument');
    });

    it('streams a file in and ranged reads out', async () => {
      const data = randomBytes(3 * 1024 * 1024 + 17);
      const path = `${TMP_DIR}/${randomUUID()}/part.1`;
      await d.createFile(SYS_VOL, path, data.length, chunked(data, 65_536));
      expect((await collect(await d.readFileStream(SYS_VOL, path, 0, data.length))).equals(data)).toBe(true);
      const mid = await collect(await d.readFileStream(SYS_VOL, path, 1_000_000, 1_500_000));
      expect(mid.equals(data.subarray(1_000_000, 2_500_000))).toBe(true);
      expect((await collect(await d.readFileStream(SYS_VOL, path, 5, 0))).length).toBe(0);
      expect(await codeOf(d.readFileStream(SYS_VOL, `${TMP_DIR}/none`, 0, 1))).toBe('FileNotFound');
      // reuse: each chunk is consumed (copied) before the next is pulled; the bytes are the same.
      for (const chunkSize of [65_536, 524_296, 3 * 1024 * 1024]) {
        const got = await collect(await d.readFileStream(SYS_VOL, path, 7, data.length - 7, { chunkSize, reuse: true }));
        expect(got.equals(data.subarray(7)), `chunk ${chunkSize}`).toBe(true);
      }
    });

    it('refuses a streamed file of the wrong size and leaves nothing behind', async () => {
      const dir = `${TMP_DIR}/${randomUUID()}`;
      const path = `${dir}/part.1`;
      const err = await codeOf(d.createFile(SYS_VOL, path, 1000, chunked(randomBytes(999), 100)));
      expect(err).toBe('IncompleteBody');
      expect(await codeOf(d.readAll(SYS_VOL, path))).toBe('FileNotFound');
    });

    it('a large file whose source fails mid-write (write-behind flushes in flight) fails and leaves nothing behind', async () => {
      const dir = `${TMP_DIR}/${randomUUID()}`;
      const path = `${dir}/part.1`;
      const data = randomBytes(9 * 1024 * 1024);
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield* chunked(data.subarray(0, 7 * 1024 * 1024), 256 * 1024);
        throw new SvcError('IncompleteBody', 'client went away');
      }
      await expect(d.createFile(SYS_VOL, path, data.length, failing())).rejects.toThrow('client went away');
      // A remote drive learns of the failure from the aborted request, so
      // its cleanup may land just after the caller's rejection.
      await expect
        .poll(() => d.readAll(SYS_VOL, path).then(() => 'still there', (err: unknown) => (err instanceof SvcError ? err.code : String(err))), { timeout: 5000 })
        .toBe('FileNotFound');
      // the same path then takes a whole large file, byte-exact
      await d.createFile(SYS_VOL, path, data.length, chunked(data, 256 * 1024));
      expect((await collect(await d.readFileStream(SYS_VOL, path, 0, data.length))).equals(data)).toBe(true);
    });

    it('verifies bitrot frames of a shard file', async () => {
      const blockSize = 4096;
      const shard = randomBytes(3 * blockSize + 100);
      const good = framed(shard, blockSize);
      const path = `${TMP_DIR}/${randomUUID()}/part.1`;
      await d.createFile(SYS_VOL, path, good.length, chunked(good, 1000));
      await d.verifyFile(SYS_VOL, path, blockSize, shard.length);
      const bad = Buffer.from(good);
      bad[bad.length - 5] = (bad[bad.length - 5]! + 1) & 0xff;
      const badPath = `${TMP_DIR}/${randomUUID()}/part.1`;
      await d.createFile(SYS_VOL, badPath, bad.length, chunked(bad, 1000));
      expect(await codeOf(d.verifyFile(SYS_VOL, badPath, blockSize, shard.length))).toBe('FileCorrupt');
      expect(await codeOf(d.verifyFile(SYS_VOL, path, blockSize, shard.length + 1))).toBe('FileCorrupt');
    });

    it('a frame-checked write (frameBlockSize) verifies a good shard and never passes a corrupt one', async () => {
      const blockSize = 4096;
      const shard = randomBytes(3 * blockSize + 100);
      const good = framed(shard, blockSize);
      const frames = [0, 1, 2, 3].map((b) => good.subarray(b * (8 + blockSize), Math.min(good.length, (b + 1) * (8 + blockSize))));
      async function* each(fs: Uint8Array[]) {
        yield* fs;
      }
      const path = `${TMP_DIR}/${randomUUID()}/part.1`;
      await d.createFile(SYS_VOL, path, good.length, each(frames), { frameBlockSize: blockSize });
      await d.verifyFile(SYS_VOL, path, blockSize, shard.length);
      expect(await codeOf(d.verifyFile(SYS_VOL, path, blockSize, shard.length + 1))).toBe('FileCorrupt');
      const bad = Buffer.from(good);
      bad[bad.length - 5] = (bad[bad.length - 5]! + 1) & 0xff;
      const badFrames = [0, 1, 2, 3].map((b) => bad.subarray(b * (8 + blockSize), Math.min(bad.length, (b + 1) * (8 + blockSize))));
      const badPath = `${TMP_DIR}/${randomUUID()}/part.1`;
      // Caught while written: the write fails and leaves nothing behind.
      expect(await codeOf(d.createFile(SYS_VOL, badPath, bad.length, each(badFrames), { frameBlockSize: blockSize }))).toBe('FileCorrupt');
      await expect
        .poll(() => d.readAll(SYS_VOL, badPath).then(() => 'still there', (err: unknown) => (err instanceof SvcError ? err.code : String(err))))
        .toBe('FileNotFound');
    });

    it('a frame-checked write in chunks that ignore frame boundaries (network-sized) is checked as written and verifies', async () => {
      const blockSize = 4096;
      const shard = randomBytes(5 * blockSize + 77);
      const good = framed(shard, blockSize);
      for (const size of [1000, 8 + blockSize + 1, 3 * (8 + blockSize)]) {
        const path = `${TMP_DIR}/${randomUUID()}/part.1`;
        await d.createFile(SYS_VOL, path, good.length, chunked(good, size), { frameBlockSize: blockSize });
        await d.verifyFile(SYS_VOL, path, blockSize, shard.length);
        const bad = Buffer.from(good);
        bad[20] = (bad[20]! + 1) & 0xff;
        const badPath = `${TMP_DIR}/${randomUUID()}/part.1`;
        // Checked while written even when chunks split frames (no read-back needed).
        expect(await codeOf(d.createFile(SYS_VOL, badPath, bad.length, chunked(bad, size), { frameBlockSize: blockSize }))).toBe('FileCorrupt');
      }
    });

    it('renames, lists and deletes files and directories', async () => {
      await d.makeVol('bkt');
      await d.writeAll('bkt', 'x/one', new Uint8Array([1]));
      await d.writeAll('bkt', 'x/two', new Uint8Array([2]));
      await d.writeAll('bkt', 'x/sub/three', new Uint8Array([3]));
      expect(await d.listDir('bkt', 'x')).toEqual(['one', 'sub/', 'two']);
      await d.renameFile('bkt', 'x/one', 'bkt', 'y/uno');
      expect(Buffer.from(await d.readAll('bkt', 'y/uno'))).toEqual(Buffer.from([1]));
      expect(await codeOf(d.readAll('bkt', 'x/one'))).toBe('FileNotFound');
      await d.delete('bkt', 'x/two', { recursive: false });
      expect(await codeOf(d.readAll('bkt', 'x/two'))).toBe('FileNotFound');
      expect(await codeOf(d.delete('bkt', 'x/two', { recursive: false }))).toBe('FileNotFound');
      await d.delete('bkt', 'x', { recursive: true });
      expect(await codeOf(d.readAll('bkt', 'x/sub/three'))).toBe('FileNotFound');
      expect(await codeOf(d.listDir('bkt', 'nowhere'))).toBe('FileNotFound');
    });

    it('renameData into a volume that does not exist: VolumeNotFound, and the volume stays absent', async () => {
      const inline = version({ dataDir: '', inline: true, inlineData: new Uint8Array([1, 2, 3]) });
      expect(await codeOf(d.renameData(SYS_VOL, `${TMP_DIR}/${randomUUID()}`, inline, 'gone', 'a/b/obj'))).toBe('VolumeNotFound');
      const stage = `${TMP_DIR}/${randomUUID()}`;
      const v = version();
      await d.createFile(SYS_VOL, `${stage}/${v.dataDir}/part.1`, 3, chunked(new Uint8Array([7, 8, 9]), 3));
      expect(await codeOf(d.renameData(SYS_VOL, stage, v, 'gone', 'obj'))).toBe('VolumeNotFound');
      expect(await codeOf(d.statVol('gone'))).toBe('VolumeNotFound');
    });

    it('commits a write with renameData, reads xl.meta back, and undoes one', async () => {
      await d.makeVol('bkt');
      const stage = `${TMP_DIR}/${randomUUID()}`;
      const v1 = version();
      const shard = randomBytes(5000);
      await d.createFile(SYS_VOL, `${stage}/${v1.dataDir}/part.1`, shard.length, chunked(shard, 1024));
      expect(await d.renameData(SYS_VOL, stage, v1, 'bkt', 'dir/obj')).toEqual({});
      await d.commitRenameData(SYS_VOL, stage);
      const meta = decodeXlMeta(await d.readXlMeta('bkt', 'dir/obj'));
      expect(meta.map((v) => v.versionId)).toEqual([v1.versionId]);
      expect(meta[0]!.userMeta).toEqual({ k: 'v' });
      expect(meta[0]!.erasure?.distribution).toEqual([1, 2, 3, 4]);
      const back = await collect(await d.readFileStream('bkt', `dir/obj/${v1.dataDir}/part.1`, 0, shard.length));
      expect(back.equals(shard)).toBe(true);

      // A second write of the same version id, undone below quorum: the first stays.
      const stage2 = `${TMP_DIR}/${randomUUID()}`;
      const v1b = version({ versionId: v1.versionId, etag: 'e2', modTime: v1.modTime + 1 });
      await d.createFile(SYS_VOL, `${stage2}/${v1b.dataDir}/part.1`, 3, chunked(new Uint8Array([7, 8, 9]), 3));
      const res = await d.renameData(SYS_VOL, stage2, v1b, 'bkt', 'dir/obj');
      expect(res.replaced?.versionId).toBe(v1.versionId);
      expect(res.replaced?.etag).toBe('e1');
      await d.undoRenameData(SYS_VOL, stage2, v1b, 'bkt', 'dir/obj', res.replaced);
      const after = decodeXlMeta(await d.readXlMeta('bkt', 'dir/obj'));
      expect(after.map((v) => [v.versionId, v.etag])).toEqual([[v1.versionId, 'e1']]);
      const still = await collect(await d.readFileStream('bkt', `dir/obj/${v1.dataDir}/part.1`, 0, shard.length));
      expect(still.equals(shard)).toBe(true);

      expect(await codeOf(d.readXlMeta('bkt', 'dir/none'))).toBe('FileNotFound');
    });

    it('keeps inline data and delete markers in the journal; deletes versions', async () => {
      await d.makeVol('bkt');
      const inline = version({ dataDir: '', inline: true, inlineData: new Uint8Array([9, 8, 7, 6]), modTime: 1 });
      await d.writeMetadata('bkt', 'obj', inline);
      const marker = version({ type: 'delete', dataDir: '', size: 0, parts: [], modTime: 2 });
      delete marker.erasure;
      await d.writeMetadata('bkt', 'obj', marker);
      let vs = decodeXlMeta(await d.readXlMeta('bkt', 'obj'));
      expect(vs.map((v) => v.type)).toEqual(['delete', 'object']);
      expect(Buffer.from(vs[1]!.inlineData!)).toEqual(Buffer.from([9, 8, 7, 6]));

      await d.writeMetadata('bkt', 'obj', { ...inline, userMeta: { k: 'changed' }, inlineData: new Uint8Array([0]) }, { update: true });
      vs = decodeXlMeta(await d.readXlMeta('bkt', 'obj'));
      expect(vs[1]!.userMeta).toEqual({ k: 'changed' });
      expect(Buffer.from(vs[1]!.inlineData!)).toEqual(Buffer.from([9, 8, 7, 6]));
      expect(await codeOf(d.writeMetadata('bkt', 'obj', version(), { update: true }))).toBe('FileNotFound');

      await d.deleteVersion('bkt', 'obj', marker.versionId);
      expect(decodeXlMeta(await d.readXlMeta('bkt', 'obj')).map((v) => v.versionId)).toEqual([inline.versionId]);
      expect(await codeOf(d.deleteVersion('bkt', 'obj', marker.versionId))).toBe('FileNotFound');
      await d.deleteVersion('bkt', 'obj', inline.versionId);
      expect(await codeOf(d.readXlMeta('bkt', 'obj'))).toBe('FileNotFound');
      expect(await codeOf(d.writeMetadata('nope', 'obj', inline))).toBe('VolumeNotFound');
    });

    it('walks objects in key order with prefix, marker and delimiter semantics', async () => {
      await d.makeVol('bkt');
      const keys = ['a', 'b/c', 'b/d/e', 'b/f', 'c'];
      for (const k of keys) await d.writeMetadata('bkt', k, version({ dataDir: '', inline: true, inlineData: Buffer.from(k) }));
      const all = await walk(d, 'bkt', { recursive: true });
      expect(all.map((e) => e.name)).toEqual(keys);
      expect(all.every((e) => e.meta instanceof Uint8Array && decodeXlMeta(e.meta).length === 1)).toBe(true);
      expect((await walk(d, 'bkt', { recursive: true, prefix: 'b/' })).map((e) => e.name)).toEqual(['b/c', 'b/d/e', 'b/f']);
      expect((await walk(d, 'bkt', { recursive: true, marker: 'b/d/e' })).map((e) => e.name)).toEqual(['b/f', 'c']);
      const shallow = await walk(d, 'bkt', { recursive: false, prefix: 'b/' });
      expect(shallow.map((e) => [e.name, e.prefix === true])).toEqual([
        ['b/c', false],
        ['b/d/', true],
        ['b/f', false],
      ]);
      expect(await codeOf(walk(d, 'nope', { recursive: true }))).toBe('VolumeNotFound');
    });
  });
}
