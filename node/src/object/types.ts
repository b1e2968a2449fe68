/**
 * The object-layer contract: what the S3 and admin edges call, and what the
 * erasure engine (sets → pools → cluster) implements. Pure types, no I/O.
 *
 * Conventions:
 * - Keys and bucket names arrive already validated by the edge (length, UTF-8,
 *   bucket name rules); the object layer re-checks only what protects its
 *   on-disk layout (e.g. `..` segments, the reserved `.svc.sys` volume).
 * - Errors are `SvcError` with registry codes (NoSuchBucket, NoSuchKey,
 *   NoSuchVersion, ErasureReadQuorum, ErasureWriteQuorum, PreconditionFailed…).
 * - Version ids are UUID strings; the null version is the string `'null'`.
 */
import type { Readable } from 'node:stream';

/** Who asked for a change and how (what the S3 edge knows of the request). */
export interface ChangeOrigin {
  /** The principal the request was authorized as (its access key; `anonymous`). */
  principalId: string;
  sourceIp: string;
  requestId: string;
  hostId: string;
  host?: string;
  userAgent?: string;
  /** How a new version was made when it was not a plain PUT. */
  via?: 'post' | 'copy';
}

export type StorageClass = 'STANDARD' | 'REDUCED_REDUNDANCY';
export type VersioningStatus = 'Unversioned' | 'Enabled' | 'Suspended';
export type ChecksumAlgorithm = 'CRC32' | 'CRC32C' | 'CRC64NVME' | 'SHA1' | 'SHA256';
export type ChecksumType = 'COMPOSITE' | 'FULL_OBJECT';

/** Standard HTTP content headers stored with an object and returned on GET/HEAD. */
export interface ContentHeaders {
  contentType?: string;
  contentEncoding?: string;
  contentDisposition?: string;
  contentLanguage?: string;
  cacheControl?: string;
  expires?: string;
}

export interface ObjectChecksum {
  algorithm: ChecksumAlgorithm;
  /** base64 value as S3 returns it; composite multipart values carry the `-N` suffix. */
  value: string;
  type: ChecksumType;
}

export interface PartInfo {
  number: number;
  size: number;
  etag: string;
  modTime: Date;
  checksum?: ObjectChecksum;
}

export interface ObjectInfo {
  bucket: string;
  name: string;
  /** UUID, or `'null'` for the null version. */
  versionId: string;
  isLatest: boolean;
  deleteMarker: boolean;
  size: number;
  /** Quoted-less hex ETag (`<md5>` or `<md5>-<parts>`). */
  etag: string;
  modTime: Date;
  storageClass: StorageClass;
  contentHeaders: ContentHeaders;
  /** User metadata without the `x-amz-meta-` prefix, keys lower-cased. */
  userMeta: Record<string, string>;
  /** URL-encoded tag set (`k1=v1&k2=v2`), '' when none. */
  tags: string;
  checksum?: ObjectChecksum;
  /** Parts of a multipart object (one implicit part otherwise). */
  parts: PartInfo[];
  /** Erasure geometry the object was written with. */
  dataBlocks: number;
  parityBlocks: number;
  /** The version's access control list as the S3 API stored it (opaque here); absent when none was set. */
  acl?: string;
  /** Server-side encryption of the version; absent for plaintext. `size` and part sizes are plaintext sizes. */
  sse?: SseInfo;
  /** Object lock state of the version; absent when it never had a retention or legal hold. */
  lock?: ObjectLockInfo;
  /** `x-amz-replication-status` (`replication-status.ts`); absent when no rule replicates the version. */
  replicationStatus?: 'PENDING' | 'COMPLETED' | 'FAILED' | 'REPLICA';
}

export type SseType = 'SSE-S3' | 'SSE-KMS' | 'SSE-C';

/** How a new version is to be encrypted (the request's headers, or the bucket's default). */
export type SseRequest =
  | { type: 'SSE-S3' }
  | { type: 'SSE-KMS'; keyId?: string; context?: string }
  /** The client's 256-bit key (checked against its MD5 by the edge). */
  | { type: 'SSE-C'; key: Uint8Array };

/** How a stored version is encrypted. */
export interface SseInfo {
  type: SseType;
  /** Key-store key that sealed the object key (SSE-S3, SSE-KMS). */
  keyId?: string;
  /** SSE-KMS encryption context as the client gave it (base64 JSON). */
  context?: string;
}

