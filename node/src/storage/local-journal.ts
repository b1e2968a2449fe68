/**
 * The version journal of a `LocalDrive`: each object's `xl.meta` (every
 * version, inline data included) read, merged and published atomically, and
 * the commit of a new version's data directory into its object (with its
 * undo and the cleanup of its staging). See `renameData` for the crash
 * points and why each is safe.
 */
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../util/errors.ts';
import { type FileVersion, type RenameDataResult, XL_META } from './drive.ts';
import { type DirHold, makeDirsBelow } from './dir-create.ts';
import { type DriveFs, errno, UUID_RE } from './local-fs.ts';
import { baseVersionId, decodeXlMeta, encodeXlMeta, mergeVersion, supersededId } from './xl-meta.ts';

/** A path with a segment below its first that could be a data folder (a UUID): see `#refuseDataDirKey`. */
const DATA_DIR_SEGMENT_RE = /\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:\/|$)/;

export class VersionJournal {
  readonly #fs: DriveFs;

  constructor(fs: DriveFs) {
    this.#fs = fs;
  }

  /** Current journal of an object; [] when it has no xl.meta. */
  /**
   * Current journal of an object; [] when it has no xl.meta, after checking
   * the drive is there (`probeRoot`; a caller whose next step fails on a
   * missing drive anyway may skip that stat).
   */
  async #readVersions(vol: string, path: string, probeRoot = true): Promise<FileVersion[]> {
    try {
      return decodeXlMeta(await this.#fs.readWhole(join(this.#fs.filePath(vol, path), XL_META)));
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (probeRoot) await this.#fs.checkRoot();
        return [];
      }
      return this.#fs.mapErr(err, vol);
    }
  }

  /** `made`: levels of `path`'s directories the caller made (their parents are fsync'd too), under its `held` hold. */
  async #writeVersions(vol: string, path: string, versions: FileVersion[], newDir = true, made = 0, held?: DirHold): Promise<void> {
    const dir = this.#fs.filePath(vol, path);
    if (versions.length === 0) {
      await fsp.rm(join(dir, XL_META), { force: true });
      await this.#fs.fsyncDir(dir);
      await this.#fs.prune(vol, dir);
      return;
    }
    // A new object directory must itself survive power loss: fsync its parent too,
    // and the parent of every directory above it made for it (a deep new key).
    await this.#fs.atomicWrite(vol, join(dir, XL_META), encodeXlMeta(versions), Math.max(newDir ? 2 : 1, made + 1), held);
  }

  /*
   * Commit of one drive. Crash points and why each is safe:
   *  1. before the data-dir move: nothing changed on this drive; staging is
   *     swept from tmp at the next start.
   *  2. after the data dir moved in, before xl.meta: the data dir is not
   *     referenced by any xl.meta, so it is invisible (garbage for the scanner).
   *  3. after xl.meta is renamed in: the version is published on this drive,
   *     with its data already fsync'd; the object layer decides visibility by
   *     read quorum across drives, so a drive-local publish alone never makes a
   *     half-written object visible. A replaced version (same id) stays in the
   *     journal as a superseded copy with its data in place, so the previous
   *     state keeps its votes until the object layer, at write quorum, drops
   *     it (`deleteVersion` of the superseded id).
   * When this returns, the publish is on stable storage: xl.meta fsync'd
   * before its rename, then the object's directory fsync'd (the rename), and
   * for a new object directory its parent too (the new directory's entry).
   * That parent fsync is shared by concurrent commits into the same directory
   * (the drive's batched commit job, or `DirSyncGroups`; `DriveFs.atomicWrite`
   * in local-fs.ts): it is one that *started* after this
   * commit's mkdir and rename had completed, never one already running, and
   * this commit waits for it to return. A crash before it returns leaves the
   * new directory's entry possibly not durable: the object is then missing on
   * this drive, as at point 1, and the commit was never acknowledged (it did
   * not count toward write quorum).
   */
  async renameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
  ): Promise<RenameDataResult> {
    // The drive and the volume must be there. With the native jobs an
    // existing journal read proves both; for a new object the metadata write
    // itself fails when either is missing (it never creates the volume), and
    // the error is mapped then (DiskNotFound / VolumeNotFound). Only a data
    // directory's mkdir could create the volume, so that case checks it
    // first. A new inline object thus costs two thread-pool crossings per
    // drive (read, publish), not six.
    const checkVol = async () => {
      try {
        await fsp.stat(this.#fs.volPath(dstVol));
      } catch (err) {
        await this.#fs.mapErr(err, dstVol, 'VolumeNotFound');
      }
    };
    if (!this.#fs.jobs) {
      await this.#fs.checkRoot();
      await checkVol();
    }
    const stage = this.#fs.filePath(srcVol, srcPath);
    const dst = this.#fs.filePath(dstVol, dstPath);
    if (version.dataDir === '' && this.#fs.canPublishIfAbsent && !DATA_DIR_SEGMENT_RE.test(dstPath)) {
      const published = await this.#publishIfNew(dstVol, dst, version);
      if (published) return {};
    }
    try {
      const current = await this.#readVersions(dstVol, dstPath, !this.#fs.jobs);
      if (current.length === 0) await this.#refuseDataDirKey(dstVol, dstPath);
      if (this.#fs.jobs && current.length === 0 && version.dataDir !== '') await checkVol();
      const merged = mergeVersion(current, version);
      const replaced = merged.replaced;
      let versions = merged.versions;
      if (replaced && (replaced.inline || replaced.dataDir !== version.dataDir)) {
        versions = mergeVersion(versions, { ...replaced, versionId: supersededId(replaced) }).versions;
      }
      // The native metadata write creates the object's directory itself when it renames into it.
      // Directories made here are held until their parents' fsyncs returned (dir-create.ts).
      const held = this.#fs.newDirs.hold(dst, this.#fs.volPath(dstVol));
      try {
        const made = version.dataDir !== '' || !this.#fs.jobs ? await makeDirsBelow(dst, this.#fs.volPath(dstVol)) : 0;
        if (version.dataDir !== '') {
          await fsp.rename(join(stage, version.dataDir), join(dst, version.dataDir));
        }
        await this.#writeVersions(dstVol, dstPath, versions, current.length === 0, made, held);
      } finally {
        held.release();
      }
      await this.#fs.newDirs.settled(held);
      const superseded = versions
        .filter((v) => v.versionId !== version.versionId && baseVersionId(v.versionId) === version.versionId)
        .map((v) => v.versionId);
      return { ...(replaced ? { replaced } : {}), ...(superseded.length > 0 ? { superseded } : {}) };
    } catch (err) {
      return this.#fs.mapErr(err, dstVol);
    }
  }

  /**
   * The commit of an inline version to an object this drive has no journal
   * for, without reading first: the journal such a commit writes is the
   * version alone (`mergeVersion([], version)`), published by a rename that
   * refuses to replace an existing `xl.meta` (the same steps as any publish,
   * a new object directory's parent fsync'd too). True when published; false
   * when the object has a journal here (EEXIST) or the file system cannot
   * refuse (EINVAL; ENOSYS or EPERM from a sandbox; remembered): nothing changed, and the caller reads,
   * merges and publishes as for any object. A new small object's commit thus
   * costs one thread-pool crossing per drive, not two. Keys with a UUID
   * segment below the first never come here (`#refuseDataDirKey` reads their parents first).
   * `dst` is the object's folder as `filePath` builds it (no empty, `.` or
   * `..` segment), so the file name is appended without normalizing.
   */
  async #publishIfNew(vol: string, dst: string, version: FileVersion): Promise<boolean> {
    const held = this.#fs.newDirs.hold(dst, this.#fs.volPath(vol));
    try {
      await this.#fs.atomicWrite(vol, `${dst}/${XL_META}`, encodeXlMeta(mergeVersion([], version).versions), 2, held, true);
    } catch (err) {
      const code = errno(err);
      if (code === 'EEXIST') return false;
      // A file system without it (EINVAL), or a sandbox that lets rename through but not renameat2
      // (ENOSYS, EPERM): nothing changed; a real permission problem fails the read-merge path as well.
      if ((code === 'EINVAL' || code === 'ENOSYS' || code === 'EPERM') && (err as NodeJS.ErrnoException).syscall === 'rename') {
        this.#fs.noReplaceRefused = true;
        this.#fs.log.info({ event: 'drive_rename_noreplace_unsupported', endpoint: this.#fs.endpoint }, 'file system cannot refuse a replacing rename: new objects are read before their commit');
        return false;
      }
      return this.#fs.mapErr(err, vol);
    } finally {
      held.release();
    }
    await this.#fs.newDirs.settled(held);
    return true;
  }

  /**
   * A new object whose folder would be a data folder of an object above it
   * (`victim/<its data dir>`) is refused: its metadata would sit among that
   * object's shards, and deleting the object would take it along. Only UUID
   * segments can be data folders; each is checked against its parent's
   * journal on this drive.
   */
  async #refuseDataDirKey(vol: string, path: string): Promise<void> {
    if (!DATA_DIR_SEGMENT_RE.test(path)) return;
    const segs = path.split('/');
    for (let i = 1; i < segs.length; i++) {
      if (!UUID_RE.test(segs[i]!)) continue;
      let named: FileVersion[];
      try {
        named = decodeXlMeta(await this.#fs.readWhole(join(this.#fs.filePath(vol, segs.slice(0, i).join('/')), XL_META)), false);
      } catch {
        continue; // no object above (or an unreadable journal: its heal decides)
      }
      if (named.some((v) => v.dataDir === segs[i])) {
        throw new SvcError('XSvcObjectNameReserved', `the key segment ${segs[i]} is a data folder of the object "${segs.slice(0, i).join('/')}"; this key cannot be stored`, { path });
      }
    }
  }

  async undoRenameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
    replaced: FileVersion | undefined,
  ): Promise<void> {
    await this.#fs.checkRoot();
    const stage = this.#fs.filePath(srcVol, srcPath);
    const dst = this.#fs.filePath(dstVol, dstPath);
    try {
      const sup = replaced ? supersededId(replaced) : undefined;
      let versions = (await this.#readVersions(dstVol, dstPath)).filter((v) => v.versionId !== version.versionId && v.versionId !== sup);
      if (replaced) versions = mergeVersion(versions, replaced).versions;
      // Restore the metadata first: once it no longer names the new data dir,
      // moving that dir out is invisible.
      await this.#writeVersions(dstVol, dstPath, versions);
      // The new data dir goes back into staging (a multipart upload stays
      // completable); the caller discards staging when it is a plain PUT.
      if (version.dataDir !== '' && (!replaced || replaced.dataDir !== version.dataDir)) {
        await fsp.mkdir(stage, { recursive: true });
        await fsp.rename(join(dst, version.dataDir), join(stage, version.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
        if (versions.length === 0) await this.#fs.prune(dstVol, dst);
      }
    } catch (err) {
      await this.#fs.mapErr(err, dstVol);
    }
  }

  async commitRenameData(srcVol: string, srcPath: string): Promise<void> {
    try {
      await this.#fs.trash(this.#fs.filePath(srcVol, srcPath));
    } catch (err) {
      if (errno(err) === 'ENOENT') return;
      await this.#fs.mapErr(err, srcVol);
    }
  }

  async writeMetadata(vol: string, path: string, version: FileVersion, opts: { update?: boolean } = {}): Promise<void> {
    await this.#fs.checkRoot();
    try {
      await fsp.stat(this.#fs.volPath(vol));
    } catch (err) {
      await this.#fs.mapErr(err, vol, 'VolumeNotFound');
    }
    try {
      const current = await this.#readVersions(vol, path);
      let next = version;
      if (opts.update) {
        const old = current.find((v) => v.versionId === version.versionId);
        if (!old) throw new SvcError('FileNotFound');
        // Only metadata changes: this drive's geometry (its shard index), data
        // dir, parts and inline shard stay as stored.
        next = {
          ...old,
          modTime: version.modTime,
          userMeta: version.userMeta,
          contentHeaders: version.contentHeaders,
          tags: version.tags,
          sysMeta: version.sysMeta,
        };
      }
      const { versions, replaced } = mergeVersion(current, next);
      // A new version replacing an id also ends that id's superseded copies.
      const gone = opts.update
        ? []
        : versions.filter((v) => v.versionId !== next.versionId && baseVersionId(v.versionId) === next.versionId);
      if (!opts.update && replaced) gone.push(replaced);
      const kept = versions.filter((v) => !gone.includes(v));
      await this.#writeVersions(vol, path, kept);
      for (const g of gone) {
        if (g.dataDir === '' || g.dataDir === next.dataDir) continue;
        await this.#fs.trash(join(this.#fs.filePath(vol, path), g.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
      }
    } catch (err) {
      await this.#fs.mapErr(err, vol);
    }
  }

  async deleteVersion(vol: string, path: string, versionId: string): Promise<void> {
    await this.#fs.checkRoot();
    try {
      const current = await this.#readVersions(vol, path);
      // Deleting a version also deletes its superseded copies (a base id
      // names them all; a superseded id names only itself).
      const victims = current.filter((v) => v.versionId === versionId || baseVersionId(v.versionId) === versionId);
      if (victims.length === 0) throw new SvcError('FileNotFound');
      const rest = current.filter((v) => !victims.includes(v));
      const dir = this.#fs.filePath(vol, path);
      // Metadata first: once the version is unlisted its data is unreachable,
      // so a crash before the data removal leaves garbage, not a broken version.
      if (rest.length === 0) {
        await fsp.rm(join(dir, XL_META), { force: true });
        await this.#fs.fsyncDir(dir);
      } else await this.#writeVersions(vol, path, rest, false);
      const shared = new Set(rest.map((v) => v.dataDir));
      for (const v of victims) {
        if (v.dataDir === '' || shared.has(v.dataDir)) continue;
        await this.#fs.trash(join(dir, v.dataDir)).catch((err: unknown) => {
          if (errno(err) !== 'ENOENT') throw err;
        });
      }
      if (rest.length === 0) await this.#fs.prune(vol, dir);
    } catch (err) {
      await this.#fs.mapErr(err, vol);
    }
  }
}
