/**
 * The `Drive` contract: one drive of an erasure set, local (`LocalDrive`) or
 * remote (`RemoteDrive` over internode RPC). Both implement exactly this
 * interface and pass the same conformance suite.
 *
 * Designed for RPC:
 * - operations are coarse (one call per commit step, not per file syscall);
 * - shard data crosses as streams (`AsyncIterable<Uint8Array>`), never as one
 *   whole-object buffer;
 * - xl.meta merging happens on the drive side (`renameData`, `writeMetadata`,
 *   `deleteVersion`), so a remote call carries one version, not the journal;
 * - every type crossing it is plain data (msgpack-serialisable): no class
 *   instances, times as Unix milliseconds, binary as `Uint8Array`.
 *
 * Errors are `SvcError` with these codes: `DiskNotFound` (drive root missing
 * or offline), `VolumeNotFound`, `VolumeExists`, `VolumeNotEmpty`,
 * `FileNotFound`, `FileCorrupt` (bad xl.meta or bitrot), `InvalidArgument`
 * (a path that escapes its volume). A remote drive maps transport failures to
 * `DiskNotFound`.
 */

/** Reserved volume holding internal state: tmp, multipart, bucket records. */
export const SYS_VOL = '.svc.sys';
/** Staging area for writes inside `SYS_VOL`. */
export const TMP_DIR = 'tmp';
/** Async-delete area inside `SYS_VOL` (`tmp/.trash/<uuid>`). */
export const TRASH_DIR = 'tmp/.trash';
/** Multipart staging inside `SYS_VOL`. */
export const MULTIPART_DIR = 'multipart';
/** Bucket metadata records inside `SYS_VOL`. */
export const BUCKETS_DIR = 'buckets';
/** Name of the per-object metadata file. */
export const XL_META = 'xl.meta';
/**
 * Page size of shard files written with O_DIRECT. A `createFile` chunk whose
 * memory sits at the same offset within a page as its bytes within the file
 * can be handed to the kernel where it lies (whole pages of it); others are
 * copied into aligned staging first. Writers place frames so when they can.
 */
export const SHARD_PAGE = 4096;

export interface DiskInfo {
  /** Drive identity: `this` of the drive's format.json as it is now, '' when it has none. */
  id: string;
  /**
   * What the drive's `format.json` holds right now (local drives report it;
   * absent from drives that cannot tell): `ok`, `missing` (an empty or
   * replaced drive), or `corrupt`.
   */
  format?: 'ok' | 'missing' | 'corrupt';
  /** Identity of the mount behind the drive root (`<device>:<inode>`), when the drive can tell: a change means another file system. */
  mountId?: string;
  endpoint: string;
  online: boolean;
  total: number;
  used: number;
  free: number;
  /**
   * What the drive's own node saw go wrong with it lately (absent or empty:
   * nothing): a bucket folder it had to recreate, writes refused because it
   * is full or read-only, I/O errors. Each issue lapses a while after it was
   * last seen.
   */
  issues?: DriveIssue[];
}

export interface MakeVolOptions {
  healing?: { detail: string; ttlMs: number };
}

/** A problem of a drive that is online (`DiskInfo.issues`). */
export interface DriveIssue {
  /** `healing`: damage found and being repaired; `full`; `read-only`; `faulty`: I/O errors. */
  kind: 'healing' | 'full' | 'read-only' | 'faulty';
  detail: string;
  /** Unix ms it was first seen (in the current run of sightings). */
  since: number;
}

export interface VolInfo {
  name: string;
  /** Unix milliseconds. */
  created: number;
}

/** Erasure geometry of one version as seen by one drive. */
export interface ErasureInfo {
  /** Data shards (K). */
  data: number;
  /** Parity shards (M). */
  parity: number;
  blockSize: number;
  /** 1-based shard number this drive holds. */
  index: number;
  /** distribution[slot] = shard number (1-based) held by the drive at set slot `slot`. */
  distribution: number[];
}

export interface ChecksumRecord {
  algorithm: string;
  value: string;
  type: string;
}

export interface PartRecord {
  number: number;
  /** Bytes of object data in this part. */
  size: number;
  etag: string;
  /** Unix milliseconds. */
  modTime: number;
  checksum?: ChecksumRecord;
}

