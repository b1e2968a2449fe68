/**
 * A drive on the local filesystem.
 *
 * Layout under the drive root (never created by us: a missing root is
 * `DiskNotFound`):
 *   .svc.sys/tmp/<uuid>/…        write staging; .svc.sys/tmp/.trash/<uuid> async deletes
 *   .svc.sys/multipart/…         multipart staging
 *   .svc.sys/buckets/…           bucket metadata records
 *   <bucket>/<key>/xl.meta       all versions of an object (+ inline data)
 *   <bucket>/<key>/<dataDir>/part.N   shard files of a non-inline version
 *
 * Durability: data files are fsync'd once when written; every file that
 * publishes state (xl.meta, records) is written to a temp file, fsync'd,
 * renamed over the target, and the directory fsync'd.
 *
 * `LocalDrive` keeps the drive's health (online state, problems, capacity,
 * format identity), volumes and plain files; the rest is one module per
 * concern over a shared `DriveFs` (`local-fs.ts`: paths, error mapping,
 * atomic publishes, trash): shard files (`local-shards.ts`), the version
 * journal and commit (`local-journal.ts`) and the walk (`local-walk.ts`).
 */
import { randomUUID } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { nativeAddon } from '../erasure/native.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { silentLogger } from '../util/logger.ts';
import { compareKeys } from '../util/key-order.ts';
import {
  BUCKETS_DIR,
  type DiskInfo,
  type Drive,
  type DriveIssue,
  type FileVersion,
  type MakeVolOptions,
  MULTIPART_DIR,
  type PartState,
  type RenameDataResult,
  SYS_VOL,
  TMP_DIR,
  TRASH_DIR,
  type VolInfo,
  type WalkEntry,
  type WalkOptions,
  XL_META,
} from './drive.ts';
import { readFormatFile } from './format.ts';
import { makeDirsBelow } from './dir-create.ts';
import { DriveFs, errno, ISSUE_TTL_MS } from './local-fs.ts';
import { VersionJournal } from './local-journal.ts';
import { ShardFiles } from './local-shards.ts';
import { DriveWalk } from './local-walk.ts';

export interface LocalDriveOptions {
  /** Endpoint string for logs (defaults to the root path). */
  endpoint?: string;
  /** Drive identity from format.json, if known. */
  id?: string;
  logger?: Logger;
  /**
   * Whole-file reads and durable metadata writes as one native pool job each
   * (default: when the addon is built); false keeps them on node:fs/promises
   * (the drive conformance suite runs both).
   */
  nativeFiles?: boolean;
  /**
   * Shard files of at least `DIRECT_MIN_BYTES` written with O_DIRECT
   * (default: when the addon can align buffers; a file system that refuses
   * O_DIRECT turns it off for the drive on first use).
   */
  directIo?: boolean;
}

/** Free space below which a drive counts as full. */
const FULL_BELOW_BYTES = 1 << 20;
/** How long `diskInfo` trusts its last read of format.json (placement asks for diskInfo per PUT). */
const FORMAT_TTL_MS = 1_000;

export class LocalDrive implements Drive {
  readonly endpoint: string;
  readonly root: string;
  readonly #id: string;
  readonly #fs: DriveFs;
  readonly #shards: ShardFiles;
  readonly #journal: VersionJournal;
  readonly #walk: DriveWalk;
  #format: { at: number; id: string; state: 'ok' | 'missing' | 'corrupt' } | undefined;

  constructor(root: string, opts: LocalDriveOptions = {}) {
    this.root = root;
    this.endpoint = opts.endpoint ?? root;
    this.#id = opts.id ?? '';
    const jobs = opts.nativeFiles !== false && typeof nativeAddon?.fileRead === 'function' ? nativeAddon : undefined;
    this.#fs = new DriveFs(root, this.endpoint, opts.logger ?? silentLogger, jobs);
    this.#shards = new ShardFiles(this.#fs, opts.directIo);
    this.#journal = new VersionJournal(this.#fs);
    this.#walk = new DriveWalk(this.#fs);
  }

