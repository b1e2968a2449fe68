/**
 * The floor every part of a `LocalDrive` stands on: the drive's root and
 * identity for logs, its online state and recent problems, volume and path
 * checks, the mapping of file-system errors to drive error codes, atomic
 * publishes (temp file, fsync, rename, directory fsync), the trash, and
 * whole-file reads (a native pool job each when the addon is built).
 * Shard files (`local-shards.ts`), the version journal (`local-journal.ts`)
 * and the walk (`local-walk.ts`) share one instance with the drive.
 */
import { randomUUID } from 'node:crypto';
import type { Stats } from 'node:fs';
import { constants as fsc } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { NativeAddon } from '../erasure/native.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type DirHold, makeDirsBelow, NewDirs, pathBelow } from './dir-create.ts';
import { DirSyncGroups } from './dir-sync.ts';
import { type DriveIssue, SYS_VOL, TMP_DIR, TRASH_DIR } from './drive.ts';

/** The addon's whole-file jobs (`native/fileio.c`), when built (a build from before the batch read or the directory sync lacks it). */
export type FileJobs = Pick<NativeAddon, 'fileRead' | 'fileWriteDurable'> &
  Partial<Pick<NativeAddon, 'fileReadBatch' | 'fileSyncDir' | 'fileWriteDurableBatch' | 'fileReadCached' | 'fileWriteNoReplace'>>;

/** Most whole-file reads of one drive that share a pool job (see `DriveFs.readWhole`). */
export const READ_BATCH_MAX = 8;
/** Most publishes of one drive that share a pool job (see `DriveFs.atomicWrite`). */
export const WRITE_BATCH_MAX = 16;
/**
 * Most publish jobs of one drive in the thread pool at once. One job a drive
 * batches the most but runs the drive's fsyncs one after the other: 16
 * concurrent 4 KiB PUTs mostly went at 56-77 % of the wall-clock rate of the
 * unbatched commits, at the same CPU per PUT; two kept the rate.
 */
export const WRITE_JOBS_MAX = 2;

interface PendingRead {
  path: string;
  resolve: (data: Buffer) => void;
  reject: (err: unknown) => void;
}

interface PendingWrite {
  item: readonly [tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string, noReplace?: true];
  resolve: () => void;
  reject: (err: unknown) => void;
}

function readWithJob(jobs: FileJobs, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => jobs.fileRead(path, (err, data) => (err ? reject(err) : resolve(data!))));
}

/**
 * The publish job. With `leaveTop` (an addon with `fileSyncDir`) the job
 * leaves the topmost directory fsync to the caller and resolves that
 * directory's path (null when it synced every one itself); otherwise it
 * syncs them all.
 */
function writeWithJob(jobs: FileJobs, tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string, leaveTop: boolean): Promise<string | null> {
  return new Promise((resolve, reject) => {
    if (!leaveTop) jobs.fileWriteDurable(tmp, dst, data, parentSyncs, floor, (err) => (err ? reject(err) : resolve(null)));
    else jobs.fileWriteDurable(tmp, dst, data, parentSyncs, floor, true, (err, top) => (err ? reject(err) : resolve(top ?? null)));
  });
}

function syncDirWithJob(jobs: FileJobs, dir: string): Promise<void> {
  return new Promise((resolve, reject) => jobs.fileSyncDir!(dir, (err) => (err ? reject(err) : resolve())));
}

const VOL_RE = /^[^/\\\0]+$/;
/** A path segment that is empty, `.` or `..`. */
const ODD_SEGMENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

