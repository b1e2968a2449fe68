import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../util/logger.ts';
import { nativeAddon } from '../erasure/native.ts';
import { DriveFs, type FileJobs, READ_BATCH_MAX, WRITE_BATCH_MAX, WRITE_JOBS_MAX } from './local-fs.ts';
import { SYS_VOL, TMP_DIR } from './drive.ts';

describe('DriveFs paths', () => {
  it('filePath is join(root, vol, path) for every root spelling, built without normalizing', () => {
    for (const root of ['/srv/d1', '/srv/d1/', '/srv//d1', 'rel/d1', './d1', '.', '/']) {
      const fs = new DriveFs(root, 'e', silentLogger, undefined);
      for (const path of ['o', 'a/b/c/xl.meta', '.hidden/..x/.../x.', 'photos/2024__XLDIR__/xl.meta']) {
        expect(fs.filePath('bucket', path)).toBe(join(root, 'bucket', path));
      }
      expect(fs.filePath('bucket', '')).toBe(join(root, 'bucket'));
      expect(fs.volPath('.svc.sys')).toBe(join(root, '.svc.sys'));
    }
  });

  it('refuses paths with an empty, "." or ".." segment, a leading slash or a NUL, and odd volume names', () => {
    const fs = new DriveFs('/srv/d1', 'e', silentLogger, undefined);
    for (const path of ['a//b', './a', 'a/.', 'a/../b', '..', '.', 'a/', '/a', 'a\0b']) {
      expect(() => fs.filePath('bucket', path), path).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    }
    for (const vol of ['', '.', '..', 'a/b']) expect(() => fs.volPath(vol), vol).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
  });
});

