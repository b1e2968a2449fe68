/**
 * Object reads: HEAD (`getObjectInfo`) and GET (`getObject`), ranged, by
 * part number, and decrypted where the version is encrypted. Each read
 * runs under the key's read lock; a GET holds it until its body closes.
 */
import { Readable } from 'node:stream';
import { objectPath } from '../storage/object-path.ts';
import { SvcError } from '../util/errors.ts';
import type { Governance } from './governance.ts';
import type { NamespaceLocker } from './ns-lock.ts';
import { toObjectInfo } from './object-info.ts';
import { checkPreconditions } from './preconditions.ts';
import type { Located, Pools } from './pools.ts';
import { resolveRange } from './range.ts';
import { decryptRange, type ObjectKey, openObjectKey } from './sse.ts';
import type { BucketMetadata, GetObjectOptions, GetObjectResult, ObjectInfo } from './types.ts';

export interface ObjectReadsOptions {
  pools: Pools;
  locker: NamespaceLocker;
  governance: Governance;
  /** The bucket's metadata (NoSuchBucket when absent). */
  bucketInfo: (bucket: string) => Promise<BucketMetadata>;
}

export class ObjectReads {
  readonly #pools: Pools;
  readonly #locker: NamespaceLocker;
  readonly #gov: Governance;
  readonly #bucketInfo: ObjectReadsOptions['bucketInfo'];

  constructor(opts: ObjectReadsOptions) {
    this.#pools = opts.pools;
    this.#locker = opts.locker;
    this.#gov = opts.governance;
    this.#bucketInfo = opts.bucketInfo;
  }

