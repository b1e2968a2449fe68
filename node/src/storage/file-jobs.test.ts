/**
 * The addon's whole-file jobs (native/fileio.c) on real files: what they
 * read and publish, and errors shaped like node:fs's so LocalDrive maps
 * them the same way on both paths.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeAddon } from '../erasure/native.ts';

const jobs = nativeAddon!;
const read = (p: string) => new Promise<Buffer>((res, rej) => jobs.fileRead(p, (e, d) => (e ? rej(e) : res(d!))));
const write = (tmp: string, dst: string, data: Uint8Array, syncs: 1 | 2 = 1, floor = root) =>
  new Promise<void>((res, rej) => jobs.fileWriteDurable(tmp, dst, data, syncs, floor, (e) => (e ? rej(e) : res())));

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-file-jobs-'));
  await mkdir(join(root, 'tmp'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('fileRead', () => {
  it('reads whole files of every size class, empty included', async () => {
    for (const size of [0, 1, 4095, 4096, 65537, 3 * 1024 * 1024 + 5]) {
      const data = Buffer.alloc(size, size & 0xff);
      const p = join(root, `r-${size}`);
      await writeFile(p, data);
      const got = await read(p);
      expect(got.length).toBe(size);
      expect(got.equals(data)).toBe(true);
    }
  });

  it('fails like node:fs: ENOENT, EISDIR, ENOTDIR', async () => {
    await expect(read(join(root, 'missing'))).rejects.toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path: join(root, 'missing') });
    await expect(read(root)).rejects.toMatchObject({ code: 'EISDIR' });
    await writeFile(join(root, 'plain'), 'x');
    await expect(read(join(root, 'plain', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('refuses bad arguments at once', () => {
    expect(() => jobs.fileRead('', () => undefined)).toThrow(TypeError);
    expect(() => (jobs.fileRead as (p: unknown, cb: unknown) => void)(join(root, 'x'), undefined)).toThrow(TypeError);
  });
});

describe('fileReadCached', () => {
  /** Written back and dropped from the page cache (fsync, then POSIX_FADV_DONTNEED through dd). */
  const evict = async (p: string) => {
    const fh = await open(p, 'r+');
    await fh.sync();
    await fh.close();
    execFileSync('dd', [`if=${p}`, 'iflag=nocache', 'count=0', 'status=none']);
  };

  it('reads a file whose name and pages the kernel holds, on the calling thread, at every size up to its limit', async () => {
    for (const size of [0, 1, 4096, 70_000, 256 * 1024]) {
      const data = Buffer.alloc(size, (size + 1) & 0xff);
      const p = join(root, `c-${size}`);
      await writeFile(p, data);
      const got = jobs.fileReadCached(p);
      expect(got?.length).toBe(size);
      expect(got!.equals(data)).toBe(true);
    }
    await writeFile(join(root, 'c-big'), Buffer.alloc(256 * 1024 + 1));
    expect(jobs.fileReadCached(join(root, 'c-big'))).toBeNull();
  });

  it('answers null rather than wait for the device: pages not in memory, a name never looked up', async () => {
    const p = join(root, 'c-cold');
    await writeFile(p, 'cold bytes');
    await evict(p);
    expect(jobs.fileReadCached(p)).toBeNull();
    expect((await read(p)).toString()).toBe('cold bytes');
    expect(jobs.fileReadCached(p)?.toString()).toBe('cold bytes');
    expect(jobs.fileReadCached(join(root, `never-looked-up-${process.pid}-${Date.now()}`))).toBeNull();
  });

  it("throws what the job calls back with for the cache's definite answers: ENOENT (a name looked up before), EISDIR", async () => {
    const missing = join(root, 'c-missing');
    await expect(read(missing)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => jobs.fileReadCached(missing)).toThrow(expect.objectContaining({ code: 'ENOENT', errno: -2, syscall: 'open', path: missing }));
    expect(() => jobs.fileReadCached(root)).toThrow(expect.objectContaining({ code: 'EISDIR' }));
    // A file taken for a directory: the job's ENOTDIR, or null (this kernel's cached walk leaves it to the job); never bytes.
    await writeFile(join(root, 'c-plain'), 'x');
    await expect(read(join(root, 'c-plain', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    let below: unknown;
    try {
      below = jobs.fileReadCached(join(root, 'c-plain', 'below'));
    } catch (err) {
      below = (err as NodeJS.ErrnoException).code;
    }
    expect([null, 'ENOTDIR']).toContain(below);
  });

  it('refuses bad arguments at once', () => {
    expect(() => jobs.fileReadCached('')).toThrow(TypeError);
    expect(() => (jobs.fileReadCached as (p: unknown) => unknown)(7)).toThrow(TypeError);
  });
});

describe('fileWriteDurable', () => {
  it('publishes the bytes at dst, creating missing directories, leaving no temp file', async () => {
    const dst = join(root, 'a', 'b', 'c', 'xl.meta');
    await write(join(root, 'tmp', 't1'), dst, Buffer.from('first'), 2);
    expect(await readFile(dst, 'utf8')).toBe('first');
    await write(join(root, 'tmp', 't2'), dst, Buffer.from('second, longer'));
    expect(await readFile(dst, 'utf8')).toBe('second, longer');
    await write(join(root, 'tmp', 't3'), join(root, 'empty'), new Uint8Array(0));
    expect((await readFile(join(root, 'empty'))).length).toBe(0);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('never creates the floor directory (a deleted volume stays deleted), nor writes outside it', async () => {
    const vol = join(root, 'deleted-volume');
    const err = await write(join(root, 'tmp', 'f1'), join(vol, 'obj', 'xl.meta'), Buffer.from('x'), 2, vol).catch((e: NodeJS.ErrnoException) => e);
    expect(err).toMatchObject({ code: 'ENOENT', syscall: 'rename' });
    await expect(readdir(vol)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    await mkdir(vol);
    await write(join(root, 'tmp', 'f2'), join(vol, 'a', 'b', 'xl.meta'), Buffer.from('y'), 2, vol);
    expect(await readFile(join(vol, 'a', 'b', 'xl.meta'), 'utf8')).toBe('y');
    const outside = await write(join(root, 'tmp', 'f3'), join(root, 'elsewhere', 'xl.meta'), Buffer.from('z'), 1, vol).catch((e: NodeJS.ErrnoException) => e);
    expect(outside).toMatchObject({ code: 'EINVAL' });
    await expect(readdir(join(root, 'elsewhere'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('writes a view at its own offset, not the buffer it lies in', async () => {
    const whole = Buffer.from('0123456789');
    await write(join(root, 'tmp', 'v'), join(root, 'view'), whole.subarray(3, 7));
    expect(await readFile(join(root, 'view'), 'utf8')).toBe('3456');
  });

  it('recreates a temp directory that went away', async () => {
    const tmpDir = join(root, 'gone-tmp');
    await write(join(tmpDir, 't'), join(root, 'after-gone'), Buffer.from('ok'));
    expect(await readFile(join(root, 'after-gone'), 'utf8')).toBe('ok');
    expect(await readdir(tmpDir)).toEqual([]);
  });

  it('a failed rename leaves the old file and removes the temp file', async () => {
    const dst = join(root, 'busy');
    await mkdir(join(dst, 'child'), { recursive: true });
    const err = await write(join(root, 'tmp', 't4'), dst, Buffer.from('x')).catch((e: NodeJS.ErrnoException) => e);
    expect(err).toMatchObject({ syscall: 'rename' });
    expect(['EISDIR', 'ENOTEMPTY', 'EEXIST']).toContain((err as NodeJS.ErrnoException).code);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    expect(await readdir(dst)).toEqual(['child']);
  });

  it('refuses bad arguments at once', () => {
    const cb = () => undefined;
    const w = jobs.fileWriteDurable as (...a: unknown[]) => void;
    expect(() => w(join(root, 'tmp', 'x'), join(root, 'y'), 'text', 1, root, cb)).toThrow(TypeError);
    expect(() => w(join(root, 'tmp', 'x'), join(root, 'y'), Buffer.from('x'), 3, root, cb)).toThrow(TypeError);
    expect(() => w(join(root, 'tmp', 'x'), '', Buffer.from('x'), 1, root, cb)).toThrow(TypeError);
    expect(() => w(join(root, 'tmp', 'x'), join(root, 'y'), Buffer.from('x'), 1, cb)).toThrow(TypeError);
  });
});

describe('fileReadBatch', () => {
  const batch = (paths: string[]) =>
    new Promise<(Buffer | NodeJS.ErrnoException)[]>((res, rej) => jobs.fileReadBatch(paths, (e, r) => (e ? rej(e) : res(r!))));

  it('reads each file in order; a failing file fails only its own slot, shaped like node:fs', async () => {
    await mkdir(join(root, 'batch'));
    const a = join(root, 'batch', 'a');
    const b = join(root, 'batch', 'b');
    await writeFile(a, 'alpha');
    await writeFile(b, Buffer.alloc(70_000, 7));
    await writeFile(join(root, 'batch', 'empty'), '');
    const missing = join(root, 'batch', 'missing');
    const got = await batch([a, missing, b, join(root, 'batch'), join(root, 'batch', 'empty'), a]);
    expect(got).toHaveLength(6);
    expect((got[0] as Buffer).toString()).toBe('alpha');
    expect(got[1]).toMatchObject({ code: 'ENOENT', errno: -2, syscall: 'open', path: missing });
    expect((got[2] as Buffer).equals(Buffer.alloc(70_000, 7))).toBe(true);
    expect(got[3]).toMatchObject({ code: 'EISDIR' });
    expect((got[4] as Buffer).length).toBe(0);
    expect((got[5] as Buffer).toString()).toBe('alpha');
    expect(got[0]).not.toBe(got[5]);
  });

  it('refuses bad arguments at once: no paths, more than 64, a non-string, no callback', () => {
    const cb = () => undefined;
    expect(() => jobs.fileReadBatch([], cb)).toThrow(TypeError);
    expect(() => jobs.fileReadBatch(Array.from({ length: 65 }, () => join(root, 'x')), cb)).toThrow(TypeError);
    expect(() => jobs.fileReadBatch([join(root, 'x'), 7 as unknown as string], cb)).toThrow(TypeError);
    expect(() => (jobs.fileReadBatch as (p: unknown, cb: unknown) => void)([join(root, 'x')], undefined)).toThrow(TypeError);
  });
});

describe('fileWriteDurable leaving the topmost directory sync to the caller', () => {
  const publish = (tmp: string, dst: string, data: Uint8Array, syncs: 1 | 2, floor: string) =>
    new Promise<string | null | undefined>((res, rej) => jobs.fileWriteDurable(tmp, dst, data, syncs, floor, true, (e, top) => (e ? rej(e) : res(top))));

  it('names the directory holding the highest new entry, and only when there is more than one level', async () => {
    const vol = join(root, 'lt-vol');
    await mkdir(join(vol, 'prefix'), { recursive: true });
    // A new object directory below an existing prefix: the prefix holds the new entry.
    expect(await publish(join(root, 'tmp', 'l1'), join(vol, 'prefix', 'k1', 'xl.meta'), Buffer.from('a'), 2, vol)).toBe(join(vol, 'prefix'));
    // Three directories made (x, x/y, x/y/k): the volume holds the highest new entry.
    expect(await publish(join(root, 'tmp', 'l2'), join(vol, 'x', 'y', 'k', 'xl.meta'), Buffer.from('b'), 2, vol)).toBe(vol);
    // An existing object directory and one level: the job syncs it itself.
    expect(await publish(join(root, 'tmp', 'l3'), join(vol, 'prefix', 'k1', 'xl.meta'), Buffer.from('c'), 1, vol)).toBeNull();
    // Two levels asked for, none made: the object directory's parent is still left.
    expect(await publish(join(root, 'tmp', 'l4'), join(vol, 'prefix', 'k1', 'xl.meta'), Buffer.from('d'), 2, vol)).toBe(join(vol, 'prefix'));
    expect(await readFile(join(vol, 'prefix', 'k1', 'xl.meta'), 'utf8')).toBe('d');
    expect(await readFile(join(vol, 'x', 'y', 'k', 'xl.meta'), 'utf8')).toBe('b');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('fails as before, naming nothing to sync', async () => {
    const vol = join(root, 'lt-deleted');
    await expect(publish(join(root, 'tmp', 'l5'), join(vol, 'o', 'xl.meta'), Buffer.from('x'), 2, vol)).rejects.toMatchObject({ code: 'ENOENT', syscall: 'rename' });
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });
});

describe('fileSyncDir', () => {
  const syncDir = (dir: string) => new Promise<void>((res, rej) => jobs.fileSyncDir!(dir, (e) => (e ? rej(e) : res())));

  it('fsyncs a directory; fails like node:fs on a missing one or a file', async () => {
    await syncDir(root);
    await expect(syncDir(join(root, 'no-such-dir'))).rejects.toMatchObject({ code: 'ENOENT', syscall: 'fsync', path: join(root, 'no-such-dir') });
    await writeFile(join(root, 'a-file'), 'x');
    await expect(syncDir(join(root, 'a-file'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('refuses bad arguments at once', () => {
    const s = jobs.fileSyncDir as (...a: unknown[]) => void;
    expect(() => s('', () => undefined)).toThrow(TypeError);
    expect(() => s(root)).toThrow(TypeError);
  });
});

describe('fileWriteDurableBatch', () => {
  type Item = readonly [string, string, Uint8Array, 1 | 2, string];
  const batch = (items: Item[]) =>
    new Promise<(NodeJS.ErrnoException | null)[]>((res, rej) => jobs.fileWriteDurableBatch!(items, (e, r) => (e ? rej(e) : res(r!))));

  it('publishes every item, each failure in its own slot only', async () => {
    const vol = join(root, 'b-vol');
    await mkdir(join(vol, 'prefix'), { recursive: true });
    const gone = join(root, 'b-deleted');
    const results = await batch([
      [join(root, 'tmp', 'b1'), join(vol, 'prefix', 'k1', 'xl.meta'), Buffer.from('one'), 2, vol],
      // A deleted volume: refused like fileWriteDurable, the others still publish.
      [join(root, 'tmp', 'b2'), join(gone, 'o', 'xl.meta'), Buffer.from('two'), 2, gone],
      [join(root, 'tmp', 'b3'), join(vol, 'prefix', 'k2', 'xl.meta'), Buffer.from('three'), 2, vol],
      // An existing object directory, one level; then a deeper new tree.
      [join(root, 'tmp', 'b4'), join(vol, 'prefix', 'k1', 'xl.meta'), Buffer.from('four'), 1, vol],
      [join(root, 'tmp', 'b5'), join(vol, 'x', 'y', 'k', 'xl.meta'), Buffer.from('five'), 2, vol],
    ]);
    expect(results.map((r) => r?.code ?? null)).toEqual([null, 'ENOENT', null, null, null]);
    expect(results[1]).toMatchObject({ syscall: 'rename', path: join(gone, 'o', 'xl.meta') });
    expect(await readFile(join(vol, 'prefix', 'k1', 'xl.meta'), 'utf8')).toBe('four');
    expect(await readFile(join(vol, 'prefix', 'k2', 'xl.meta'), 'utf8')).toBe('three');
    expect(await readFile(join(vol, 'x', 'y', 'k', 'xl.meta'), 'utf8')).toBe('five');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('an item with noReplace publishes only where dst is absent: an existing dst fails EEXIST, unchanged, the temp file removed', async () => {
    expect(jobs.fileWriteNoReplace).toBe(true);
    const vol = join(root, 'nr-vol');
    await mkdir(join(vol, 'old'), { recursive: true });
    await writeFile(join(vol, 'old', 'xl.meta'), 'old journal');
    const results = await batch([
      [join(root, 'tmp', 'n1'), join(vol, 'old', 'xl.meta'), Buffer.from('new journal'), 2, vol, true] as unknown as Item,
      [join(root, 'tmp', 'n2'), join(vol, 'fresh', 'xl.meta'), Buffer.from('fresh journal'), 2, vol, true] as unknown as Item,
      [join(root, 'tmp', 'n3'), join(vol, 'old', 'xl.meta'), Buffer.from('replaced'), 1, vol, false] as unknown as Item,
    ]);
    expect(results[0]).toMatchObject({ code: 'EEXIST', syscall: 'rename', path: join(vol, 'old', 'xl.meta') });
    expect(results.slice(1)).toEqual([null, null]);
    expect(await readFile(join(vol, 'fresh', 'xl.meta'), 'utf8')).toBe('fresh journal');
    // the item without noReplace replaced it as always
    expect(await readFile(join(vol, 'old', 'xl.meta'), 'utf8')).toBe('replaced');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('refuses bad arguments at once', () => {
    const b = jobs.fileWriteDurableBatch as (...a: unknown[]) => void;
    const ok = [join(root, 'tmp', 'z'), join(root, 'z'), Buffer.from('z'), 1, root];
    expect(() => b([], () => undefined)).toThrow(TypeError);
    expect(() => b(Array.from({ length: 65 }, () => ok), () => undefined)).toThrow(TypeError);
    expect(() => b([ok.slice(0, 4)], () => undefined)).toThrow(TypeError);
    expect(() => b([[...ok.slice(0, 3), 3, root]], () => undefined)).toThrow(TypeError);
    expect(() => b([ok, [join(root, 'tmp', 'y'), join(root, 'y'), 'not bytes', 1, root]], () => undefined)).toThrow(TypeError);
    expect(() => b([[...ok, 'yes']], () => undefined)).toThrow(TypeError);
    expect(() => b([[...ok, true, true]], () => undefined)).toThrow(TypeError);
    expect(() => b([ok])).toThrow(TypeError);
  });
});