/**
 * One version of an object in the xl.meta journal, for one drive (`erasure.index`
 * and `inlineData` are per drive). Plain data.
 */
export interface FileVersion {
  /** UUID, or 'null' for the null version. */
  versionId: string;
  /** Unix milliseconds. */
  modTime: number;
  type: 'object' | 'delete';
  /** Data-dir UUID holding part.N files; '' for inline objects and delete markers. */
  dataDir: string;
  erasure?: ErasureInfo;
  size: number;
  parts: PartRecord[];
  etag: string;
  contentHeaders: Record<string, string>;
  userMeta: Record<string, string>;
  /** Internal metadata (prefix-free keys). */
  sysMeta: Record<string, string>;
  storageClass: string;
  /** URL-encoded tag set, '' when none. */
  tags: string;
  checksum?: ChecksumRecord;
  /** True when the shard lives in xl.meta's inline-data section. */
  inline: boolean;
  /** This drive's framed shard for an inline version (only when `inline`). */
  inlineData?: Uint8Array;
}

/** What `renameData` replaced, so the caller can undo a commit below quorum. */
export interface RenameDataResult {
  /** The version with the same id that the commit replaced (with its inline data), if any. */
  replaced?: FileVersion;
  /**
   * Journal ids of the superseded copies of this version id now on the drive
   * (the one just made and any left by an interrupted earlier commit); the
   * caller deletes them once the commit reached write quorum.
   */
  superseded?: string[];
}

/** State of one part's shard on one drive (`Drive.checkParts`). */
export type PartState = 'ok' | 'missing' | 'corrupt';

export interface WalkOptions {
  /** Only keys starting with this. */
  prefix?: string;
  /** Only keys strictly greater than this. */
  marker?: string;
  /**
   * `false`: do not descend below `prefix` + one path segment; directories
   * there are reported as `{ name: 'dir/', prefix: true }`.
   */
  recursive: boolean;
  /**
   * Also report orphaned data directories older than this many
   * milliseconds (by the drive's own clock): data directories (UUID names
   * holding only `part.N` files) that the `xl.meta` beside them does not
   * name, or that have no `xl.meta` at all (a crash between moving data in
   * and publishing metadata). Reported as entries with `orphans` and, when
   * the key has no `xl.meta` on this drive, no `meta`.
   */
  orphanAgeMs?: number;
}

export interface WalkEntry {
  /** Object key (or common prefix ending in '/' when `prefix`). */
  name: string;
  prefix?: boolean;
  /** Raw xl.meta bytes of the object (absent for prefixes, and for a key with only orphans here). */
  meta?: Uint8Array;
  /** Orphaned data directory names of this key on this drive (`WalkOptions.orphanAgeMs`). */
  orphans?: string[];
}

export interface Drive {
  /** Endpoint string as given on the command line (for logs and capacity). */
  readonly endpoint: string;
  /** Last known online state (updated by every call; no I/O). */
  isOnline(): boolean;
  diskInfo(): Promise<DiskInfo>;

  // ---- volumes (bucket = volume; SYS_VOL is created by `init`)
  /**
   * `healing`: the volume is made by heal because it went missing (a bucket
   * folder deleted under the drive): the drive then reports a `healing`
   * issue with this detail for `ttlMs` (`DiskInfo.issues`).
   */
  makeVol(vol: string, opts?: MakeVolOptions): Promise<void>;
  listVols(): Promise<VolInfo[]>;
  statVol(vol: string): Promise<VolInfo>;
  /** `force` removes contents; otherwise `VolumeNotEmpty` when it holds objects. */
  deleteVol(vol: string, force: boolean): Promise<void>;

