/**
 * Lifecycle execution as a hook of the background scanner. Each scanner
 * cycle, on each node, for the sets that node scans:
 *
 * - every object the scanner visits is checked against its bucket's rules
 *   with the versions the scanner just voted (pure, no I/O beyond the
 *   bucket's cached configuration); only an object with something due is
 *   then applied under its lock from a fresh quorum read (`apply.ts`), so
 *   a version changed since the scan is judged as it is now;
 * - after a set's objects, its incomplete multipart uploads are swept and
 *   those an `AbortIncompleteMultipartUpload` rule selects are aborted.
 *
 * Time is the scanner's clock (`beginCycle(now)`), injected like every
 * other clock, so tests drive whole cycles with a manual clock. Lag: an
 * action is taken on the first cycle that starts after it became due (ages
 * are rounded up to midnight UTC, as S3 does), so at most one scanner
 * interval plus the time a cycle takes to reach the object.
 */
import type { FileVersion } from '../storage/drive.ts';
import { toSvcError } from '../util/errors.ts';
import { type LifecycleActionMessage, type LifecycleActionOutcome, lifecycleAction } from '../util/diagnostics.ts';
import type { Logger } from '../util/logger.ts';
import type { ScannerHook } from './scanner.ts';
import type { BucketMetadata, MultipartUploadInfo } from '../object/types.ts';
import { type LifecycleOutcome, versionFacts } from '../object/lifecycle/apply.ts';
import { decodeLifecycle, hasObjectRules, hasUploadRules, type LifecycleConfig, selectUpload, selectVersions } from '../object/lifecycle/rules.ts';

/** What the executor needs of the object layer (`ServerPools`). */
export interface LifecycleLayer {
  getBucketInfo(bucket: string): Promise<BucketMetadata>;
  getBucketConfig(bucket: string, kind: 'lifecycle'): Promise<Uint8Array | undefined>;
  applyLifecycle(bucket: string, key: string, config: LifecycleConfig, now: number): Promise<LifecycleOutcome>;
  uploadsInSet(pool: number, set: number): Promise<MultipartUploadInfo[]>;
  abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void>;
}

export interface LifecycleCounters {
  objectsApplied: number;
  versionsDeleted: number;
  markersAdded: number;
  markersRemoved: number;
  /** Selected versions kept because object lock protects them. */
  keptLocked: number;
  uploadsAborted: number;
  errors: number;
}

export interface LifecycleProgress {
  cycles: number;
  total: LifecycleCounters;
  lastCycle?: LifecycleCounters & { startedAt: number };
  lastError?: string;
}

/** The counters exported as `svc.lifecycle.actions{outcome}` (objects applied is a count of visits, not an action). */
const OUTCOME: Partial<Record<keyof LifecycleCounters, LifecycleActionOutcome>> = {
  versionsDeleted: 'version_deleted',
  markersAdded: 'delete_marker_added',
  markersRemoved: 'delete_marker_removed',
  keptLocked: 'kept_locked',
  uploadsAborted: 'upload_aborted',
  errors: 'error',
};

function zero(): LifecycleCounters {
  return { objectsApplied: 0, versionsDeleted: 0, markersAdded: 0, markersRemoved: 0, keptLocked: 0, uploadsAborted: 0, errors: 0 };
}

export class LifecycleExecutor implements ScannerHook {
  readonly #layer: LifecycleLayer;
  readonly #log: Logger;
  #now = 0;
  /** Per cycle: each bucket's parsed configuration (null: none, or unreadable). */
  #configs = new Map<string, LifecycleConfig | null>();
  #versioning = new Map<string, boolean>();
  readonly #p: LifecycleProgress = { cycles: 0, total: zero() };
  #cycle: LifecycleCounters = zero();

  constructor(o: { layer: LifecycleLayer; logger: Logger }) {
    this.#layer = o.layer;
    this.#log = o.logger;
  }