  /**
   * Prepares `.svc.sys` (tmp, multipart, buckets) and moves leftovers of
   * interrupted writes in `tmp` to the trash. The root itself must exist.
   */
  async init(): Promise<void> {
    await this.#fs.checkRoot();
    for (const d of [TMP_DIR, TRASH_DIR, MULTIPART_DIR, BUCKETS_DIR]) {
      await fsp.mkdir(join(this.#fs.root, SYS_VOL, d), { recursive: true });
    }
    const tmp = join(this.#fs.root, SYS_VOL, TMP_DIR);
    for (const name of await fsp.readdir(tmp)) {
      if (name === '.trash') continue;
      await this.#fs.trash(join(tmp, name));
    }
    // Leftovers of a previous run's trash are removed in the background too.
    const trash = join(this.#fs.root, SYS_VOL, TRASH_DIR);
    for (const name of await fsp.readdir(trash)) this.#fs.rmAsync(join(trash, name));
  }

  /** Waits for background trash removal (tests, shutdown). */
  flush(): Promise<void> {
    return this.#fs.flush();
  }

  isOnline(): boolean {
    return this.#fs.online;
  }

  /**
   * Records a problem of this drive for `ttlMs` (re-noting extends it and
   * keeps its first sighting): `DiskInfo.issues` carries it to the admin
   * API, the readiness detail and the console, from any node.
   */
  noteIssue(kind: DriveIssue['kind'], detail: string, ttlMs = ISSUE_TTL_MS): void {
    this.#fs.noteIssue(kind, detail, ttlMs);
  }

  clearIssue(kind: DriveIssue['kind']): void {
    this.#fs.clearIssue(kind);
  }

  /** Issues still in force. */
  issues(): DriveIssue[] {
    return this.#fs.issues();
  }

  /** Whether a small file can be created in the drive's temp folder now. */
  async #writable(): Promise<boolean> {
    const probe = join(this.#fs.root, SYS_VOL, TMP_DIR, `${randomUUID()}.probe`);
    try {
      await fsp.writeFile(probe, '');
      await fsp.unlink(probe);
      return true;
    } catch {
      return false;
    }
  }

  async diskInfo(): Promise<DiskInfo> {
    try {
      const root = await this.#fs.checkRoot();
      const s = await fsp.statfs(this.#fs.root);
      const total = s.blocks * s.bsize;
      const free = s.bavail * s.bsize;
      const fmt = await this.#formatIdentity();
      // Full while less than a MiB is free; space freed clears it at once (a refused write noted it for a minute).
      if (free < FULL_BELOW_BYTES) this.#fs.noteIssue('full', `${free} bytes free: writes are refused (XSvcStorageFull)`, 10_000);
      else this.#fs.clearIssue('full');
      // Read-only (a refused write noted it for a minute): a write probe clears it the moment the
      // file system takes writes again (remounted), or the set would refuse writes it can take.
      if (this.#fs.hasIssue('read-only') && (await this.#writable())) this.#fs.clearIssue('read-only');
      const issues = this.#fs.issues();
      return {
        id: fmt.id,
        format: fmt.state,
        mountId: `${root.dev}:${root.ino}`,
        endpoint: this.#fs.endpoint,
        online: true,
        total,
        free,
        used: total - s.bfree * s.bsize,
        ...(issues.length > 0 ? { issues } : {}),
      };
    } catch (err) {
      if (hasCode(err, 'DiskNotFound')) return { id: this.#id, endpoint: this.#fs.endpoint, online: false, total: 0, used: 0, free: 0 };
      throw err;
    }
  }

  /**
   * The identity the drive's format.json gives it now (read at most once a
   * second): a drive emptied or swapped while the process runs shows up here
   * as `missing`, which is what keeps it out of its set until heal formats
   * it. Without a format file the configured id (if any) is not claimed.
   */
  async #formatIdentity(): Promise<{ id: string; state: 'ok' | 'missing' | 'corrupt' }> {
    const now = performance.now();
    if (this.#format !== undefined && now - this.#format.at < FORMAT_TTL_MS) return this.#format;
    let id = '';
    let state: 'ok' | 'missing' | 'corrupt';
    try {
      const st = await readFormatFile(this.#fs.root);
      if (st.state === 'formatted') {
        id = st.format.erasure.this;
        state = 'ok';
      } else state = st.state === 'unformatted' ? 'missing' : 'corrupt';
    } catch {
      state = 'missing';
    }
    this.#format = { at: now, id, state };
    return this.#format;
  }

  /** Forgets the cached format identity (after this process wrote a format file). */
  forgetFormat(): void {
    this.#format = undefined;
  }

  // ---- volumes

  async makeVol(vol: string, opts: MakeVolOptions = {}): Promise<void> {
    await this.#fs.checkRoot();
    try {
      await fsp.mkdir(this.#fs.volPath(vol));
    } catch (err) {
      if (errno(err) === 'EEXIST') throw new SvcError('VolumeExists');
      await this.#fs.mapErr(err, vol, 'VolumeNotFound');
    }
    if (opts.healing !== undefined) this.#fs.noteIssue('healing', opts.healing.detail, opts.healing.ttlMs);
  }

  async listVols(): Promise<VolInfo[]> {
    await this.#fs.checkRoot();
    const out: VolInfo[] = [];
    try {
      for (const d of await fsp.readdir(this.#fs.root, { withFileTypes: true })) {
        if (!d.isDirectory() || d.name.startsWith('.')) continue;
        const st = await fsp.stat(join(this.#fs.root, d.name));
        out.push({ name: d.name, created: Math.round(st.birthtimeMs || st.mtimeMs) });
      }
    } catch (err) {
      await this.#fs.mapErr(err, '', 'VolumeNotFound');
    }
    return out.sort((a, b) => compareKeys(a.name, b.name));
  }

  async statVol(vol: string): Promise<VolInfo> {
    try {
      const st = await fsp.stat(this.#fs.volPath(vol));
      if (!st.isDirectory()) throw new SvcError('VolumeNotFound');
      this.#fs.online = true;
      return { name: vol, created: Math.round(st.birthtimeMs || st.mtimeMs) };
    } catch (err) {
      return this.#fs.mapErr(err, vol, 'VolumeNotFound');
    }
  }

  async deleteVol(vol: string, force: boolean): Promise<void> {
    const p = this.#fs.volPath(vol);
    try {
      if (force) {
        await fsp.stat(p);
        await this.#fs.trash(p);
      } else {
        await fsp.rmdir(p);
      }
    } catch (err) {
      if (errno(err) === 'ENOTEMPTY' || errno(err) === 'EEXIST') throw new SvcError('VolumeNotEmpty');
      await this.#fs.mapErr(err, vol, 'VolumeNotFound');
    }
  }

  // ---- plain files

  async writeAll(vol: string, path: string, data: Uint8Array): Promise<void> {
    await this.#fs.checkRoot();
    try {
      await this.#fs.atomicWrite(vol, this.#fs.filePath(vol, path), data);
    } catch (err) {
      await this.#fs.mapErr(err, vol);
    }
  }

  async readAll(vol: string, path: string): Promise<Uint8Array> {
    try {
      const data = await this.#fs.readWhole(this.#fs.filePath(vol, path));
      this.#fs.online = true;
      return data;
    } catch (err) {
      return this.#fs.mapErr(err, vol);
    }
  }

  async renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void> {
    await this.#fs.checkRoot();
    const src = this.#fs.filePath(srcVol, srcPath);
    const dst = this.#fs.filePath(dstVol, dstPath);
    // dst's directory (the rename) and the parent of each directory made for it are fsync'd;
    // directories on the path another publish made are waited for (dir-create.ts).
    const floor = this.#fs.volPath(dstVol);
    const held = this.#fs.newDirs.hold(dirname(dst), floor);
    try {
      const made = await makeDirsBelow(dirname(dst), floor);
      await fsp.rename(src, dst);
      let d = dirname(dst);
      for (let level = 0; level <= made; level++, d = dirname(d)) await this.#fs.fsyncDir(d);
    } catch (err) {
      await this.#fs.mapErr(err, srcVol);
    } finally {
      held.release();
    }
    await this.#fs.newDirs.settled(held);
  }

  async delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void> {
    const p = this.#fs.filePath(vol, path);
    try {
      if (opts.recursive) {
        await this.#fs.trash(p);
      } else {
        const st = await fsp.lstat(p);
        if (st.isDirectory()) await fsp.rmdir(p);
        else await fsp.unlink(p);
      }
    } catch (err) {
      if (errno(err) === 'ENOTEMPTY') throw new SvcError('VolumeNotEmpty', 'directory not empty');
      await this.#fs.mapErr(err, vol);
    }
    if (vol !== SYS_VOL || path.startsWith(MULTIPART_DIR + '/')) await this.#fs.prune(vol, dirname(p));
  }

  async listDir(vol: string, path: string): Promise<string[]> {
    try {
      const ents = await fsp.readdir(this.#fs.filePath(vol, path), { withFileTypes: true });
      return ents.map((d) => (d.isDirectory() ? d.name + '/' : d.name)).sort(compareKeys);
    } catch (err) {
      return this.#fs.mapErr(err, vol);
    }
  }

  // ---- shard files (local-shards.ts)

  createFile(vol: string, path: string, size: number, stream: AsyncIterable<Uint8Array>, opts: { frameBlockSize?: number } = {}): Promise<void> {
    return this.#shards.createFile(vol, path, size, stream, opts);
  }

  readFileStream(vol: string, path: string, offset: number, length: number, opts: { chunkSize?: number; reuse?: boolean } = {}): Promise<AsyncIterable<Uint8Array>> {
    return this.#shards.readFileStream(vol, path, offset, length, opts);
  }

  verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void> {
    return this.#shards.verifyFile(vol, path, shardBlockSize, dataBytes);
  }

  checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]> {
    return this.#shards.checkParts(vol, path, version, opts);
  }

  // ---- object metadata and commit (local-journal.ts)

  async readXlMeta(vol: string, path: string): Promise<Uint8Array> {
    return this.readAll(vol, path === '' ? XL_META : `${path}/${XL_META}`);
  }

  renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult> {
    return this.#journal.renameData(srcVol, srcPath, version, dstVol, dstPath);
  }

  undoRenameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string, replaced: FileVersion | undefined): Promise<void> {
    return this.#journal.undoRenameData(srcVol, srcPath, version, dstVol, dstPath, replaced);
  }

  commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    return this.#journal.commitRenameData(srcVol, srcPath);
  }

  writeMetadata(vol: string, path: string, version: FileVersion, opts: { update?: boolean } = {}): Promise<void> {
    return this.#journal.writeMetadata(vol, path, version, opts);
  }

  deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    return this.#journal.deleteVersion(vol, path, versionId);
  }

  // ---- walk (local-walk.ts)

  walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    return this.#walk.walkDir(vol, opts);
  }
}