  // ---- plain files
  /** Atomically replaces `path` with `data` (tmp + fsync + rename + dir fsync). */
  writeAll(vol: string, path: string, data: Uint8Array): Promise<void>;
  readAll(vol: string, path: string): Promise<Uint8Array>;
  /**
   * Writes `stream` to `path` (parents created); durable (fsync'd) when it
   * resolves. `size` is the exact byte count or -1; a mismatch throws and
   * removes the file. The producer recycles a chunk's memory once the drive
   * pulls the next one: a drive must be done with (or have copied) a chunk
   * before pulling more. (A violation cannot commit silently: staged shards
   * are verified first.)
   *
   * `opts.frameBlockSize`: the stream is a framed shard file (bitrot frames
   * of that shard block size), in chunks of any size. The drive checks each
   * frame's hash against the bytes it hands to the file system as it writes
   * them (throwing `FileCorrupt` and removing the file), and `verifyFile` of
   * that same, unchanged file relies on that check instead of reading it back.
   */
  createFile(
    vol: string,
    path: string,
    size: number,
    stream: AsyncIterable<Uint8Array>,
    opts?: { frameBlockSize?: number },
  ): Promise<void>;
  /**
   * Streams `length` bytes of `path` from `offset`. `chunkSize` is a hint
   * (e.g. one bitrot frame, so the reader verifies chunks without copying).
   * `reuse`: the consumer is done with a chunk once it pulled the next one,
   * so the drive may read into the same memory again (no allocation per
   * chunk; a drive is free to ignore it).
   */
  readFileStream(
    vol: string,
    path: string,
    offset: number,
    length: number,
    opts?: { chunkSize?: number; reuse?: boolean },
  ): Promise<AsyncIterable<Uint8Array>>;
  /**
   * Verifies every bitrot frame of a shard file of `dataBytes` shard bytes in
   * `shardBlockSize` blocks; throws `FileCorrupt` on any mismatch or wrong size.
   */
  verifyFile(vol: string, path: string, shardBlockSize: number, dataBytes: number): Promise<void>;
  /**
   * The state of this drive's shard of every part of `version` (as this
   * drive's xl.meta holds it: its `erasure.index`, data dir, part sizes):
   * `missing` when the part file is absent, `corrupt` when its size is wrong
   * or, with `deep`, any bitrot frame fails. Inline versions and versions
   * without data answer `ok` (their shard travels in xl.meta; the caller
   * checks it). One call per version, whatever the part count.
   */
  checkParts(vol: string, path: string, version: FileVersion, opts: { deep: boolean }): Promise<PartState[]>;
  /** Renames a file or directory (parents of the destination created, dir fsync'd). */
  renameFile(srcVol: string, srcPath: string, dstVol: string, dstPath: string): Promise<void>;
  /** Removes a file, or a directory tree when `recursive` (moved to trash, removed async). */
  delete(vol: string, path: string, opts: { recursive: boolean }): Promise<void>;
  /** Entries of a directory (directories end in '/'), sorted. */
  listDir(vol: string, path: string): Promise<string[]>;

  // ---- object metadata and commit
  /** Raw xl.meta of an object; `FileNotFound` when absent. */
  readXlMeta(vol: string, path: string): Promise<Uint8Array>;
  /**
   * Commit step of a write. Moves `srcVol/srcPath/<version.dataDir>` to
   * `dstVol/dstPath/<version.dataDir>`, then merges `version` into
   * `dstVol/dstPath/xl.meta`. A version with the same id is returned as
   * `replaced` and, when its data differs, kept in the journal as a
   * superseded copy (`supersededId(replaced)`, data in place) until the caller
   * deletes it at write quorum, or `undoRenameData` restores it.
   */
  renameData(srcVol: string, srcPath: string, version: FileVersion, dstVol: string, dstPath: string): Promise<RenameDataResult>;
  /**
   * Reverts a `renameData` (below write quorum): restores `replaced` (or
   * removes the version) and moves the new data dir back into `srcPath`.
   */
  undoRenameData(
    srcVol: string,
    srcPath: string,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
    replaced: FileVersion | undefined,
  ): Promise<void>;
  /** Finishes a write at quorum: discards the staging dir. */
  commitRenameData(srcVol: string, srcPath: string): Promise<void>;
  /**
   * Adds or replaces (by version id) a version without data (delete markers),
   * or, with `update`, rewrites the metadata of an existing version keeping
   * its data (`FileNotFound` when absent). A replaced version's data dir is
   * removed.
   */
  writeMetadata(vol: string, path: string, version: FileVersion, opts?: { update?: boolean }): Promise<void>;
  /**
   * Removes one version and its data; removes xl.meta and empty parent
   * directories when no version remains. `FileNotFound` when absent.
   */
  deleteVersion(vol: string, path: string, versionId: string): Promise<void>;
  /** Sorted merge-walk input: objects under a volume with their raw xl.meta. */
  walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry>;
}