  progress(): LifecycleProgress {
    return structuredClone({ ...this.#p, ...(this.#p.cycles > 0 ? { lastCycle: { ...this.#cycle, startedAt: this.#now } } : {}) });
  }

  beginCycle(now: number): void {
    this.#now = now;
    this.#configs.clear();
    this.#versioning.clear();
    this.#cycle = zero();
    this.#p.cycles++;
  }

  async #config(bucket: string): Promise<LifecycleConfig | null> {
    let c = this.#configs.get(bucket);
    if (c !== undefined) return c;
    try {
      c = decodeLifecycle(await this.#layer.getBucketConfig(bucket, 'lifecycle')) ?? null;
    } catch (err) {
      // A bucket removed meanwhile, or its record unreadable now: nothing to do this cycle.
      this.#log.debug({ event: 'lifecycle_config_unavailable', bucket, err: toSvcError(err).message }, 'lifecycle configuration not readable');
      c = null;
    }
    this.#configs.set(bucket, c);
    return c;
  }

  async #versioned(bucket: string): Promise<boolean> {
    let v = this.#versioning.get(bucket);
    if (v === undefined) {
      v = (await this.#layer.getBucketInfo(bucket)).versioning !== 'Unversioned';
      this.#versioning.set(bucket, v);
    }
    return v;
  }

  #count(k: keyof LifecycleCounters, n = 1): void {
    this.#cycle[k] += n;
    this.#p.total[k] += n;
    const outcome = OUTCOME[k];
    if (outcome !== undefined && n > 0 && lifecycleAction.hasSubscribers) lifecycleAction.publish({ outcome, count: n } satisfies LifecycleActionMessage);
  }

  #failed(what: string, err: unknown, fields: Record<string, unknown>): void {
    const e = toSvcError(err);
    this.#count('errors');
    this.#p.lastError = `${what}: ${e.message}`;
    this.#log.warn({ event: 'lifecycle_error', ...fields, code: e.code, err: e.message }, `lifecycle ${what} failed; retried next cycle`);
  }

  async visitObject(bucket: string, key: string, versions: readonly FileVersion[]): Promise<void> {
    const c = await this.#config(bucket);
    if (!c || !hasObjectRules(c) || versions.length === 0) return;
    try {
      // Pure pre-check on what the scanner saw: most objects have nothing due and are left at once.
      if (selectVersions(c, key, versions.map(versionFacts), this.#now, await this.#versioned(bucket)).length === 0) return;
      const r = await this.#layer.applyLifecycle(bucket, key, c, this.#now);
      this.#count('objectsApplied');
      this.#count('versionsDeleted', r.deleted);
      this.#count('markersAdded', r.markersAdded);
      this.#count('markersRemoved', r.markersRemoved);
      this.#count('keptLocked', r.locked);
      for (const a of r.actions) {
        this.#log.info(
          { event: a.done ? 'lifecycle_expired' : 'lifecycle_kept_locked', bucket, key, versionId: a.versionId, action: a.kind, rule: a.ruleId },
          a.done ? 'lifecycle rule applied' : 'lifecycle rule selected a locked version; kept',
        );
      }
    } catch (err) {
      this.#failed('object', err, { bucket, key });
    }
  }

  async endSet(pool: number, set: number): Promise<void> {
    let uploads: MultipartUploadInfo[];
    try {
      uploads = await this.#layer.uploadsInSet(pool, set);
    } catch (err) {
      this.#failed('upload sweep', err, { pool, set });
      return;
    }
    for (const u of uploads) {
      const c = await this.#config(u.bucket);
      if (!c || !hasUploadRules(c)) continue;
      const due = selectUpload(c, u.name, u.initiated.getTime(), this.#now);
      if (!due) continue;
      try {
        await this.#layer.abortMultipartUpload(u.bucket, u.name, u.uploadId);
        this.#count('uploadsAborted');
        this.#log.info({ event: 'lifecycle_upload_aborted', bucket: u.bucket, key: u.name, uploadId: u.uploadId, rule: due.ruleId }, 'incomplete multipart upload aborted by lifecycle');
      } catch (err) {
        if (toSvcError(err).code !== 'NoSuchUpload') this.#failed('upload abort', err, { bucket: u.bucket, key: u.name });
      }
    }
  }
}
