/**
 * One erasure set: N drives holding K data + M parity shards of each object.
 * Implements the quorum-bound primitives (stream-encode to staging, commit,
 * undo, metadata vote, verified/decoded reads, majority deletes); versioning,
 * buckets and listing are composed on top in `server-pools.ts`.
 */
import { randomUUID } from 'node:crypto';
import {
  BITROT_HASH_SIZE,
  BitrotVerifier,
  BLOCK_SIZE,
  BufferPool,
  createCodec,
  decodeStripe,
  encodeFilledFramedStripe,
  fillFramedStripe,
  type FrameLayout,
  frameStride,
  frameRange,
  frameShardFileSize,
  framedStripeBufferSize,
  shardFileDataSize,
  shardSize,
  verifyShardStream,
} from '../erasure/index.ts';
import { type Drive, type FileVersion, type PartRecord, type RenameDataResult, SHARD_PAGE, SYS_VOL, TMP_DIR } from '../storage/drive.ts';
import { decodeXlMeta } from '../storage/xl-meta.ts';
import { hasCode, SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import type { MrfQueue } from './mrf.ts';
import { majority, type Resolution, resolveVersion, type SlotMeta, type VersionGroup, writeQuorum } from './quorum.ts';
import { ShardPipe } from './shard-pipe.ts';
import { ShardReaders } from './shard-readers.ts';

export interface SetOptions {
  pool: number;
  set: number;
  drives: Drive[];
  logger: Logger;
  mrf: MrfQueue;
}

/** Shards of one stream staged on the drives (files under tmp, or inline in memory). */
export interface StagedShards {
  size: number;
  /** Shard data bytes per drive (unframed). */
  shardBytes: number;
  inline: boolean;
  /** Per slot: this drive's framed shard, for inline objects. */
  inlineData: Uint8Array[];
  /** Per slot: the drive holds a verified shard. */
  alive: boolean[];
  /** Staging dir (relative to SYS_VOL) holding `<dataDir>/part.N` on every alive drive. */
  stagePath: string;
  dataDir: string;
}

export interface EncodeSpec {
  data: number;
  parity: number;
  distribution: number[];
  /** Per-shard inline budget in bytes (0: never inline). */
  inlineBudget: number;
  /** Part number of the shard files (1 for a plain PUT). */
  partNumber: number;
  /** Data dir name to stage into (a fresh UUID for a PUT). */
  dataDir: string;
  /**
   * Heal of an inline version: encode for these slots only (the drives
   * being rebuilt); success needs one of them. Default: every drive, at the
   * write quorum.
   */
  only?: readonly number[];
  /**
   * Staging dir to write into (default: a fresh `tmp/<uuid>`). Several parts
   * of one object (multipart, a healed version) are staged into one dir and
   * committed together.
   */
  stagePath?: string;
}

/** What a read found wrong with some shards (`readRange`'s `onBadShards`). */
export type BadShardReason = 'read-missing' | 'read-bitrot';

async function settle<T>(ps: Promise<T>[]): Promise<({ ok: true; value: T } | { ok: false; error: unknown })[]> {
  const rs = await Promise.allSettled(ps);
  return rs.map((r) => (r.status === 'fulfilled' ? { ok: true as const, value: r.value } : { ok: false as const, error: r.reason }));
}

/**
 * The error of a write that fell below its quorum, from what the drives
 * that failed said: a key no drive may hold is the client's
 * (`XSvcObjectNameReserved`, 400); drives that are full, when without them
 * the write would have had its quorum, make it `XSvcStorageFull` (507:
 * retrying does not help until space is freed); anything else is
 * `ErasureWriteQuorum` (503, retry later: drives away).
 */
export function writeQuorumError(errors: readonly unknown[], ok: number, needed: number, details: Record<string, unknown> = {}): SvcError {
  const reserved = errors.find((e) => hasCode(e, 'XSvcObjectNameReserved'));
  if (reserved !== undefined) return reserved as SvcError;
  const full = errors.filter((e) => hasCode(e, 'XSvcStorageFull')).length;
  if (full > 0 && ok + full >= needed) {
    return new SvcError('XSvcStorageFull', `${full} drive(s) of the erasure set are full; the write needs ${needed} and ${ok} others took it`, { ...details, ok, full, needed });
  }
  return new SvcError('ErasureWriteQuorum', undefined, { ...details, ok, needed, errors: errors.filter((e) => e !== undefined).map(String) });
}

/** Least wait for the stragglers of an early metadata read once half the set answered. */
const EARLY_GRACE_MS = 150;

/**
 * Like `settle`, but once `need` calls answered (fulfilled, or rejected with
 * an error `isAnswer` accepts: "not here" is an answer, a failure is not),
 * the others get twice as long as that took (at least `minGraceMs`) before
 * they count as failed (`DiskNotFound`: too slow). Their promises keep
 * running; their results are ignored.
 */
async function settleEarly<T>(
  ps: Promise<T>[],
  need: number,
  minGraceMs: number,
  isAnswer: (err: unknown) => boolean,
): Promise<({ ok: true; value: T } | { ok: false; error: unknown })[]> {
  type R = { ok: true; value: T } | { ok: false; error: unknown };
  const out: (R | undefined)[] = new Array(ps.length).fill(undefined);
  const started = performance.now();
  let done = 0;
  let answered = 0;
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      if (timer !== undefined) clearTimeout(timer);
      resolve(out.map((r) => r ?? { ok: false, error: new SvcError('DiskNotFound', 'drive too slow: its answer came after the others had decided') }));
    };
    ps.forEach((p, i) => {
      p.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ).then((r) => {
        if (done < 0) return;
        out[i] = r;
        done++;
        if (r.ok || isAnswer(r.error)) answered++;
        if (done === ps.length) {
          done = -1;
          finish();
        } else if (answered >= need && timer === undefined) {
          timer = setTimeout(
            () => {
              done = -1;
              finish();
            },
            Math.max(minGraceMs, 2 * (performance.now() - started)),
          );
        }
      });
    });
  });
}

