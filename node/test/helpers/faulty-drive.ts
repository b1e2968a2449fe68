/**
 * Crash points and drive faults, injected from the test side: a decorator
 * around a real `LocalDrive` (as production decorates drives with
 * `member-drive.ts` and `traced-drive.ts`), so no production class carries a
 * test hook.
 *
 * `step(name)` is asked at the named points of a drive's multi-step
 * operations. Returning nothing lets the operation go on; a promise that
 * never resolves freezes it there, as a process crash would (the test then
 * reopens the drives); a promise that resolves later delays it (a slow
 * drive); throwing or rejecting fails the call (a drive error).
 *
 * Points at a method's boundary wrap the call. The two points inside one
 * call are reproduced as the state on disk a crash there leaves, and only
 * when the hook does not answer at once (it returned a promise or threw):
 *  - `rename-data:data-moved`: the new data directory is in place, the
 *    object's `xl.meta` still the old one;
 *  - `delete-version:meta-written`: the version is gone from `xl.meta`, its
 *    data directory still on disk.
 *
 * Set-level commit points (`CommitStep`) map onto the drive calls that
 * follow them in `ErasureSet`: shards written → the first `verifyFile`,
 * shards verified → `renameData`, rename-data → each `renameData` returned,
 * committed → the post-quorum `commitRenameData`.
 */
import { cp, mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Drive, type FileVersion, type MakeVolOptions, type RenameDataResult, XL_META } from '../../src/storage/drive.ts';
import type { LocalDrive } from '../../src/storage/local-drive.ts';
import { baseVersionId, decodeXlMeta } from '../../src/storage/xl-meta.ts';

export type DrivePoint =
  | 'make-vol'
  | 'rename-data:start'
  | 'rename-data:data-moved'
  | 'rename-data:meta-written'
  | 'delete-version:start'
  | 'delete-version:meta-written';

/** Per-drive fault hook (the fixtures' `driveHooks`). */
export interface DriveHooks {
  step(name: DrivePoint | string): Promise<void> | void;
}

/** The steps of a set-level commit a test can freeze after. */
export type CommitStep = 'shards-written' | 'shards-verified' | 'rename-data' | 'committed';

/** Set-level commit hook (the fixtures' `commitHooks`). */
export interface CommitHooks {
  afterStep(step: CommitStep, info: { slot?: number; committed?: number }): Promise<void> | void;
}

/** Calls `fn`; undefined when it answered at once with nothing, else its pending answer (or its failure). */
function ask(fn: () => Promise<void> | void): Promise<void> | undefined {
  try {
    const r = fn();
    return r === undefined ? undefined : Promise.resolve(r);
  } catch (err) {
    return Promise.reject(err);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * `inner` with `hooks` at its crash points and `commit` at the set-level
 * steps. Every other member is the drive's own (bound to it), so the result
 * is used wherever a `LocalDrive` is.
 */
export function faultyDrive(inner: LocalDrive, hooks: DriveHooks | undefined, commit?: CommitHooks): LocalDrive {
  const step = async (name: DrivePoint) => {
    if (hooks) await hooks.step(name);
  };
  const after = async (s: CommitStep, info: { slot?: number; committed?: number } = {}) => {
    if (commit) await commit.afterStep(s, info);
  };
  let renamed = 0;
  const overrides: Partial<Drive> = {
    async makeVol(vol: string, opts?: MakeVolOptions): Promise<void> {
      await step('make-vol');
      return inner.makeVol(vol, opts);
    },
    async verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
      await after('shards-written');
      return inner.verifyFile(vol, path, shardBlockSize, dataBytes);
    },
    async renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult> {
      await after('shards-verified');
      await step('rename-data:start');
      const moved = hooks ? ask(() => hooks.step('rename-data:data-moved')) : undefined;
      if (moved !== undefined) {
        // The crash state after the data move: the data directory renamed into the object, no new xl.meta.
        if (version.dataDir !== '' && (await exists(join(inner.root, dstVol)))) {
          const dst = join(inner.root, dstVol, dstPath);
          await mkdir(dst, { recursive: true });
          await rename(join(inner.root, srcVol, srcPath, version.dataDir), join(dst, version.dataDir));
        }
        await moved;
      }
      const r = await inner.renameData(srcVol, srcPath, version, dstVol, dstPath);
      await step('rename-data:meta-written');
      await after('rename-data', { committed: ++renamed });
      return r;
    },
    async commitRenameData(srcVol: string, srcPath: string): Promise<void> {
      await after('committed');
      return inner.commitRenameData(srcVol, srcPath);
    },
    async deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
      await step('delete-version:start');
      const written = hooks ? ask(() => hooks.step('delete-version:meta-written')) : undefined;
      if (written === undefined) return inner.deleteVersion(vol, path, versionId);
      // The crash state after the metadata write: the version unlisted, its data directory left behind.
      const dir = join(inner.root, vol, path);
      const journal = await readFile(join(dir, XL_META)).then(
        (b) => decodeXlMeta(b, false),
        () => [] as FileVersion[],
      );
      const victims = journal.filter((v) => v.versionId === versionId || baseVersionId(v.versionId) === versionId);
      const shared = new Set(journal.filter((v) => !victims.includes(v)).map((v) => v.dataDir));
      const keep = [...new Set(victims.map((v) => v.dataDir))].filter((d) => d !== '' && !shared.has(d));
      const aside = await mkdtemp(join(tmpdir(), 'svc-crash-'));
      try {
        for (const d of keep) if (await exists(join(dir, d))) await cp(join(dir, d), join(aside, d), { recursive: true });
        await inner.deleteVersion(vol, path, versionId);
        for (const d of keep) if (await exists(join(aside, d))) await cp(join(aside, d), join(dir, d), { recursive: true });
      } finally {
        await rm(aside, { recursive: true, force: true });
      }
      await written;
    },
  };
  return new Proxy(inner, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof Drive];
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
