/**
 * Where a bench keeps drives and OSD files. `BENCH_FS`:
 *
 * - `dir` (the default): plain folders under `BENCH_DIR` (default the OS temp
 *   dir), on whatever file system holds it;
 * - `xfs`: each volume a fresh XFS file system of its own on a sparse image
 *   and a loop device (root and `mkfs.xfs` needed), as deployments run (one
 *   file system per drive). The rows then no longer depend on the state of a
 *   shared, churned directory (docs/s3-api.md, "Small PUTs and the file
 *   system"), at the price of the loop layer's own work; see "Drives on file
 *   systems of their own" there for what it changes.
 *
 * The images and mount points live under `BENCH_DIR`; an image only takes
 * the space that is written to it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SectionContext } from '../harness.ts';

/** Apparent size of each image; only what is written takes space. */
const IMAGE_BYTES = 96 * 1024 ** 3;

export interface BenchVolumes {
  /** One folder per volume, each the root of its own file system when `kind` is `xfs`. */
  readonly roots: readonly string[];
  /** The roots as one svc volume argument (`…/name-{1...N}`). */
  readonly pattern: string;
  readonly kind: 'xfs' | 'dir';
  /** Unmounts and removes everything made. */
  close(): Promise<void>;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout).trim()}`);
}

/** Why this process cannot make XFS volumes, or undefined when it can. */
export function xfsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (mounting needs it)';
  if (!existsSync('/dev/loop-control')) return 'no loop devices';
  const mkfs = spawnSync('mkfs.xfs', ['-V'], { encoding: 'utf8' });
  if (mkfs.error || mkfs.status !== 0) return 'mkfs.xfs is missing (apt-get install xfsprogs)';
  return undefined;
}

/**
 * `count` volumes named `name-1` … under a fresh folder of `dir` (default
 * `BENCH_DIR`, else the OS temp dir); `fs` as `BENCH_FS` above.
 */
export async function benchVolumes(
  ctx: Pick<SectionContext, 'info'>,
  name: string,
  count: number,
  opts: { fs?: string; dir?: string } = {},
): Promise<BenchVolumes> {
  const want = opts.fs ?? process.env.BENCH_FS ?? 'dir';
  if (want !== 'xfs' && want !== 'dir') throw new Error(`BENCH_FS=${want}: expected xfs or dir`);
  const base = await mkdtemp(join(opts.dir ?? process.env.BENCH_DIR ?? tmpdir(), `svc-bench-${name}-`));
  if (want === 'dir') {
    const dirs = Array.from({ length: count }, (_, i) => join(base, `${name}-${i + 1}`));
    for (const d of dirs) await mkdir(d);
    ctx.info(`volumes: ${count} folders under ${base}, on the file system there (BENCH_FS=xfs for one of their own each)`);
    return { roots: dirs, pattern: join(base, `${name}-{1...${count}}`), kind: 'dir', close: () => rm(base, { recursive: true, force: true }) };
  }
  const why = xfsUnavailable();
  if (why !== undefined) {
    await rm(base, { recursive: true, force: true });
    throw new Error(`BENCH_FS=xfs: cannot make XFS volumes: ${why}`);
  }
  const mounted: string[] = [];
  const close = async () => {
    const errors: string[] = [];
    for (const m of mounted.splice(0)) {
      try {
        run('umount', [m]);
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    if (errors.length > 0) throw new Error(`bench volumes left mounted under ${base}: ${errors.join('; ')}`);
    await rm(base, { recursive: true, force: true });
  };
  try {
    for (let i = 1; i <= count; i++) {
      const image = join(base, `${name}-${i}.img`);
      const dir = join(base, `${name}-${i}`);
      const fh = await open(image, 'wx');
      await fh.truncate(IMAGE_BYTES);
      await fh.close();
      run('mkfs.xfs', ['-q', '-f', image]);
      await mkdir(dir);
      run('mount', ['-o', 'loop,noatime', image, dir]);
      mounted.push(dir);
    }
  } catch (err) {
    await close().catch((e: Error) => ctx.info(e.message));
    throw err;
  }
  ctx.info(`volumes: ${count} fresh XFS file systems (sparse images on loop devices) under ${base}`);
  return { roots: mounted.slice(), pattern: join(base, `${name}-{1...${count}}`), kind: 'xfs', close };
}

/**
 * A folder `name` made in each volume (a server's drives, beside the
 * ceilings' scratch files): the folders, and all of them as one svc volume
 * argument.
 */
export async function foldersIn(v: BenchVolumes, name: string): Promise<{ dirs: string[]; arg: string }> {
  const dirs = v.roots.map((r) => join(r, name));
  for (const d of dirs) await mkdir(d);
  return { dirs, arg: join(v.pattern, name) };
}