/** Shard bytes per drive a PUT groups into one buffer (one O_DIRECT write each; see stageShards). */
const GROUP_SHARD_BYTES = 2 << 20;
/** Largest group buffer (all N drives' shard bytes): bounds a PUT's memory (about three in flight). */
const GROUP_BUFFER_BYTES = 8 << 20;
/**
 * Frame buffers a pool keeps free, in bytes (at least two, at most 16 buffers): enough for four
 * concurrent PUTs' group buffers to cycle through the free list. With 3 kept, a fresh 8 MiB buffer
 * was allocated every few blocks, and its pages faulted in and the external memory it adds
 * started V8 mark-compacts (about 5 % of the PUT's CPU in `perf`).
 */
const FRAME_POOL_FREE_BYTES = 64 << 20;

/** Shared frame buffers per stripe size (bounded free lists; see BufferPool); the heal's shard rebuild uses them too. */
const framePools = new Map<string, BufferPool>();
export function framePool(size: number, align = 0): BufferPool {
  const key = `${size}/${align}`;
  let p = framePools.get(key);
  if (p === undefined) {
    p = new BufferPool(size, Math.max(2, Math.min(16, Math.floor(FRAME_POOL_FREE_BYTES / size))), align);
    framePools.set(key, p);
  }
  return p;
}

export class ErasureSet {
  readonly pool: number;
  readonly index: number;
  readonly drives: Drive[];
  readonly #log: Logger;
  readonly #mrf: MrfQueue;

  constructor(opts: SetOptions) {
    this.pool = opts.pool;
    this.index = opts.set;
    this.drives = opts.drives;
    this.#log = opts.logger;
    this.#mrf = opts.mrf;
  }

  get width(): number {
    return this.drives.length;
  }

  enqueueMrf(bucket: string, object: string, versionId: string, reason: string, slots: number[]): void {
    if (slots.length === 0) return;
    this.#mrf.enqueue({ bucket, object, versionId, pool: this.pool, set: this.index, reason, slots });
    this.#log.debug({ event: 'mrf_enqueue', bucket, object, versionId, reason, slots }, 'queued for heal');
  }

  // ---- metadata

  /**
   * xl.meta journal of `path` from every drive. With `early`, a drive that
   * has not answered a while after half the set did (twice as long as that
   * took, at least `EARLY_GRACE_MS`) counts as failed: the vote treats it
   * like an offline drive (never a wrong answer, at worst a quorum error),
   * and a hung peer does not hold a read that the others can decide.
   */
  async readMetas(vol: string, path: string, withData = true, early = false): Promise<SlotMeta[]> {
    const calls = this.drives.map((d) => d.readXlMeta(vol, path));
    const rs = early ? await settleEarly(calls, Math.ceil(this.width / 2), EARLY_GRACE_MS, (err) => hasCode(err, 'FileNotFound') || hasCode(err, 'VolumeNotFound')) : await settle(calls);
    return rs.map((r): SlotMeta => {
      if (!r.ok) {
        if (hasCode(r.error, 'VolumeNotFound')) return { ok: false, notFound: true, noVolume: true, error: r.error };
        return { ok: false, notFound: hasCode(r.error, 'FileNotFound'), error: r.error };
      }
      try {
        return { ok: true, versions: decodeXlMeta(r.value, withData) };
      } catch (err) {
        return { ok: false, notFound: false, error: err };
      }
    });
  }

