/**
 * Bucket quotas (MinIO's `mc quota set|info|clear`): a hard limit on the
 * bytes a bucket holds, enforced when a write is admitted (PUT, POST
 * Object, copy, multipart complete).
 *
 * What counts against the quota, on each node:
 *   - the scanner's usage of the bucket: object bytes of every version, as
 *     the newest scan of every set counted them (every node's records,
 *     merged, re-read at most every `usageMaxAgeMs`);
 *   - writes in flight on this node: admitted and not yet finished;
 *   - writes this node committed that the usage may not have seen yet
 *     (committed at or after the oldest set scan in that usage ended).
 * Writes through other nodes show up in the next scan. Deletes count only
 * once a scan has seen them, and an overwritten version counts twice until
 * then: the count errs towards refusing, never towards exceeding by more
 * than the other nodes' writes since the last scan.
 *
 * The configuration is the bucket's `quota` configuration document (JSON,
 * madmin's `BucketQuota` shape).
 */
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { UsageReport } from './usage.ts';

export interface BucketQuota {
  /** Hard limit in bytes (> 0). */
  size: number;
  type: 'hard';
}

/** Parses madmin's `BucketQuota` JSON; undefined when it clears the quota (size and quota 0). */
export function parseQuotaRequest(body: Buffer): BucketQuota | undefined {
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8') || '{}');
  } catch {
    throw new SvcError('InvalidArgument', 'the quota must be a JSON document: {"size": <bytes>, "quotatype": "hard"}');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SvcError('InvalidArgument', 'the quota must be a JSON object');
  const o = v as Record<string, unknown>;
  const num = (k: string): number => {
    const x = o[k] ?? 0;
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw new SvcError('InvalidArgument', `quota field "${k}" must be a whole number of bytes`);
    return x;
  };
  // `quota` is madmin's older name for `size`
  const size = num('size') || num('quota');
  if (num('rate') !== 0 || num('requests') !== 0) {
    throw new SvcError('NotImplemented', 'bandwidth and request-rate quotas are not supported; only a size ("hard") quota is');
  }
  const type = o['quotatype'] ?? '';
  if (type !== '' && type !== 'hard') throw new SvcError('InvalidArgument', `quota type "${String(type)}" is not supported; the only type is "hard"`);
  return size === 0 ? undefined : { size, type: 'hard' };
}

export function encodeQuota(q: BucketQuota): Uint8Array {
  return Buffer.from(JSON.stringify({ size: q.size, quotatype: q.type }));
}

export function decodeQuota(raw: Uint8Array): BucketQuota | undefined {
  try {
    const v = JSON.parse(Buffer.from(raw).toString('utf8')) as { size?: unknown };
    return typeof v.size === 'number' && v.size > 0 ? { size: v.size, type: 'hard' } : undefined;
  } catch {
    return undefined;
  }
}

/** A write admitted against a bucket's quota: exactly one of `commit` or `release` ends it. */
export interface QuotaReservation {
  /** The write was stored with `bytes`: it counts until a scan has seen it. */
  commit(bytes: number): void;
  /** The write failed: it counts no more. */
  release(): void;
}

const NOOP: QuotaReservation = { commit: () => {}, release: () => {} };

export interface BucketQuotaOptions {
  /** The bucket's quota document (cached by the caller's bucket metadata). */
  config(bucket: string): Promise<Uint8Array | undefined>;
  /** The scanners' merged usage; undefined before the first cycle anywhere. */
  usage(): Promise<UsageReport | undefined>;
  clock: Clock;
  /** How old a usage read may be before the next admission reads it again (default 1 s). */
  usageMaxAgeMs?: number;
}

/** What counts against a bucket's quota on this node, and its parts. */
export interface QuotaCount {
  /** The scanner's bytes for the bucket (0 before the first scan). */
  scanned: number;
  /** Admitted writes still running on this node (their declared sizes). */
  inFlight: number;
  /** Writes this node stored that the scan may not have counted yet. */
  unscanned: number;
  total: number;
}