describe('DriveFs.readWhole', () => {
  /** The real addon's jobs, counted. */
  function counted(): { jobs: FileJobs; calls: string[][] } {
    const real = nativeAddon!;
    const calls: string[][] = [];
    return {
      calls,
      jobs: {
        fileRead: (p, cb) => {
          calls.push([p]);
          real.fileRead(p, cb);
        },
        fileReadBatch: (ps, cb) => {
          calls.push([...ps]);
          real.fileReadBatch(ps, cb);
        },
        fileWriteDurable: real.fileWriteDurable,
      },
    };
  }

  it("a drive's reads asked for in one turn share pool jobs of at most READ_BATCH_MAX, each read gets its own file or error", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-drivefs-'));
    try {
      const names = Array.from({ length: READ_BATCH_MAX + 3 }, (_, i) => `f${i}`);
      for (const n of names) await writeFile(join(dir, n), n.repeat(3));
      const { jobs, calls } = counted();
      const fs = new DriveFs(dir, 'e', silentLogger, jobs);
      const reads = names.map((n) => fs.readWhole(join(dir, n)));
      // Its rejection is taken at once (it may come before the other reads resolve).
      const missing = fs.readWhole(join(dir, 'nope')).catch((e: unknown) => e);
      expect((await Promise.all(reads)).map((b) => b.toString())).toEqual(names.map((n) => n.repeat(3)));
      expect(await missing).toMatchObject({ code: 'ENOENT' });
      expect(calls.map((c) => c.length)).toEqual([READ_BATCH_MAX, 4]);
      // A read asked for later (another turn) goes alone: a job of one file.
      expect((await fs.readWhole(join(dir, 'f0'))).toString()).toBe('f0f0f0');
      expect(calls.at(-1)).toEqual([join(dir, 'f0')]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a file the kernel holds in its caches is read without a pool job; one it would have to fetch goes to a job', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-drivefs-'));
    try {
      const hot = join(dir, 'hot');
      const cold = join(dir, 'cold');
      await writeFile(hot, 'hot bytes');
      await writeFile(cold, 'cold bytes');
      const fh = await open(cold, 'r+');
      await fh.sync();
      await fh.close();
      execFileSync('dd', [`if=${cold}`, 'iflag=nocache', 'count=0', 'status=none']);
      const { jobs, calls } = counted();
      const fs = new DriveFs(dir, 'e', silentLogger, { ...jobs, fileReadCached: nativeAddon!.fileReadCached });
      expect((await fs.readWhole(hot)).toString()).toBe('hot bytes');
      expect(calls).toEqual([]);
      await expect(fs.readWhole(join(dir, 'nope'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect((await fs.readWhole(cold)).toString()).toBe('cold bytes');
      expect(calls).toEqual([[join(dir, 'nope')], [cold]]);
      // The job's read brought it into memory: the next read needs none, and a name now known to be missing neither.
      expect((await fs.readWhole(cold)).toString()).toBe('cold bytes');
      await expect(fs.readWhole(join(dir, 'nope'))).rejects.toMatchObject({ code: 'ENOENT', syscall: 'open', path: join(dir, 'nope') });
      expect(calls).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a batch that cannot be queued fails each of its reads (none is left waiting)', async () => {
    const { jobs } = counted();
    const failing: FileJobs = {
      ...jobs,
      fileReadBatch: () => {
        throw new Error('out of memory');
      },
    };
    const fs = new DriveFs('/nowhere', 'e', silentLogger, failing);
    const reads = [fs.readWhole('/nowhere/a'), fs.readWhole('/nowhere/b')];
    for (const r of reads) await expect(r).rejects.toThrow('out of memory');
  });
});

describe('DriveFs.atomicWrite through the drive commit queue', () => {
  /** The real addon's batch job, each call's size logged and held until `release`. */
  function held(): { jobs: FileJobs; sizes: number[]; inFlight: () => number; release: () => void } {
    const real = nativeAddon!;
    const sizes: number[] = [];
    const waiting: (() => void)[] = [];
    let running = 0;
    return {
      sizes,
      inFlight: () => running,
      release: () => {
        for (const go of waiting.splice(0)) go();
      },
      jobs: {
        fileRead: real.fileRead,
        fileWriteDurable: real.fileWriteDurable,
        fileWriteDurableBatch: (items, cb) => {
          sizes.push(items.length);
          running++;
          waiting.push(() =>
            real.fileWriteDurableBatch!(items, (e, r) => {
              running--;
              cb(e, r);
            }),
          );
        },
      },
    };
  }

  async function until(cond: () => boolean): Promise<void> {
    const end = Date.now() + 10_000;
    while (!cond()) {
      if (Date.now() > end) throw new Error('condition not reached in 10 s');
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  it(`publishes that arrive while ${WRITE_JOBS_MAX} job(s) run go together in the next one; each resolves only when its job returned`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-drivefs-w-'));
    try {
      await mkdir(join(dir, 'vol', 'p'), { recursive: true });
      await mkdir(join(dir, SYS_VOL, TMP_DIR), { recursive: true });
      const h = held();
      const fs = new DriveFs(dir, 'e', silentLogger, h.jobs);
      const settled: number[] = [];
      const put = (i: number) => fs.atomicWrite('vol', join(dir, 'vol', 'p', `k${i}`, 'xl.meta'), Buffer.from(`v${i}`), 2).then(() => settled.push(i));
      const first = Array.from({ length: WRITE_JOBS_MAX }, (_, i) => put(i));
      await until(() => h.sizes.length === 1);
      const later = Array.from({ length: WRITE_BATCH_MAX + 2 }, (_, i) => put(100 + i));
      await new Promise((r) => setTimeout(r, 20));
      // Nothing resolved before its job returned, and no more jobs than allowed.
      expect(settled).toEqual([]);
      expect(h.inFlight()).toBeLessThanOrEqual(WRITE_JOBS_MAX);
      for (;;) {
        h.release();
        if (h.sizes.reduce((a, b) => a + b, 0) >= WRITE_JOBS_MAX + WRITE_BATCH_MAX + 2 && h.inFlight() === 0) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      await Promise.all([...first, ...later]);
      expect(Math.max(...h.sizes)).toBe(WRITE_BATCH_MAX);
      expect(h.sizes.length).toBeLessThan(WRITE_BATCH_MAX);
      for (const i of [0, 100, 100 + WRITE_BATCH_MAX + 1]) expect(await readFile(join(dir, 'vol', 'p', `k${i}`, 'xl.meta'), 'utf8')).toBe(`v${i}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a failed publish fails alone; a wiped drive's temp directory is made again; a job that cannot be queued fails its publishes", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-drivefs-w-'));
    try {
      await mkdir(join(dir, 'vol'), { recursive: true });
      const fs = new DriveFs(dir, 'e', silentLogger, nativeAddon!);
      const bad = fs.atomicWrite('gone', join(dir, 'gone', 'o', 'xl.meta'), Buffer.from('x'), 2);
      const good = fs.atomicWrite('vol', join(dir, 'vol', 'o', 'xl.meta'), Buffer.from('y'), 2);
      await expect(bad).rejects.toMatchObject({ code: 'ENOENT' });
      await good;
      expect(await readFile(join(dir, 'vol', 'o', 'xl.meta'), 'utf8')).toBe('y');
      // No .svc.sys at all (a wiped drive): made again below the root, then published.
      await rm(join(dir, SYS_VOL), { recursive: true, force: true });
      await fs.atomicWrite('vol', join(dir, 'vol', 'o2', 'xl.meta'), Buffer.from('z'), 2);
      expect(await readdir(join(dir, SYS_VOL, TMP_DIR))).toEqual([]);
      const failing = new DriveFs(dir, 'e', silentLogger, {
        ...nativeAddon!,
        fileWriteDurableBatch: () => {
          throw new Error('out of memory');
        },
      });
      const writes = [1, 2].map((i) => failing.atomicWrite('vol', join(dir, 'vol', `f${i}`, 'xl.meta'), Buffer.from('f'), 2));
      for (const w of writes) await expect(w).rejects.toThrow('out of memory');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