export type RetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

export interface ObjectLockInfo {
  mode?: RetentionMode;
  retainUntil?: Date;
  legalHold?: 'ON' | 'OFF';
}

/** Object-lock settings asked for on a new version (PUT, copy, multipart). */
export interface ObjectLockRequest {
  mode?: RetentionMode;
  /** Unix ms; with `mode`. */
  retainUntil?: number;
  legalHold?: 'ON' | 'OFF';
}

export interface BucketInfo {
  name: string;
  created: Date;
}

/** Per-bucket configuration held by the object layer (quorum-written under `.svc.sys`). */
export interface BucketMetadata {
  name: string;
  created: Date;
  versioning: VersioningStatus;
  /** URL-encoded tag set, '' when none. */
  tags: string;
  /** Location constraint given at creation ('' = default region). */
  location: string;
}

/**
 * Kinds of per-bucket configuration documents (`getBucketConfig` /
 * `setBucketConfig`). The object layer stores each as opaque bytes in the
 * bucket's metadata record; the edge that owns a kind parses and validates it.
 */
export const BUCKET_CONFIG_KINDS = [
  'policy',
  'acl',
  'cors',
  'ownership',
  'public-access-block',
  'lifecycle',
  'object-lock',
  'encryption',
  'notification',
  'quota',
  'replication',
  'replication-targets',
] as const;
export type BucketConfigKind = (typeof BUCKET_CONFIG_KINDS)[number];

/**
 * A body to store. The edge wraps the socket with chunk decoding, signature
 * and checksum verification; iteration throws (an SvcError such as BadDigest,
 * XAmzContentSHA256Mismatch, SignatureDoesNotMatch, IncompleteBody) when the
 * content fails a check, at the latest on the final chunk, so the object layer
 * sees the failure before it commits.
 */
export interface PutData {
  readonly stream: AsyncIterable<Uint8Array>;
  /** Exact decoded size when known, -1 otherwise. */
  readonly size: number;
  /** Hex MD5 of the body; valid once `stream` is fully consumed. */
  md5Hex(): string;
  /** Checksum verified (or computed on request) over the body; valid once consumed. */
  checksum(): ObjectChecksum | undefined;
}

export interface Preconditions {
  ifMatch?: string;
  ifNoneMatch?: string;
  ifModifiedSince?: Date;
  ifUnmodifiedSince?: Date;
}

export interface PutObjectOptions {
  storageClass?: StorageClass;
  contentHeaders?: ContentHeaders;
  userMeta?: Record<string, string>;
  tags?: string;
  /** Conditional write: `If-None-Match: *` / `If-Match: <etag>` checked under the namespace lock. */
  preconditions?: Preconditions;
  /** Access control list to store with the version (opaque to the object layer, see `ObjectInfo.acl`). */
  acl?: string;
  /** Internal use by copy / data movement: keep this mod time and version id. */
  modTime?: Date;
  versionId?: string;
  /** Encryption asked for; without it the bucket's default encryption applies. */
  sse?: SseRequest;
  /** Retention and legal hold asked for; without a retention the bucket's default retention applies. */
  lock?: ObjectLockRequest;
  /** The request behind the write (post-commit consumers: bucket events). */
  origin?: ChangeOrigin;
  /**
   * Written by replication from another site (with its `versionId` and
   * `modTime`): recorded as a replica and never replicated again.
   */
  replica?: boolean;
}

export interface GetObjectOptions {
  versionId?: string;
  /** Inclusive byte range, already resolved against the object size by the caller via `resolveRange`. */
  range?: ByteRange;
  partNumber?: number;
  preconditions?: Preconditions;
  /** The client's key for an SSE-C version. */
  sseCustomerKey?: Uint8Array;
  /**
   * The caller can consume `GetObjectResult.chunks`: chunks read into two
   * buffers per shard reader that are refilled in turn, instead of a fresh
   * buffer per read, so a long GET leaves no garbage for the collector
   * (which otherwise lets about 64 MiB of dead read buffers pile up before
   * it runs). Versions stored in shard files come this way (an encrypted
   * one decrypted in those buffers); an inline one still comes as `body`
   * alone.
   */
  reuseBuffers?: boolean;
  /**
   * Called with the version's info once it is resolved (range and part
   * checked), under the read lock and before any of its data is read: a
   * throw ends the GET with nothing read (an S3 GET's conditional headers,
   * whose 304 needs the info it was handed).
   */
  check?: (info: ObjectInfo) => void;
}

