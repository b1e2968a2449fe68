/**
 * Test fixture: an object layer over several pools of real temp-dir drives.
 * `open(n)` builds the layer over the first `n` pools (a restart with fewer
 * or more volume arguments: growing a deployment is `open(1)` then
 * `open(2)`); drives go offline the way an operator loses them (the root
 * replaced by a plain file) and come back.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createObjectLayer } from '../../src/object/index.ts';
import type { ServerPools } from '../../src/object/server-pools.ts';
import { LocalDrive } from '../../src/storage/local-drive.ts';
import type { Kms } from '../../src/crypto/kms.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { type DriveHooks, faultyDrive } from './faulty-drive.ts';
import { mountTmpfs, unmountUnder } from './tmpfs.ts';

export const POOLS_DEPLOYMENT_ID = '5f0c9a1e-7b3d-4e2a-8c61-2d4b6e8f0a13';

export interface PoolFixtureSpec {
  drives: number;
  sets?: number;
  standardParity: number;
}

export interface OpenExtras {
  onBucketMetaChanged?: (bucket: string) => void;
  clock?: Clock;
  /** Per-drive test hooks (e.g. a drive that refuses `make-vol`). */
  driveHooks?: (pool: number, drive: number) => DriveHooks | undefined;
}

export interface PoolsFixture {
  readonly base: string;
  /** Per pool, its drive roots (set-major). */
  readonly roots: string[][];
  /** The layer `open` built last. */
  readonly layer: ServerPools;
  /** Closes the current layer and builds one over the first `count` pools (default: all). */
  open(count?: number, extra?: OpenExtras): Promise<ServerPools>;
  /** Another layer over the same drives, standing for a second node (the caller closes it). */
  peer(count?: number): Promise<ServerPools>;
  offline(pool: number, drive: number): Promise<void>;
  online(pool: number, drive: number): Promise<void>;
  /** Every drive of `pool` offline / back. */
  poolOffline(pool: number): Promise<void>;
  poolOnline(pool: number): Promise<void>;
  /** Waits for the drives' background trash removal (freed space shows in their capacity). */
  flushDrives(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface PoolsFixtureOptions {
  /** Each drive on its own tmpfs of this many bytes (real per-drive capacity; needs root; drives cannot go offline). */
  tmpfsBytes?: number | ((pool: number) => number);
  /** One tmpfs of this many bytes under every drive (capacity independent of the host disk; drives can still go offline). */
  sharedTmpfsBytes?: number;
  /** Per-drive test hooks for every `open` that names none (e.g. a slow drive: a delay at a commit step). */
  driveHooks?: (pool: number, drive: number) => DriveHooks | undefined;
  /** Key store for SSE-S3 / SSE-KMS. */
  kms?: Kms;
}

export async function makePoolsFixture(specs: PoolFixtureSpec[], initial = specs.length, fo: PoolsFixtureOptions = {}): Promise<PoolsFixture> {
  const base = await mkdtemp(join(tmpdir(), 'svc-pools-'));
  if (fo.sharedTmpfsBytes !== undefined) mountTmpfs(base, fo.sharedTmpfsBytes);
  const roots: string[][] = [];
  for (const [pi, spec] of specs.entries()) {
    const rs: string[] = [];
    for (let i = 0; i < spec.drives * (spec.sets ?? 1); i++) {
      const r = join(base, `p${pi}`, `d${i}`);
      await mkdir(r, { recursive: true });
      if (fo.tmpfsBytes !== undefined) mountTmpfs(r, typeof fo.tmpfsBytes === 'number' ? fo.tmpfsBytes : fo.tmpfsBytes(pi));
      rs.push(r);
    }
    roots.push(rs);
  }
  let layer: ServerPools | undefined;
  const drives: LocalDrive[] = [];
  const build = async (count: number, extra: OpenExtras): Promise<ServerPools> => {
    const pools = [];
    for (const [pi, spec] of specs.slice(0, count).entries()) {
      const ds = roots[pi]!.map((r, i) => {
        const hooks = (extra.driveHooks ?? fo.driveHooks)?.(pi, i);
        const d = new LocalDrive(r);
        return hooks ? faultyDrive(d, hooks) : d;
      });
      for (const d of ds) await d.init().catch(() => undefined);
      drives.push(...ds);
      const sets = spec.sets ?? 1;
      pools.push({
        cmdline: `${base}/p${pi}/d{0...${ds.length - 1}}`,
        sets: Array.from({ length: sets }, (_, s) => ds.slice(s * spec.drives, (s + 1) * spec.drives)),
        standardParity: spec.standardParity,
        rrsParity: Math.min(1, spec.standardParity),
      });
    }
    return createObjectLayer({
      deploymentId: POOLS_DEPLOYMENT_ID,
      pools,
      logger: silentLogger,
      clock: extra.clock ?? systemClock,
      ...(extra.onBucketMetaChanged ? { onBucketMetaChanged: extra.onBucketMetaChanged } : {}),
      ...(fo.kms ? { kms: fo.kms } : {}),
    });
  };
  const fx: PoolsFixture = {
    base,
    roots,
    get layer(): ServerPools {
      if (!layer) throw new Error('no layer open');
      return layer;
    },
    async open(count = specs.length, extra = {}) {
      await layer?.close();
      layer = await build(count, extra);
      return layer;
    },
    peer(count = specs.length) {
      return build(count, {});
    },
    async offline(pool, i) {
      const r = roots[pool]![i]!;
      await rename(r, `${r}.away`);
      await writeFile(r, 'not a drive');
    },
    async online(pool, i) {
      const r = roots[pool]![i]!;
      await rm(r, { force: true });
      await rename(`${r}.away`, r);
    },
    async poolOffline(pool) {
      for (let i = 0; i < roots[pool]!.length; i++) await fx.offline(pool, i);
    },
    async poolOnline(pool) {
      for (let i = 0; i < roots[pool]!.length; i++) await fx.online(pool, i);
    },
    async flushDrives() {
      for (const d of drives) await d.flush();
    },
    async cleanup() {
      await layer?.close();
      for (const d of drives) await d.flush();
      unmountUnder(base);
      await rm(base, { recursive: true, force: true });
    },
  };
  await fx.open(initial);
  return fx;
}
