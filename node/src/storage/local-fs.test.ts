import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../util/logger.ts';
import { nativeAddon } from '../erasure/native.ts';
import { DriveFs, type FileJobs, READ_BATCH_MAX } from './local-fs.ts';

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
      const missing = fs.readWhole(join(dir, 'nope'));
      expect((await Promise.all(reads)).map((b) => b.toString())).toEqual(names.map((n) => n.repeat(3)));
      await expect(missing).rejects.toMatchObject({ code: 'ENOENT' });
      expect(calls.map((c) => c.length)).toEqual([READ_BATCH_MAX, 4]);
      // A read asked for later (another turn) goes alone: a job of one file.
      expect((await fs.readWhole(join(dir, 'f0'))).toString()).toBe('f0f0f0');
      expect(calls.at(-1)).toEqual([join(dir, 'f0')]);
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