/** A byte range request as sent: `bytes=a-b`, `bytes=a-`, `bytes=-n`. */
export type ByteRange = { start: number; end?: number } | { suffix: number };

export interface GetObjectResult {
  info: ObjectInfo;
  /** Inclusive resolved range served, or undefined for the whole object. */
  range?: { start: number; end: number };
  body: Readable;
  /**
   * Only with `reuseBuffers`, and then the data is read from here, not from
   * `body`: each chunk is valid until the next one is pulled, so finish with
   * it (e.g. wait for its socket write to complete) before asking for more.
   * Iterating to the end or stopping early releases the read lock, as
   * destroying the unread `body` does. An inline version's bytes come as an
   * array of views of its metadata, verified, the read lock already released.
   */
  chunks?: AsyncIterable<Uint8Array> | readonly Uint8Array[];
}

export interface DeleteObjectOptions {
  versionId?: string;
  preconditions?: Preconditions;
  /** The request may remove versions under GOVERNANCE retention (header and permission checked by the edge). */
  bypassGovernance?: boolean;
  /** The request behind the delete (post-commit consumers: bucket events). */
  origin?: ChangeOrigin;
  /**
   * A delete made by replication from another site: never replicated again.
   * Without `versionId`, the delete marker takes `markerVersionId` and
   * `modTime` (the source's), so both sites hold the same marker.
   */
  replica?: { markerVersionId?: string; modTime?: number };
}

/** A change of a version's object lock (PutObjectRetention, PutObjectLegalHold). */
export interface ObjectLockChange {
  versionId?: string;
  /** New retention; null removes it; undefined leaves it. */
  retention?: { mode: RetentionMode; retainUntil: number } | null;
  legalHold?: 'ON' | 'OFF';
  bypassGovernance?: boolean;
}

export interface DeleteObjectResult {
  /** The version id removed or the delete marker's id. */
  versionId?: string;
  deleteMarker: boolean;
}

export interface ListObjectsOptions {
  prefix?: string;
  delimiter?: string;
  /** Exclusive start key (v1 marker / v2 start-after / decoded continuation token). */
  marker?: string;
  maxKeys: number;
}

export interface ListObjectsResult {
  objects: ObjectInfo[];
  prefixes: string[];
  isTruncated: boolean;
  /** Last key or prefix returned, for the next page. */
  nextMarker?: string;
}

export interface ListVersionsOptions {
  prefix?: string;
  delimiter?: string;
  keyMarker?: string;
  versionIdMarker?: string;
  maxKeys: number;
}

export interface ListVersionsResult {
  /** Objects and delete markers, key ascending, versions newest first. */
  versions: ObjectInfo[];
  prefixes: string[];
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextVersionIdMarker?: string;
}

export interface MultipartUploadInfo {
  bucket: string;
  name: string;
  uploadId: string;
  initiated: Date;
  storageClass: StorageClass;
  checksumAlgorithm?: ChecksumAlgorithm;
  checksumType?: ChecksumType;
  /** Encryption of the upload (every part is encrypted with the upload's object key). */
  sse?: SseInfo;
}

export interface NewMultipartOptions extends PutObjectOptions {
  checksumAlgorithm?: ChecksumAlgorithm;
  checksumType?: ChecksumType;
}

export interface CompletePart {
  number: number;
  etag: string;
  checksum?: string;
}

export interface ListPartsResult {
  parts: PartInfo[];
  isTruncated: boolean;
  nextPartNumberMarker: number;
  upload: MultipartUploadInfo;
}

export interface ListUploadsOptions {
  prefix?: string;
  delimiter?: string;
  keyMarker?: string;
  uploadIdMarker?: string;
  maxUploads: number;
}

export interface ListUploadsResult {
  uploads: MultipartUploadInfo[];
  prefixes: string[];
  isTruncated: boolean;
  nextKeyMarker?: string;
  nextUploadIdMarker?: string;
}