  /** Authoritative version of an object (latest or `versionId`) by read-quorum vote; drives far slower than the rest count as failed. */
  async resolve(vol: string, path: string, versionId?: string): Promise<{ res: Resolution; metas: SlotMeta[] }> {
    const metas = await this.readMetas(vol, path, true, true);
    return { res: resolveVersion(metas, versionId), metas };
  }

  // ---- write

  /**
   * Streams `source` into K+M shards: inline (kept in memory) when every
   * shard fits `inlineBudget`, otherwise framed shard files written in
   * parallel to `SYS_VOL/tmp/<uuid>/<dataDir>/part.N` on every drive, each
   * fsync'd once and verified against its bitrot hashes. Throws
   * ErasureWriteQuorum (after removing the staging) when fewer than write
   * quorum drives hold a good shard; rethrows a failing source the same way.
   */
  async stageShards(source: AsyncIterable<Uint8Array>, size: number, spec: EncodeSpec): Promise<StagedShards> {
    const n = this.width;
    const { data: k, parity: m, distribution: dist } = spec;
    const wq = spec.only ? 1 : writeQuorum(k, m);
    const codec = createCodec(k, m);
    const fullShard = shardSize(BLOCK_SIZE, k);
    // Up to `group` consecutive blocks share one pooled buffer: each drive's frames back to back
    // in a region of it, as they will lie in its shard file and at the page offset they will
    // have there (SHARD_PAGE), so a drive writing with O_DIRECT hands the region's whole pages to
    // the kernel where they lie (about 2 MiB a write) instead of copying them into aligned
    // staging. Regions are whole pages apart, so all N shards of a block share their offsets
    // within a page; past 8 shards the codec's streams would contend for the same cache sets
    // (PERFORMANCE.md), and wider sets keep one block per buffer in the encoder's layout (their
    // drives copy the frames into staging).
    //
    // An object of known size below one block is one short block: it is filled and encoded in a
    // buffer of its own size, in the encoder's layout (no pooled group buffer per small PUT).
    const small = size >= 0 && size < BLOCK_SIZE;
    const blockSize = small ? size : BLOCK_SIZE;
    const blockShard = shardSize(blockSize, k);
    const frameLen = BITROT_HASH_SIZE + blockShard;
    const paged = n <= 8 && !small;
    const group = paged ? Math.max(1, Math.min(Math.round(GROUP_SHARD_BYTES / fullShard), Math.floor(GROUP_BUFFER_BYTES / (n * fullShard)))) : 1;
    const region = paged ? Math.ceil((group * frameLen + SHARD_PAGE - 1) / SHARD_PAGE) * SHARD_PAGE : frameStride(blockShard);
    const pool = small ? undefined : paged ? framePool(n * region, SHARD_PAGE) : framePool(framedStripeBufferSize(codec, BLOCK_SIZE));
    const acquire = (): Buffer => pool?.acquire() ?? Buffer.allocUnsafe(framedStripeBufferSize(codec, blockSize));
    const release = (b: Buffer): void => pool?.release(b);
    const stagePath = spec.stagePath ?? `${TMP_DIR}/${randomUUID()}`;
    const filePath = `${stagePath}/${spec.dataDir}/part.${spec.partNumber}`;
    // Every drive is tried (a drive that came back is used again); a failing
    // one drops out of this write.
    const alive = new Array<boolean>(n).fill(spec.only === undefined);
    for (const s of spec.only ?? []) alive[s] = true;
    const countAlive = () => alive.reduce((a, b) => a + (b ? 1 : 0), 0);

    // Inline candidates are buffered until they outgrow the budget.
    let buffering = spec.inlineBudget > 0 && (size < 0 || shardFileDataSize(size, BLOCK_SIZE, k) <= spec.inlineBudget);
    const buffered: Uint8Array[][] = Array.from({ length: n }, () => []);
    let shardBytes = 0;
    let total = 0;
    let pipes: ShardPipe[] | undefined;
    /** The group's buffer, the number of its first block, its blocks so far and their frame bytes per drive. */
    let buf: Buffer | undefined;
    let groupFirst = 0;
    let inGroup = 0;
    let groupLen = 0;
    /** Blocks encoded so far; bytes of the block being filled. */
    let blockNo = 0;
    let fill = 0;
    /** Where the group's frames start in each region: their file offset's place within a page. */
    const groupOffset = () => (paged ? (groupFirst * frameLen) % SHARD_PAGE : 0);
    const layout = (): FrameLayout => ({ offset: groupOffset() + groupLen, stride: region });
    let writes: Promise<void>[] = [];
    const errors: unknown[] = new Array(n);

    const startWriters = async () => {
      // About four blocks queued per drive, whatever the group size.
      const ps = Array.from({ length: n }, () => new ShardPipe(Math.max(1, Math.round(4 / group))));
      pipes = ps;
      const framed = size >= 0 ? frameShardFileSize(shardFileDataSize(size, BLOCK_SIZE, k), fullShard) : -1;
      writes = this.drives.map(async (d, s) => {
        if (!alive[s]) return;
        try {
          await d.createFile(SYS_VOL, filePath, framed, ps[s]!, { frameBlockSize: fullShard });
        } catch (err) {
          alive[s] = false;
          errors[s] = err;
          ps[s]!.markDead();
        }
      });
      for (let s = 0; s < n; s++) {
        for (const f of buffered[s]!) await ps[s]!.push(f);
        buffered[s] = [];
      }
    };
    const abort = async (err: unknown): Promise<never> => {
      if (pipes) for (const p of pipes) p.fail(err);
      await Promise.all(writes);
      await this.discardStage(stagePath);
      throw err;
    };

    try {
      if (!buffering) await startWriters();
      // The arriving pieces are copied straight into the data shards of their block's frames, and
      // the block is encoded there. A group's buffer goes back to the pool once every drive wrote
      // its region (bounded by pipe depth).
      const flush = async (): Promise<void> => {
        const b = buf!;
        const off = groupOffset();
        const chunks = dist.map((d) => b.subarray((d - 1) * region + off, (d - 1) * region + off + groupLen));
        buf = undefined;
        groupFirst = blockNo;
        inGroup = 0;
        groupLen = 0;
        let refs = countAlive();
        const done = () => {
          if (--refs === 0) release(b);
        };
        await Promise.all(pipes!.map((p, s) => (alive[s] ? p.push(chunks[s]!, done) : undefined)));
        if (countAlive() < wq) throw writeQuorumError(errors, countAlive(), wq);
      };
      const endBlock = async (blockLen: number, last: boolean): Promise<void> => {
        const framed = encodeFilledFramedStripe(codec, buf!, blockSize, blockLen, layout());
        blockNo++;
        total += blockLen;
        shardBytes += framed.shards[0]!.length;
        groupLen += framed.frames[0]!.length;
        inGroup++;
        if (buffering) {
          // Inline candidates are small: copy their frames out of the pooled buffer.
          for (let s = 0; s < n; s++) buffered[s]!.push(Buffer.from(framed.frames[dist[s]! - 1]!));
          release(buf!);
          buf = undefined;
          groupFirst = blockNo;
          inGroup = 0;
          groupLen = 0;
          if (shardBytes > spec.inlineBudget) {
            buffering = false;
            await startWriters();
          }
          return;
        }
        if (inGroup === group || last) await flush();
      };
      // Each piece is copied before the next is pulled (a source may refill its buffers).
      try {
        for await (const piece of source) {
          let pos = 0;
          while (pos < piece.length) {
            // A small object's one block is done: more bytes than declared.
            if (small && blockNo > 0) throw new SvcError('IncompleteBody', `expected ${size} bytes, got more`);
            buf ??= acquire();
            const take = Math.min(blockSize - fill, piece.length - pos);
            fillFramedStripe(codec, buf, blockSize, fill, piece.subarray(pos, pos + take), layout());
            fill += take;
            pos += take;
            if (fill === blockSize) {
              fill = 0;
              await endBlock(blockSize, false);
            }
          }
        }
        if (fill > 0) await endBlock(fill, true);
        else if (inGroup > 0) await flush();
      } finally {
        if (buf !== undefined) release(buf);
        buf = undefined;
      }
      if (size >= 0 && total !== size) throw new SvcError('IncompleteBody', `expected ${size} bytes, got ${total}`);
    } catch (err) {
      return abort(err);
    }

    if (buffering) {
      // Inline: each drive's framed shard goes into its xl.meta at commit.
      const inlineData = buffered.map((fs) => (fs.length === 1 ? fs[0]! : Buffer.concat(fs)));
      if (countAlive() < wq) throw writeQuorumError(errors, countAlive(), wq);
      return { size: total, shardBytes, inline: true, inlineData, alive, stagePath, dataDir: '' };
    }

    for (const p of pipes!) p.close();
    await Promise.all(writes);
    // Every just-written shard is checked against its bitrot hashes before commit.
    const verified = await settle(
      this.drives.map((d, s) => (alive[s] ? d.verifyFile(SYS_VOL, filePath, fullShard, shardBytes) : Promise.resolve())),
    );
    verified.forEach((r, s) => {
      if (!r.ok && alive[s]) {
        alive[s] = false;
        errors[s] = r.error;
        this.#log.warn({ event: 'shard_verify_failed', pool: this.pool, set: this.index, slot: s, err: r.error }, 'staged shard failed verification');
      }
    });
    if (countAlive() < wq) {
      await this.discardStage(stagePath);
      throw writeQuorumError(errors, countAlive(), wq);
    }
    return { size: total, shardBytes, inline: false, inlineData: [], alive, stagePath, dataDir: spec.dataDir };
  }