export class BucketQuotas {
  readonly #o: BucketQuotaOptions;
  #usage: { at: number; report: UsageReport | undefined } | undefined;
  #reading: Promise<UsageReport | undefined> | undefined;
  /** bucket → declared sizes of admitted writes still running. */
  readonly #running = new Map<string, Set<{ bytes: number }>>();
  /** bucket → writes committed here, with their commit time. */
  readonly #committed = new Map<string, { at: number; bytes: number }[]>();

  constructor(o: BucketQuotaOptions) {
    this.#o = o;
  }

  async quotaOf(bucket: string): Promise<BucketQuota | undefined> {
    const raw = await this.#o.config(bucket);
    return raw === undefined ? undefined : decodeQuota(raw);
  }

  /** The usage, re-read when older than the limit; a failed read keeps the last one. */
  async #currentUsage(): Promise<UsageReport | undefined> {
    const now = this.#o.clock.now();
    const maxAge = this.#o.usageMaxAgeMs ?? 1_000;
    if (this.#usage !== undefined && now - this.#usage.at < maxAge) return this.#usage.report;
    this.#reading ??= this.#o
      .usage()
      .then(
        (report) => {
          this.#usage = { at: this.#o.clock.now(), report };
          return report;
        },
        () => this.#usage?.report,
      )
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }

  /** Counts the bucket's bytes against its quota as this node sees them now. */
  async count(bucket: string): Promise<QuotaCount> {
    return this.#countNow(bucket, await this.#currentUsage());
  }

  #countNow(bucket: string, usage: UsageReport | undefined): QuotaCount {
    const scanned = usage?.buckets[bucket]?.size ?? 0;
    // A commit counts until every set's newest scan ended after it (sets never scanned: always).
    const horizon = usage !== undefined && usage.perSet.length > 0 && usage.perSet.length >= usage.sets ? Math.min(...usage.perSet.map((s) => s.scannedAt)) : 0;
    const kept = (this.#committed.get(bucket) ?? []).filter((c) => c.at >= horizon);
    if (kept.length > 0) this.#committed.set(bucket, kept);
    else this.#committed.delete(bucket);
    const unscanned = kept.reduce((a, c) => a + c.bytes, 0);
    const inFlight = [...(this.#running.get(bucket) ?? [])].reduce((a, r) => a + r.bytes, 0);
    return { scanned, inFlight, unscanned, total: scanned + inFlight + unscanned };
  }

  /**
   * Admits a write of `bytes` (its size when known, else 0) to `bucket`, or
   * refuses it with `XSvcAdminBucketQuotaExceeded` when it would take the
   * bucket over its quota. Buckets without a quota cost one cached lookup.
   */
  async admit(bucket: string, bytes: number): Promise<QuotaReservation> {
    const quota = await this.quotaOf(bucket);
    if (quota === undefined) return NOOP;
    // From here on synchronous: two admissions on this node never both take the last bytes.
    const c = this.#countNow(bucket, await this.#currentUsage());
    if (c.total + Math.max(0, bytes) > quota.size) {
      throw new SvcError('XSvcAdminBucketQuotaExceeded', undefined, { bucket, quota: quota.size, counted: c.total, write: bytes });
    }
    const entry = { bytes: Math.max(0, bytes) };
    let running = this.#running.get(bucket);
    if (running === undefined) this.#running.set(bucket, (running = new Set()));
    running.add(entry);
    let done = false;
    const end = () => {
      if (done) return false;
      done = true;
      running.delete(entry);
      if (running.size === 0 && this.#running.get(bucket) === running) this.#running.delete(bucket);
      return true;
    };
    return {
      commit: (stored) => {
        if (!end()) return;
        const list = this.#committed.get(bucket) ?? [];
        list.push({ at: this.#o.clock.now(), bytes: stored });
        this.#committed.set(bucket, list);
      },
      release: () => void end(),
    };
  }
}