/** Capacity of one drive, for the admin API and pool choice. */
export interface DriveCapacity {
  endpoint: string;
  pool: number;
  set: number;
  slot: number;
  online: boolean;
  total: number;
  used: number;
  free: number;
}

export interface PoolCapacity {
  pool: number;
  /** Raw bytes over online drives. */
  rawTotal: number;
  rawFree: number;
  /** Usable ≈ raw × K/N at the pool's STANDARD parity. */
  usableTotal: number;
  usableFree: number;
  drives: DriveCapacity[];
}

/** Health of the storage layer, for readiness. */
export interface StorageHealth {
  /** Every set has at least read quorum of drives online. */
  readQuorum: boolean;
  /** Every set has at least write quorum of drives online. */
  writeQuorum: boolean;
  onlineDrives: number;
  totalDrives: number;
}

export interface ObjectLayer {
  // ---- buckets
  /** `objectLock`: the bucket is created with object lock enabled (and versioning on, for good). */
  makeBucket(bucket: string, opts?: { location?: string; objectLock?: boolean }): Promise<void>;
  getBucketInfo(bucket: string): Promise<BucketMetadata>;
  listBuckets(): Promise<BucketInfo[]>;
  deleteBucket(bucket: string, opts?: { force?: boolean }): Promise<void>;
  setBucketVersioning(bucket: string, status: 'Enabled' | 'Suspended'): Promise<void>;
  setBucketTags(bucket: string, tags: string): Promise<void>;
  /**
   * A configuration document of the bucket (`BucketConfigKind`), undefined
   * when none is set. NoSuchBucket when the bucket does not exist;
   * InvalidArgument for an unknown kind.
   */
  getBucketConfig(bucket: string, kind: string): Promise<Uint8Array | undefined>;
  /**
   * Sets a configuration document (undefined removes it), read-modify-write
   * of the bucket record under its lock; peers drop their cached copy.
   */
  setBucketConfig(bucket: string, kind: string, data: Uint8Array | undefined): Promise<void>;

  // ---- objects
  putObject(bucket: string, key: string, data: PutData, opts: PutObjectOptions): Promise<ObjectInfo>;
  getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult>;
  getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo>;
  deleteObject(bucket: string, key: string, opts: DeleteObjectOptions): Promise<DeleteObjectResult>;
  /** Replaces metadata/tags of an existing version in place (self-copy REPLACE, tagging APIs). */
  updateObjectMetadata(
    bucket: string,
    key: string,
    opts: { versionId?: string; userMeta?: Record<string, string>; contentHeaders?: ContentHeaders; tags?: string; acl?: string },
  ): Promise<ObjectInfo>;

  /**
   * Changes a version's retention or legal hold under the namespace lock
   * (a COMPLIANCE retention is never shortened; GOVERNANCE only with the bypass).
   */
  setObjectLock(bucket: string, key: string, change: ObjectLockChange): Promise<ObjectInfo>;

  // ---- listing
  listObjects(bucket: string, opts: ListObjectsOptions): Promise<ListObjectsResult>;
  listObjectVersions(bucket: string, opts: ListVersionsOptions): Promise<ListVersionsResult>;

  // ---- multipart
  newMultipartUpload(bucket: string, key: string, opts: NewMultipartOptions): Promise<MultipartUploadInfo>;
  /** `sseCustomerKey`: the client's key of an SSE-C upload (every part must give it). */
  putObjectPart(bucket: string, key: string, uploadId: string, partNumber: number, data: PutData, opts?: { sseCustomerKey?: Uint8Array }): Promise<PartInfo>;
  listObjectParts(
    bucket: string,
    key: string,
    uploadId: string,
    opts: { partNumberMarker?: number; maxParts: number },
  ): Promise<ListPartsResult>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
  completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: CompletePart[],
    /** `checksum`: the whole-object checksum (composite `-N` or full-object) the edge computed from the parts' checksums; `origin`: the request. */
    opts?: { preconditions?: Preconditions; checksum?: ObjectChecksum; origin?: ChangeOrigin },
  ): Promise<ObjectInfo>;
  listMultipartUploads(bucket: string, opts: ListUploadsOptions): Promise<ListUploadsResult>;

  // ---- operations
  capacity(): Promise<PoolCapacity[]>;
  health(): StorageHealth;
  close(): Promise<void>;
}