  /** Removes a staging dir from every drive (a write that will not commit); failures are logged. */
  async discardStage(stagePath: string): Promise<void> {
    await settle(
      this.drives.map((d) =>
        d.delete(SYS_VOL, stagePath, { recursive: true }).catch((err: unknown) => {
          if (!hasCode(err, 'FileNotFound') && !hasCode(err, 'DiskNotFound')) {
            this.#log.warn({ event: 'stage_cleanup_failed', stagePath, err }, 'staging cleanup failed');
          }
        }),
      ),
    );
  }

  /** Per-drive copy of a version: its shard index and inline shard. */
  #forSlot(v: FileVersion, slot: number, staged: StagedShards | undefined): FileVersion {
    const out: FileVersion = { ...v };
    if (v.erasure) out.erasure = { ...v.erasure, index: v.erasure.distribution[slot]! };
    if (staged?.inline) out.inlineData = staged.inlineData[slot]!;
    else delete out.inlineData;
    return out;
  }

  /*
   * Set-level commit. Crash points and what makes each safe:
   *  - before any renameData: only staging exists (swept at start); nothing visible.
   *  - after renameData on fewer than K drives: the new version cannot reach read
   *    quorum, so reads keep serving the previous state from the other drives;
   *    heal/scanner drops the stray version.
   *  - after renameData on ≥ K drives: the version is complete (K verified,
   *    fsync'd shards + metadata agree) and readable; drives that missed it
   *    are queued for heal.
   *  - after quorum, before commitRenameData: parked old data dirs stay in
   *    staging and are swept at the next start.
   * Below write quorum (without a crash) every successful rename is undone.
   */
  async commit(
    staged: StagedShards,
    version: FileVersion,
    dstVol: string,
    dstPath: string,
    bucket: string,
    object: string,
  ): Promise<void> {
    const n = this.width;
    const e = version.erasure;
    // Data versions need their write quorum; a delete marker, majority.
    const wq = e ? writeQuorum(e.data, e.parity) : majority(n);
    const results: (RenameDataResult | undefined)[] = new Array(n);
    const rs = await settle(
      this.drives.map(async (d, s) => {
        if (!staged.alive[s]) throw new SvcError('DiskNotFound', 'drive missed the staged write');
        const r = await d.renameData(SYS_VOL, staged.stagePath, this.#forSlot(version, s, staged), dstVol, dstPath);
        results[s] = r;
        return r;
      }),
    );
    const okSlots = rs.flatMap((r, s) => (r.ok ? [s] : []));
    if (okSlots.length < wq) {
      await settle(
        okSlots.map((s) =>
          this.drives[s]!.undoRenameData(SYS_VOL, staged.stagePath, this.#forSlot(version, s, staged), dstVol, dstPath, results[s]!.replaced),
        ),
      ).then((us) =>
        us.forEach((u, i) => {
          if (!u.ok) this.#log.error({ event: 'commit_undo_failed', slot: okSlots[i], err: u.error, bucket, object }, 'undo after failed commit failed');
        }),
      );
      throw writeQuorumError(
        rs.map((r) => (r.ok ? undefined : r.error)),
        okSlots.length,
        wq,
        { committed: okSlots.length },
      );
    }
    const failed = rs.flatMap((r, s) => (r.ok ? [] : [s]));
    this.enqueueMrf(bucket, object, version.versionId, 'write-partial', failed);
    // At quorum: staging is discarded, and the replaced version's superseded
    // copies (kept so a crash mid-commit never lost the previous state) are
    // dropped with their data. Failures here leave garbage, never a wrong object.
    await settle(
      this.drives.map(async (d, s) => {
        // Nothing was staged for a version without a data dir (inline, marker).
        const stage =
          staged.dataDir === ''
            ? Promise.resolve()
            : rs[s]!.ok
              ? d.commitRenameData(SYS_VOL, staged.stagePath)
              : d.delete(SYS_VOL, staged.stagePath, { recursive: true });
        const cleanup = stage.catch((err: unknown) => {
          if (!hasCode(err, 'FileNotFound') && !hasCode(err, 'DiskNotFound')) {
            this.#log.warn({ event: 'stage_cleanup_failed', slot: s, err }, 'staging cleanup failed');
          }
        });
        for (const id of (rs[s]!.ok && results[s]!.superseded) || []) {
          await d.deleteVersion(dstVol, dstPath, id).catch((err: unknown) => {
            if (!hasCode(err, 'FileNotFound')) {
              this.#log.warn({ event: 'superseded_cleanup_failed', bucket, object, slot: s, err }, 'superseded version cleanup failed');
            }
          });
        }
        await cleanup;
      }),
    );
  }

  /**
   * Writes a metadata-only version (delete marker) at majority quorum,
   * through the same commit as data: a version it replaces (the null version
   * of a suspended bucket) stays on each drive as a superseded copy, data
   * and all, until the marker has quorum, and is restored below it, so a
   * delete that fails never takes the object with it.
   */
  async writeMarker(vol: string, path: string, version: FileVersion, bucket: string, object: string): Promise<void> {
    const staged: StagedShards = {
      size: 0,
      shardBytes: 0,
      inline: false,
      inlineData: [],
      alive: new Array<boolean>(this.width).fill(true),
      stagePath: `${TMP_DIR}/${randomUUID()}`,
      dataDir: '',
    };
    await this.commit(staged, version, vol, path, bucket, object);
  }

  /** Rewrites metadata of an existing version at its write quorum. */
  async updateMetadata(vol: string, path: string, version: FileVersion, bucket: string, object: string): Promise<void> {
    const e = version.erasure;
    const wq = e ? writeQuorum(e.data, e.parity) : majority(this.width);
    const rs = await settle(this.drives.map((d) => d.writeMetadata(vol, path, version, { update: true })));
    const ok = rs.filter((r) => r.ok).length;
    if (ok < wq) throw writeQuorumError(rs.map((r) => (r.ok ? undefined : r.error)), ok, wq);
    this.enqueueMrf(bucket, object, version.versionId, 'write-partial', rs.flatMap((r, s) => (r.ok ? [] : [s])));
  }

  /**
   * Removes a version on every drive; succeeds at majority (a drive that
   * never had it counts as done). Returns false when no drive had it.
   * `metas`: the journals just read under the same lock (skips a re-read).
   */
  async deleteVersion(vol: string, path: string, versionId: string, bucket: string, object: string, metas?: SlotMeta[]): Promise<boolean> {
    // A version delete cannot be undone, so it starts only when a majority of
    // drives answers: with too many offline it is refused up front and
    // changes nothing (a drive failing mid-delete can still leave it partial).
    const need = majority(this.width);
    const reachable = (metas ?? (await this.readMetas(vol, path, false))).filter(
      (m) => m.ok || m.notFound,
    ).length;
    if (reachable < need) throw new SvcError('ErasureWriteQuorum', undefined, { reachable, needed: need });
    const rs = await settle(this.drives.map((d) => d.deleteVersion(vol, path, versionId)));
    let ok = 0;
    let found = 0;
    const failed: number[] = [];
    rs.forEach((r, s) => {
      if (r.ok) {
        ok++;
        found++;
      } else if (hasCode(r.error, 'FileNotFound')) ok++;
      else failed.push(s);
    });
    if (ok < majority(this.width)) throw new SvcError('ErasureWriteQuorum', undefined, { ok, needed: majority(this.width) });
    this.enqueueMrf(bucket, object, versionId, 'delete-partial', failed);
    return found > 0;
  }

  // ---- read

  /**
   * Bytes [start, start+length) of an inline version at once, as views of
   * the metadata already read (`readRange`'s answer without a stream): every
   * drive holds the version and the K data shards of each block pass their
   * bitrot check. Anything else (a drive without the version, a shard that
   * fails its hash, a version that is not inline) returns undefined and the
   * caller reads through `readRange`, which fails over, decodes, reports to
   * the MRF queue and throws exactly as it always does.
   */
  readInline(group: VersionGroup, start: number, length: number): Uint8Array[] | undefined {
    const v = group.version;
    const e = v.erasure;
    if (!v.inline || e === undefined) return undefined;
    const n = this.width;
    const k = e.data;
    for (let s = 0; s < n; s++) if (group.perSlot[s]?.inlineData === undefined) return undefined;
    const fullShard = shardSize(e.blockSize, k);
    const out: Uint8Array[] = [];
    for (const { part, from, to, b0, b1, range, rangeData } of partWindows(v.parts, start, length, e.blockSize, k)) {
      // Data shard i's verified blocks b0..b1 (the slot holding shard i+1 by the distribution).
      const data: Uint8Array[][] = [];
      for (let i = 0; i < k; i++) {
        const slot = e.distribution.indexOf(i + 1);
        const inl = group.perSlot[slot]!.inlineData!;
        try {
          const check = new BitrotVerifier(fullShard, rangeData, b0);
          data.push(check.push(inl.subarray(range.offset, range.offset + range.length)));
          check.end();
        } catch (err) {
          if (hasCode(err, 'FileCorrupt')) return undefined;
          throw err;
        }
      }
      for (let b = b0; b <= b1; b++) {
        const blockLen = Math.min(e.blockSize, part.size - b * e.blockSize);
        const sLen = shardSize(blockLen, k);
        const blockStart = b * e.blockSize;
        const sliceFrom = Math.max(from, blockStart) - blockStart;
        const sliceTo = Math.min(to, blockStart + blockLen) - blockStart;
        // Systematic code: the data shards are the block.
        for (let i = 0; i < k; i++) {
          const lo = Math.max(sliceFrom, i * sLen);
          const hi = Math.min(sliceTo, (i + 1) * sLen);
          if (hi > lo) out.push(data[i]![b - b0]!.subarray(lo - i * sLen, hi - i * sLen));
        }
      }
    }
    return out;
  }

  /**
   * Streams bytes [start, start+length) of a resolved version: per block, K
   * verified shards (data shards first), decoding only when a data shard is
   * missing or bad. A failing shard is replaced by the next drive and the
   * object queued for read-repair; fewer than K good shards throws
   * ErasureReadQuorum from the stream. Every chunk handed out is memory no
   * one else holds (fresh file reads, views of them, or a fresh decode) but,
   * for an inline version, a view of its metadata: SSE GETs decrypt the
   * others where they lie (`decryptRange`'s `owned`), so keep it that way.
   * With `reuse`, shard files are read into two buffers per reader refilled
   * in turn (the drive's `reuse`), so a chunk is valid only until the next
   * one is pulled: for consumers that finish with each chunk first.
   */
  async *readRange(
    vol: string,
    path: string,
    group: VersionGroup,
    start: number,
    length: number,
    bucket: string,
    object: string,
    opts: { onBadShards?: (reason: BadShardReason, slots: number[]) => void; reuse?: boolean } = {},
  ): AsyncGenerator<Uint8Array> {
    const v = group.version;
    const e = v.erasure!;
    const k = e.data;
    const n = this.width;
    const codec = createCodec(k, e.parity);
    const fullShard = shardSize(e.blockSize, k);
    const missing = new Set<number>();
    const bitrot = new Set<number>();
    for (let s = 0; s < n; s++) if (!group.perSlot[s]) missing.add(s);
    // slot holding shard number i+1
    const slotOfShard: number[] = new Array(n);
    for (let s = 0; s < n; s++) slotOfShard[e.distribution[s]! - 1] = s;

    try {
      for (const { part, from, to, b0, b1, range, rangeData } of partWindows(v.parts, start, length, e.blockSize, k)) {
        const open = async (slot: number, block: number): Promise<AsyncGenerator<Uint8Array>> => {
          const skip = block - b0;
          const off = range.offset + skip * (BITROT_HASH_SIZE + fullShard);
          const len = range.length - skip * (BITROT_HASH_SIZE + fullShard);
          const data = rangeData - skip * fullShard;
          let src: AsyncIterable<Uint8Array>;
          if (v.inline) {
            const inl = group.perSlot[slot]!.inlineData;
            if (!inl) throw new SvcError('FileCorrupt', 'inline data missing');
            src = (async function* () {
              yield inl.subarray(off, off + len);
            })();
          } else {
            src = await this.drives[slot]!.readFileStream(vol, `${path}/${v.dataDir}/part.${part.number}`, off, len, {
              chunkSize: BITROT_HASH_SIZE + fullShard,
              reuse: opts.reuse === true,
            });
          }
          return verifyShardStream(src, fullShard, data, block);
        };
        const order: number[] = [];
        for (let i = 0; i < n; i++) {
          const s = slotOfShard[i]!;
          if (!missing.has(s) && !bitrot.has(s)) order.push(s);
        }
        const readers = new ShardReaders(order, k, open, (s, b, err) => {
          if (hasCode(err, 'FileCorrupt')) bitrot.add(s);
          else missing.add(s);
          this.#log.warn({ event: 'shard_read_failed', bucket, object, slot: s, block: b, err }, 'shard read failed');
        });
        try {
          for (let b = b0; b <= b1; b++) {
            const blockLen = Math.min(e.blockSize, part.size - b * e.blockSize);
            const sLen = shardSize(blockLen, k);
            const shards: (Uint8Array | null)[] = new Array(n).fill(null);
            for (const [s, data] of await readers.block(b, sLen)) shards[e.distribution[s]! - 1] = data;
            const blockStart = b * e.blockSize;
            const sliceFrom = Math.max(from, blockStart) - blockStart;
            const sliceTo = Math.min(to, blockStart + blockLen) - blockStart;
            let allData = true;
            for (let i = 0; i < k; i++) if (shards[i] === null) allData = false;
            if (allData) {
              // Systematic code: the data shards are the block; hand out views, no decode or copy.
              for (let i = 0; i < k; i++) {
                const lo = Math.max(sliceFrom, i * sLen);
                const hi = Math.min(sliceTo, (i + 1) * sLen);
                if (hi > lo) yield shards[i]!.subarray(lo - i * sLen, hi - i * sLen);
              }
            } else {
              // decodeStripe returns a fresh buffer per block: hand out a view.
              yield decodeStripe(codec, shards, blockLen).subarray(sliceFrom, sliceTo);
            }
          }
        } finally {
          await readers.close();
        }
      }
    } finally {
      const report = opts.onBadShards ?? ((reason: BadShardReason, slots: number[]) => this.enqueueMrf(bucket, object, v.versionId, reason, slots));
      if (missing.size > 0) report('read-missing', [...missing]);
      if (bitrot.size > 0) report('read-bitrot', [...bitrot]);
    }
  }
}

/** What a read of bytes [start, start+length) needs of one part: the part's byte window, its blocks, their frames. */
interface PartWindow {
  part: PartRecord;
  /** First byte within the part. */
  from: number;
  /** Past the last byte within the part. */
  to: number;
  /** First and last block (inclusive). */
  b0: number;
  b1: number;
  /** Those blocks' frames in a shard of the part (hashes included). */
  range: { offset: number; length: number };
  /** Shard data bytes in those frames. */
  rangeData: number;
}

/** The parts a read of bytes [start, start+length) touches, in order, with what it needs of each. */
function partWindows(parts: readonly PartRecord[], start: number, length: number, blockSize: number, k: number): PartWindow[] {
  const fullShard = shardSize(blockSize, k);
  const end = start + length;
  const out: PartWindow[] = [];
  let partStart = 0;
  for (const part of parts) {
    const partEnd = partStart + part.size;
    if (partEnd > start && part.size > 0) {
      if (partStart >= end) break;
      const from = Math.max(start, partStart) - partStart;
      const to = Math.min(end, partEnd) - partStart;
      const b0 = Math.floor(from / blockSize);
      const b1 = Math.floor((to - 1) / blockSize);
      const partShardBytes = shardFileDataSize(part.size, blockSize, k);
      const range = frameRange(b0, b1, fullShard, partShardBytes);
      out.push({ part, from, to, b0, b1, range, rangeData: Math.min((b1 + 1) * fullShard, partShardBytes) - b0 * fullShard });
    }
    partStart = partEnd;
  }
  return out;
}