export function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** How long a drive problem counts after it was last seen. */
export const ISSUE_TTL_MS = 60_000;
/** A data directory's name (and a key segment that could be one). */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class DriveFs {
  readonly root: string;
  readonly endpoint: string;
  readonly log: Logger;
  /** The addon's whole-file jobs, when built and not turned off. */
  readonly jobs: FileJobs | undefined;
  /** Whether the root was a directory at the last look (`Drive.isOnline`). */
  online = true;
  readonly #pendingTrash = new Set<Promise<void>>();
  /** Shared fsyncs of the directories new objects' directories are made in (`atomicWrite`). */
  readonly #dirSyncs: DirSyncGroups;
  /** Directories held by publishes in flight (`dir-create.ts`): a publish is acknowledged only once every directory on its path is durable. */
  readonly newDirs = new NewDirs();
  /** Native publishes in flight by the directory a new object directory would be made in. */
  readonly #publishing = new Map<string, number>();
  /** Recent problems by kind (`DiskInfo.issues`): when first and last seen, and until when they count. */
  readonly #issues = new Map<DriveIssue['kind'], { detail: string; since: number; until: number }>();

  /** What `join(root, name)` puts before a plain file name (computed once: file paths are built per request). */
  readonly #prefix: string;
  /** The drive's temp directory, where every publish writes its file first (computed once, like `#prefix`). */
  readonly #tmpDir: string;

  constructor(root: string, endpoint: string, log: Logger, jobs: FileJobs | undefined) {
    this.root = root;
    this.#prefix = join(root, 'x').slice(0, -1);
    this.#tmpDir = join(root, SYS_VOL, TMP_DIR);
    this.endpoint = endpoint;
    this.log = log;
    this.jobs = jobs;
    const syncJob = jobs?.fileSyncDir !== undefined ? jobs : undefined;
    this.#dirSyncs = new DirSyncGroups(syncJob ? (dir) => syncDirWithJob(syncJob, dir) : (dir) => this.fsyncDir(dir));
  }

  /** The root's stat, or `DiskNotFound` (and offline) when it is not a directory any more. */
  async checkRoot(): Promise<Stats> {
    const st = await fsp.stat(this.root).catch(() => undefined);
    this.online = st?.isDirectory() === true;
    if (!this.online) throw new SvcError('DiskNotFound', undefined, { endpoint: this.endpoint });
    return st!;
  }

  volPath(vol: string): string {
    if (!VOL_RE.test(vol) || vol === '.' || vol === '..') throw new SvcError('InvalidArgument', `bad volume name`);
    return this.#prefix + vol;
  }

  /** `join(volPath(vol), path)` for a path of plain segments (anything else is refused), built without normalizing. */
  filePath(vol: string, path: string): string {
    const base = this.volPath(vol);
    if (path === '') return base;
    if (path.includes('\0') || path.startsWith('/')) throw new SvcError('InvalidArgument', 'bad path');
    if (ODD_SEGMENT.test(path)) throw new SvcError('InvalidArgument', 'path escapes its volume');
    return `${base}/${path}`;
  }

  /** Maps a filesystem error to the drive's error codes. */
  async mapErr(err: unknown, vol: string, notFound: 'FileNotFound' | 'VolumeNotFound' = 'FileNotFound'): Promise<never> {
    if (err instanceof SvcError) throw err;
    const code = errno(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      await this.checkRoot();
      if (notFound === 'FileNotFound') {
        try {
          await fsp.stat(this.volPath(vol));
        } catch {
          throw new SvcError('VolumeNotFound', `volume ${vol} not found`);
        }
      }
      throw new SvcError(notFound);
    }
    if (code === 'EMFILE' || code === 'ENFILE') {
      // The process, not the drive, is short: the drive stays online and the request is shed.
      this.log.warn({ event: 'drive_descriptors_exhausted', endpoint: this.endpoint, code }, 'out of file descriptors on a drive operation');
      throw new SvcError('SlowDown', 'the server is out of file descriptors; retry later', { endpoint: this.endpoint }, { cause: err });
    }
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      // Full: the write is refused with its own code (507), the drive stays online for reads and deletes.
      this.noteIssue('full', `writes refused: no space left (${code})`);
      this.log.warn({ event: 'drive_full', endpoint: this.endpoint, code }, 'drive full: write refused');
      throw new SvcError('XSvcStorageFull', `drive ${this.endpoint} is full`, { endpoint: this.endpoint }, { cause: err });
    }
    if (code === 'EIO' || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
      this.noteIssue(code === 'EROFS' ? 'read-only' : 'faulty', code === 'EROFS' ? 'writes refused: the file system is read-only' : `I/O error ${code}`);
      this.log.warn({ event: 'drive_io_error', endpoint: this.endpoint, code }, 'drive I/O error');
      throw new SvcError('DiskNotFound', `drive error ${code}`, { endpoint: this.endpoint }, { cause: err });
    }
    throw new SvcError('InternalError', undefined, { endpoint: this.endpoint }, { cause: err });
  }

  /**
   * A whole file: through a native pool job, or node:fs's readFile (open,
   * fstat, read, close). The reads of this drive asked for in one turn of
   * the event loop share pool jobs, up to `READ_BATCH_MAX` files each, read
   * one after the other: handing a job to a pool thread (a wake-up and two
   * context switches) cost more CPU than reading a cached xl.meta, and a
   * small GET reads one per drive. Only this drive's reads are grouped, so a
   * drive that hangs holds its own reads and no other drive's; the cap
   * bounds how long one read waits behind others of its drive.
   *
   * Before any job, a file the kernel can hand over from its caches alone
   * (the name in the lookup cache, the data in the page cache: a hot
   * `xl.meta`) is read right here (`fileReadCached`): four system calls that
   * cannot wait for the device cost less than the pool's hand-off both ways.
   * Whatever would have to wait goes to the pool as before, so a slow or
   * hung drive still never holds the event loop.
   */
  readWhole(path: string): Promise<Buffer> {
    const jobs = this.jobs;
    if (jobs === undefined) return fsp.readFile(path);
    if (jobs.fileReadCached !== undefined) {
      try {
        const hit = jobs.fileReadCached(path);
        if (hit !== null) return Promise.resolve(hit);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    if (jobs.fileReadBatch === undefined) return readWithJob(jobs, path);
    return new Promise((resolve, reject) => {
      if (this.#reads.length === 0) setImmediate(this.#flushReads);
      this.#reads.push({ path, resolve, reject });
    });
  }

  readonly #reads: PendingRead[] = [];

  readonly #flushReads = (): void => {
    const all = this.#reads.splice(0);
    for (let i = 0; i < all.length; i += READ_BATCH_MAX) {
      const batch = all.slice(i, i + READ_BATCH_MAX);
      try {
        this.jobs!.fileReadBatch!(
          batch.map((r) => r.path),
          (err, results) => {
            for (let j = 0; j < batch.length; j++) {
              const out = err ?? results![j]!;
              if (out instanceof Error) batch[j]!.reject(out);
              else batch[j]!.resolve(out);
            }
          },
        );
      } catch (err) {
        // The job could not be queued (out of memory): each read fails, none is lost.
        for (const r of batch) r.reject(err);
      }
    }
  };

  /**
   * Publishes `data` at `dst` in volume `vol`: a temp file written and
   * fsync'd, renamed into place (missing directories of `dst` created, never
   * the volume itself), then dst's directory fsync'd, and each directory
   * above it up to the parent of the highest directory made for it: at least
   * `parentSyncs` levels (2: the caller made dst's directory, e.g. a new
   * object's; more when it made a deeper path). One native pool job (it
   * syncs up to two levels beyond what it made itself; deeper ones follow
   * here), or the same steps on node:fs.
   *
   * The topmost of those directory fsyncs (the parent of a directory just
   * made: e.g. `bucket/prefix/` for a new `bucket/prefix/key/`) is shared
   * with concurrent publishes into the same directory: natively, by the
   * drive's commit queue (publishes of one drive that gather while its jobs
   * run go in one `fileWriteDurableBatch` job, which fsyncs each such
   * directory once after all of the batch's renames); with an addon built
   * before the batch job, or on node:fs, by `DirSyncGroups`. Either way it
   * is an fsync of that directory started after this publish's rename and
   * mkdirs completed, and this call resolves only after it has returned.
   *
   * It resolves only once every directory on dst's path is durable: one
   * made by another publish in flight (this one found it there) is waited
   * for (`NewDirs`, `dir-create.ts`). A caller that made directories itself
   * passes the `held` hold it took before making them (and settles it).
   *
   * With `ifAbsent` (only where `canPublishIfAbsent`) the rename refuses to
   * replace an existing `dst`: the publish then fails with EEXIST and has
   * changed nothing (its temp file removed).
   */
  async atomicWrite(vol: string, dst: string, data: Uint8Array, parentSyncs = 1, held?: DirHold, ifAbsent = false): Promise<void> {
    if (ifAbsent && !this.canPublishIfAbsent) throw new SvcError('InternalError', 'a publish only if absent needs the batched native publish');
    // The destination's directories are held while this publish may make them and
    // until its own directory fsyncs returned; then it waits for the other publishes
    // that hold a directory on its path (one of them may have made it: `NewDirs`).
    const own = held ?? this.newDirs.hold(dirname(dst), this.volPath(vol));
    // Once the publish knows which directories it made, its own hold keeps only those (a caller's hold stays whole).
    const made = held === undefined ? (levels: number) => own.keepOnly(levels) : () => undefined;
    try {
      await (this.jobs ? this.#publishNative(vol, dst, data, parentSyncs, made, ifAbsent) : this.#publishFs(vol, dst, data, parentSyncs, made));
    } finally {
      if (held === undefined) own.release();
    }
    if (held === undefined) await this.newDirs.settled(own);
  }

  /** Whether `atomicWrite` can publish only if absent (`ifAbsent`): the native batched publish with `noReplace`, on a file system that has it. */
  get canPublishIfAbsent(): boolean {
    return this.jobs?.fileWriteDurableBatch !== undefined && this.jobs.fileWriteNoReplace === true && !this.noReplaceRefused;
  }

  /** Set when this drive turned down a rename that refuses to replace (EINVAL, or ENOSYS/EPERM from a sandbox): `canPublishIfAbsent` is false from then on. */
  noReplaceRefused = false;

  async #publishNative(vol: string, dst: string, data: Uint8Array, parentSyncs: number, made: (levels: number) => void, ifAbsent: boolean): Promise<void> {
    const tmpDir = this.#tmpDir;
    const tmp = `${tmpDir}/${randomUUID()}.tmp`;
    // Only a publish with another one into the same directory in flight leaves that
    // directory's fsync to the shared one: a lone writer has nobody to share it with,
    // and the job doing it costs one thread-pool crossing less. With the batch job,
    // the drive's commit queue shares it instead (`#publishBatched`).
    const parent = dirname(dirname(dst));
    const batched = this.jobs!.fileWriteDurableBatch !== undefined;
    const publish = async () => {
      if (batched) {
        await this.#publishBatched(tmp, dst, data, parentSyncs >= 2 ? 2 : 1, this.volPath(vol), ifAbsent);
        // The batch job returned after fsyncing every level it made, its topmost included.
        made(0);
      } else {
        const inFlight = this.#publishing.get(parent) ?? 0;
        this.#publishing.set(parent, inFlight + 1);
        let top: string | null;
        try {
          top = await writeWithJob(this.jobs!, tmp, dst, data, parentSyncs >= 2 ? 2 : 1, this.volPath(vol), this.jobs!.fileSyncDir !== undefined && inFlight > 0);
        } finally {
          const n = this.#publishing.get(parent)! - 1;
          if (n === 0) this.#publishing.delete(parent);
          else this.#publishing.set(parent, n);
        }
        // The job made directories only below `top` (none when it synced every level itself).
        made(top === null ? 0 : pathBelow(dirname(dst), top).length);
        if (top !== null) await this.#dirSyncs.sync(top);
      }
      // Directories the caller made above the two levels the job syncs (a deep new key).
      let d = dirname(dirname(dst));
      for (let level = 3; level <= parentSyncs; level++) {
        d = dirname(d);
        await this.fsyncDir(d);
      }
    };
    try {
      return await publish();
    } catch (err) {
      // The temp directory's own parents are gone (a wiped drive being formatted again):
      // recreate them below the drive's root, never the root itself (a drive that is gone
      // must stay gone, not come back empty), then try once more.
      if (errno(err) !== 'ENOENT' || (err as NodeJS.ErrnoException).path !== tmp) throw err;
      for (const dir of [join(this.root, SYS_VOL), tmpDir]) {
        await fsp.mkdir(dir).catch((e: unknown) => {
          if (errno(e) !== 'EEXIST') throw e;
        });
      }
      return await publish();
    }
  }

  /**
   * The same steps on node:fs: every directory this publish makes has its
   * parent fsync'd, up to the first one that existed (the native job counts
   * the same way), and at least `parentSyncs` levels.
   */
  async #publishFs(vol: string, dst: string, data: Uint8Array, parentSyncs: number, made: (levels: number) => void): Promise<void> {
    const tmpDir = this.#tmpDir;
    const tmp = `${tmpDir}/${randomUUID()}.tmp`;
    await fsp.mkdir(tmpDir, { recursive: true });
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    let levels = parentSyncs;
    try {
      // A directory made here can be pruned by a neighbour's cleanup before the rename: make it again, a few times.
      for (let attempt = 0; ; attempt++) {
        levels = Math.max(levels, (await makeDirsBelow(dirname(dst), this.volPath(vol))) + 1);
        try {
          await fsp.rename(tmp, dst);
          made(levels - 1);
          break;
        } catch (err) {
          if (errno(err) !== 'ENOENT' || attempt >= 2) throw err;
        }
      }
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    // dst's directory (the rename) and each parent of a directory made; the topmost shared.
    let d = dirname(dst);
    for (let level = 1; level < levels; level++) {
      await this.fsyncDir(d);
      d = dirname(d);
    }
    await (levels >= 2 ? this.#dirSyncs.sync(d) : this.fsyncDir(d));
  }

  readonly #writes: PendingWrite[] = [];
  #writeJobs = 0;
  #writeFlushQueued = false;

  /**
   * A publish through the drive's commit queue: publishes wait while
   * `WRITE_JOBS_MAX` jobs of this drive are in the pool, and go together (up
   * to `WRITE_BATCH_MAX`) in the next one, which syncs the directories their
   * new object directories were made in once, after all their renames
   * (`fileWriteDurableBatch`). A lone publish goes at the end of its event-loop
   * turn with the others of that turn.
   */
  #publishBatched(tmp: string, dst: string, data: Uint8Array, parentSyncs: 1 | 2, floor: string, ifAbsent: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      // The sixth element only when asked for (an addon built before it refuses it).
      this.#writes.push({ item: ifAbsent ? [tmp, dst, data, parentSyncs, floor, true] : [tmp, dst, data, parentSyncs, floor], resolve, reject });
      if (this.#writeJobs < WRITE_JOBS_MAX && !this.#writeFlushQueued) {
        this.#writeFlushQueued = true;
        setImmediate(this.#flushWrites);
      }
    });
  }

  readonly #flushWrites = (): void => {
    this.#writeFlushQueued = false;
    while (this.#writeJobs < WRITE_JOBS_MAX && this.#writes.length > 0) {
      const batch = this.#writes.splice(0, WRITE_BATCH_MAX);
      this.#writeJobs++;
      const done = (err: Error | null, results?: (NodeJS.ErrnoException | null)[]) => {
        this.#writeJobs--;
        for (let j = 0; j < batch.length; j++) {
          const out = err ?? results![j];
          if (out) batch[j]!.reject(out);
          else batch[j]!.resolve();
        }
        // The publishes that gathered meanwhile go now, in one job.
        if (this.#writes.length > 0) this.#flushWrites();
      };
      try {
        this.jobs!.fileWriteDurableBatch!(
          batch.map((w) => w.item),
          done,
        );
      } catch (err) {
        // The job could not be queued (out of memory): each publish fails, none is lost.
        done(err as Error);
      }
    }
  };

  async fsyncDir(dir: string): Promise<void> {
    const fh = await fsp.open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  /** Removes empty directories from `dir` up to (not including) the volume root. */
  async prune(vol: string, dir: string): Promise<void> {
    const stop = this.volPath(vol);
    let d = dir;
    while (d.length > stop.length && d.startsWith(stop)) {
      try {
        await fsp.rmdir(d);
      } catch {
        return;
      }
      d = dirname(d);
    }
  }

  /** Moves a file or tree into the trash (atomic, instant) and removes it in the background. */
  async trash(path: string): Promise<void> {
    const dst = join(this.root, SYS_VOL, TRASH_DIR, randomUUID());
    await fsp.rename(path, dst);
    this.rmAsync(dst);
  }

  rmAsync(path: string): void {
    const p = fsp
      .rm(path, { recursive: true, force: true })
      .catch((err: unknown) => {
        this.log.warn({ event: 'drive_trash_remove_failed', endpoint: this.endpoint, err }, 'trash removal failed');
      })
      .finally(() => this.#pendingTrash.delete(p));
    this.#pendingTrash.add(p);
  }

  /** Waits for background trash removal (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.#pendingTrash.size > 0) await Promise.all([...this.#pendingTrash]);
  }

  /**
   * Records a problem of this drive for `ttlMs` (re-noting extends it and
   * keeps its first sighting): `DiskInfo.issues` carries it to the admin
   * API, the readiness detail and the console, from any node.
   */
  noteIssue(kind: DriveIssue['kind'], detail: string, ttlMs = ISSUE_TTL_MS): void {
    const now = Date.now();
    const cur = this.#issues.get(kind);
    this.#issues.set(kind, { detail, since: cur !== undefined && cur.until > now ? cur.since : now, until: now + ttlMs });
  }

  clearIssue(kind: DriveIssue['kind']): void {
    this.#issues.delete(kind);
  }

  hasIssue(kind: DriveIssue['kind']): boolean {
    return this.#issues.has(kind);
  }

  /** Issues still in force. */
  issues(): DriveIssue[] {
    const now = Date.now();
    const out: DriveIssue[] = [];
    for (const [kind, i] of this.#issues) {
      if (i.until <= now) this.#issues.delete(kind);
      else out.push({ kind, detail: i.detail, since: i.since });
    }
    return out;
  }
}
