/**
 * The benches' drives (`bench/lib/bench-volumes.ts`): with `BENCH_FS=xfs`
 * they are file systems of their own, fresh, and gone afterwards; as folders
 * (the default) they share the parent's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchVolumes, foldersIn, xfsUnavailable } from '../bench/lib/bench-volumes.ts';

const XFS_MAGIC = 0x58465342;
const why = xfsUnavailable();
if (why !== undefined) console.log(`skipped the XFS case: ${why}`);

let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'bench-volumes-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});
const info: string[] = [];
const ctx = { info: (t: string) => void info.push(t) };
const mountedUnder = (dir: string) => readFileSync('/proc/self/mounts', 'utf8').split('\n').filter((l) => l.split(' ')[1]?.startsWith(dir));

describe('bench volumes', () => {
  it.skipIf(why !== undefined)('xfs: one fresh XFS file system per volume, one svc argument for all, nothing left after close', async () => {
    const v = await benchVolumes(ctx, 'd', 3, { fs: 'xfs', dir: parent });
    try {
      expect(v.kind).toBe('xfs');
      const devs = new Set<number>();
      for (const r of v.roots) {
        expect((await statfs(r)).type).toBe(XFS_MAGIC);
        devs.add((await stat(r)).dev);
      }
      devs.add((await stat(parent)).dev);
      expect(devs.size).toBe(4);
      const { dirs, arg } = await foldersIn(v, 'svc');
      expect(arg).toBe(join(v.pattern, 'svc'));
      expect(arg).toMatch(/\/d-\{1\.\.\.3\}\/svc$/);
      for (const [i, d] of dirs.entries()) {
        expect(d).toBe(arg.replace('{1...3}', String(i + 1)));
        await writeFile(join(d, 'x'), 'data');
      }
      expect(mountedUnder(parent)).toHaveLength(3);
    } finally {
      await v.close();
    }
    expect(mountedUnder(parent)).toEqual([]);
    expect(v.roots.some((r) => existsSync(r))).toBe(false);
    expect(info.at(-1)).toMatch(/3 fresh XFS file systems/);
  });

  it('dir: plain folders on the parent’s file system; an unknown kind is refused before anything is made', async () => {
    const v = await benchVolumes(ctx, 'f', 2, { fs: 'dir', dir: parent });
    expect(v.kind).toBe('dir');
    for (const r of v.roots) expect((await stat(r)).dev).toBe((await stat(parent)).dev);
    expect(info.at(-1)).toMatch(/^volumes: 2 folders under /);
    await v.close();
    expect(v.roots.some((r) => existsSync(r))).toBe(false);
    await expect(benchVolumes(ctx, 'g', 1, { fs: 'ext4', dir: parent })).rejects.toThrow('BENCH_FS=ext4: expected xfs or dir');
    expect(execFileSync('ls', ['-A', parent], { encoding: 'utf8' })).toBe('');
  });
});