  /** The version a read serves (the caller holds the key's read lock). */
  async #locateForRead(bucket: string, key: string, opts: GetObjectOptions): Promise<Located> {
    const loc = await this.#pools.locate(bucket, key, opts.versionId);
    if (!loc) throw new SvcError(opts.versionId !== undefined ? 'NoSuchVersion' : 'NoSuchKey');
    if (loc.group.version.type === 'delete') {
      // The edge answers with `x-amz-delete-marker: true` and the marker's version id.
      throw new SvcError(opts.versionId !== undefined ? 'MethodNotAllowed' : 'NoSuchKey', undefined, {
        deleteMarker: true,
        versionId: loc.group.version.versionId,
      });
    }
    return loc;
  }

  async #getLocated(bucket: string, key: string, opts: GetObjectOptions): Promise<Located> {
    await this.#bucketInfo(bucket);
    const unlock = await this.#locker.rlock(bucket, key);
    try {
      return await this.#locateForRead(bucket, key, opts);
    } finally {
      unlock();
    }
  }

  async getObjectInfo(bucket: string, key: string, opts: GetObjectOptions): Promise<ObjectInfo> {
    const loc = await this.#getLocated(bucket, key, opts);
    // A client key is checked when given (HEAD of an SSE-C object); the edge decides where one is required.
    if (opts.sseCustomerKey !== undefined) openObjectKey(loc.group.version.sysMeta, this.#gov.kms, opts.sseCustomerKey, bucket, key);
    const info = toObjectInfo(bucket, key, loc.group.version, await this.#isLatest(loc, bucket, key, opts));
    checkPreconditions(opts.preconditions, info.etag, info.modTime);
    return info;
  }

  async #isLatest(loc: Located, bucket: string, key: string, opts: GetObjectOptions): Promise<boolean> {
    if (opts.versionId === undefined) return true;
    const latest = await this.#pools.locate(bucket, key).catch(() => undefined);
    return latest?.group.version.versionId === loc.group.version.versionId;
  }

  /**
   * Streams a version. The key's read lock is held until the body closes
   * (ended, failed or destroyed), so nothing that takes the write lock (an
   * overwrite, a delete, data movement) removes the data under a reader.
   */
  async getObject(bucket: string, key: string, opts: GetObjectOptions): Promise<GetObjectResult> {
    await this.#bucketInfo(bucket);
    const unlock = await this.#locker.rlock(bucket, key);
    let handedOver = false;
    try {
      const loc = await this.#locateForRead(bucket, key, opts);
      const v = loc.group.version;
      const objectKey = openObjectKey(v.sysMeta, this.#gov.kms, opts.sseCustomerKey, bucket, key);
      const info = toObjectInfo(bucket, key, v, await this.#isLatest(loc, bucket, key, opts));
      checkPreconditions(opts.preconditions, info.etag, info.modTime);
      // Ranges are in plaintext bytes (`info` sizes); an encrypted version maps them onto its packages.
      let start = 0;
      let end = info.size - 1;
      let ranged = false;
      if (opts.partNumber !== undefined) {
        const idx = info.parts.findIndex((p) => p.number === opts.partNumber);
        if (idx < 0) throw new SvcError('InvalidRange', 'no such part', { partNumber: opts.partNumber });
        start = info.parts.slice(0, idx).reduce((a, p) => a + p.size, 0);
        end = start + info.parts[idx]!.size - 1;
        ranged = true;
      }
      if (opts.range) {
        const r = resolveRange(opts.range, info.size);
        start = r.start;
        end = r.end;
        ranged = true;
      }
      const length = Math.max(0, end - start + 1);
      opts.check?.(info);
      const path = objectPath(key);
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        unlock();
      };
      // An inline version's bytes are in the metadata just read: verified and sliced here, in one
      // piece, with no stream; the read lock goes at once (nothing is left to read from a drive).
      const inline = opts.reuseBuffers === true && !objectKey ? loc.set.readInline(loc.group, start, length) : undefined;
      if (inline !== undefined) {
        release();
        handedOver = true;
        const body = new Readable({ read() {} });
        return { info, ...(ranged ? { range: { start, end } } : {}), body, chunks: inline };
      }
      const reuse = opts.reuseBuffers === true && !loc.group.version.inline;
      const range = objectKey ? this.#decrypted(loc, path, objectKey, start, length, bucket, key, reuse) : loc.set.readRange(bucket, path, loc.group, start, length, bucket, key, { reuse });
      // The first block is read (K shards verified, decoded if need be) before
      // the caller sees the result: a read below quorum fails here, while the
      // S3 edge can still answer with a status instead of a cut connection.
      const src = await primed(range);
      // Cancelling the read closes its shard streams. Through `src` alone that fails while nothing
      // has been taken from it yet (a 304 or 412, an error before the body is written): the
      // return() of an unstarted generator runs no `finally`, so the read's own generator (started
      // by `primed`) is returned too; the file handles then close now, not at a garbage collection.
      const cancel = (): void => {
        void range.return(undefined).catch(() => undefined);
      };
      // The S3 GET reads `chunks` for inline versions too: one write of the inline bytes instead of
      // a Readable and a stream pipeline (its AbortController and end-of-stream listeners) per request.
      if (opts.reuseBuffers === true) {
        // The caller reads `chunks`; `body` only cancels (an unstarted generator runs no finally).
        const chunks = (async function* () {
          try {
            yield* src;
          } finally {
            release();
          }
        })();
        const body = new Readable({ read() {} });
        body.once('close', () => {
          release();
          void chunks.return(undefined);
          cancel();
        });
        handedOver = true;
        return { info, ...(ranged ? { range: { start, end } } : {}), body, chunks };
      }
      const body = Readable.from(src, { objectMode: false });
      body.once('close', () => {
        release();
        cancel();
      });
      handedOver = true;
      return ranged ? { info, range: { start, end }, body } : { info, body };
    } finally {
      if (!handedOver) unlock();
    }
  }

  /** Plaintext bytes [start, start+length) of an encrypted version: only the packages covering them are read. */
  #decrypted(loc: Located, path: string, k: ObjectKey, start: number, length: number, bucket: string, key: string, reuse: boolean): AsyncGenerator<Uint8Array> {
    const v = loc.group.version;
    const partStarts: number[] = [];
    let at = 0;
    for (const p of v.parts) {
      partStarts.push(at);
      at += p.size;
    }
    // Shard-file reads hand out chunks that are this read's own (fresh, or
    // with `reuse` its reused buffers, each done with before the next is
    // read), decrypted where they lie; inline data is a view of the
    // version's metadata and is left alone.
    return decryptRange(k, v, start, length, (i, off, len) => loc.set.readRange(bucket, path, loc.group, partStarts[i]! + off, len, bucket, key, { reuse }), !v.inline);
  }
}


/**
 * Pulls the first chunk of `src` now (its errors throw here) and returns a
 * generator that yields it, then the rest. The chunk is held, not copied:
 * with reused read buffers it stays valid until the next pull, which comes
 * after it was handed out.
 */
async function primed(src: AsyncGenerator<Uint8Array>): Promise<AsyncGenerator<Uint8Array>> {
  let first: IteratorResult<Uint8Array>;
  try {
    first = await src.next();
  } catch (err) {
    await src.return(undefined).catch(() => undefined);
    throw err;
  }
  return (async function* () {
    try {
      if (first.done === true) return;
      yield first.value;
      yield* src;
    } finally {
      await src.return(undefined);
    }
  })();
}
