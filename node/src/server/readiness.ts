/**
 * Node readiness (SPEC "Node readiness", "Readiness response", "degradedReasons").
 *
 * A generic state machine over dependency flags. Whoever owns a dependency
 * sets its flag (`update`); the pending stage, `ready`, `status` and the
 * degraded reasons are derived, so every probe and the S3 gate see one
 * consistent answer:
 *
 *   pending storage_quorum → pending iam → pending startup_finalization → ready
 *   ready → (a dependency lost) → degraded, pending the first missing stage
 *
 * - `/health/ready` needs storage (read quorum), IAM, peers, KMS when
 *   configured, and finalization. Lock quorum is not part of it.
 * - the cluster probes additionally need lock quorum; `/compat/health/cluster`
 *   needs write quorum, `/cluster/read` read quorum.
 *
 * Every evaluation (each `update`) is published on `svc:readiness:evaluated`
 * (the readiness gauge and the degraded-reason counter).
 */
import { type ReadinessEvaluatedMessage, readinessEvaluated } from '../util/diagnostics.ts';

export type PendingStage = 'storage_quorum' | 'iam' | 'startup_finalization';

export type DegradedReason =
  | 'storage_quorum_unavailable'
  | 'iam_not_ready'
  | 'lock_quorum_unavailable'
  | 'kms_not_ready'
  | 'peer_health_unavailable'
  | 'cluster_health_timeout'
  | 'storage_and_iam_unavailable'
  | 'storage_and_lock_unavailable'
  | 'iam_and_lock_unavailable'
  | 'storage_iam_and_lock_unavailable';

export interface ReadinessInputs {
  /** Every erasure set has read quorum. */
  readonly storageRead: boolean;
  /** Every erasure set has write quorum. */
  readonly storageWrite: boolean;
  /** IAM cache loaded. */
  readonly iam: boolean;
  /**
   * An IAM load was attempted and failed. IAM loads after storage quorum, so
   * before that a not-yet-loaded IAM is the storage problem's consequence and
   * only `storage_quorum_unavailable` is reported; the combined variants
   * appear when IAM failed on its own.
   */
  readonly iamFailed: boolean;
  /** Lock majority reachable. */
  readonly lock: boolean;
  /** Key-management service: undefined when none is configured. */
  readonly kms: boolean | undefined;
  /** Peer health checks pass (always true on a single node). */
  readonly peers: boolean;
  /** Cluster health evaluation timed out. */
  readonly clusterTimeout: boolean;
  /** Start-up finished its last step. */
  readonly finalized: boolean;
  /**
   * A graceful stop began (SIGTERM/SIGINT): not ready from that moment, so
   * load balancers stop routing here, while requests in flight finish.
   */
  readonly stopping?: boolean;
}

export interface DependencyDetail {
  /** `connected` when the dependency is usable, else `disconnected`. */
  readonly status: 'connected' | 'disconnected';
  readonly ready: boolean;
  /** Human-readable state, e.g. "1 of 1 erasure sets have read quorum". */
  readonly detail?: string;
}

export interface ReadinessReport {
  readonly ready: boolean;
  /** `ok` on a fully serving node, `degraded` otherwise. */
  readonly status: 'ok' | 'degraded';
  /** The blocking stage while not ready. */
  readonly pending: PendingStage | undefined;
  readonly details: {
    readonly storage: DependencyDetail;
    readonly iam: DependencyDetail;
    readonly lock: DependencyDetail;
    readonly kms?: DependencyDetail;
    /** Multi-node deployments: the other nodes (a majority reachable). */
    readonly peers?: DependencyDetail;
    /** Only while the node stops: it drains the requests in flight and takes no new ones. */
    readonly shutdown?: DependencyDetail;
  };
  readonly degradedReasons: readonly DegradedReason[];
}

export type ProbeKind = 'ready' | 'cluster' | 'cluster-read';

const INITIAL: ReadinessInputs = {
  storageRead: false,
  storageWrite: false,
  iam: false,
  iamFailed: false,
  lock: true,
  kms: undefined,
  peers: true,
  clusterTimeout: false,
  finalized: false,
  stopping: false,
};

/** Combines the storage/IAM/lock failures into the spec's single or combined reason. */
export function combinedReason(storage: boolean, iam: boolean, lock: boolean): DegradedReason | undefined {
  if (storage && iam && lock) return 'storage_iam_and_lock_unavailable';
  if (storage && iam) return 'storage_and_iam_unavailable';
  if (storage && lock) return 'storage_and_lock_unavailable';
  if (iam && lock) return 'iam_and_lock_unavailable';
  if (storage) return 'storage_quorum_unavailable';
  if (iam) return 'iam_not_ready';
  if (lock) return 'lock_quorum_unavailable';
  return undefined;
}

/** Pure evaluation of the inputs for one probe kind. */
export function evaluateReadiness(i: ReadinessInputs, probe: ProbeKind = 'ready', notes: Readonly<Record<string, string>> = {}): ReadinessReport {
  const storageOk = probe === 'cluster' ? i.storageRead && i.storageWrite : i.storageRead;
  const withLock = probe !== 'ready';
  const pending: PendingStage | undefined = !i.storageRead ? 'storage_quorum' : !i.iam ? 'iam' : !i.finalized ? 'startup_finalization' : undefined;
  const reasons: DegradedReason[] = [];
  const iamDown = !i.iam && (i.storageRead || i.iamFailed);
  const main = combinedReason(!storageOk, iamDown, withLock && !i.lock);
  if (main) reasons.push(main);
  if (i.kms === false) reasons.push('kms_not_ready');
  // Peers away while storage lacks read quorum are that problem's cause: storage alone is reported (as IAM is).
  if (!i.peers && i.storageRead) reasons.push('peer_health_unavailable');
  if (withLock && i.clusterTimeout) reasons.push('cluster_health_timeout');
  const ready = reasons.length === 0 && pending === undefined && !i.stopping;
  const d = (ready: boolean, key: string): DependencyDetail => {
    const status = ready ? 'connected' : 'disconnected';
    return notes[key] === undefined ? { status, ready } : { status, ready, detail: notes[key] };
  };
  return {
    ready,
    status: ready ? 'ok' : 'degraded',
    pending,
    details: {
      storage: d(storageOk, 'storage'),
      iam: d(i.iam, 'iam'),
      lock: d(i.lock, 'lock'),
      ...(i.kms === undefined ? {} : { kms: d(i.kms, 'kms') }),
      ...(notes['peers'] === undefined ? {} : { peers: d(i.peers, 'peers') }),
      ...(i.stopping === true ? { shutdown: { status: 'disconnected', ready: false, detail: 'shutting down: requests in flight finish, no new ones' } } : {}),
    },
    degradedReasons: reasons,
  };
}

/** The live readiness of this process. */
export class Readiness {
  #inputs: ReadinessInputs;
  #notes: Record<string, string> = {};
  #listeners = new Set<(r: ReadinessReport, prev: ReadinessReport) => void>();

  constructor(initial: Partial<ReadinessInputs> = {}) {
    this.#inputs = { ...INITIAL, ...initial };
  }

  get inputs(): ReadinessInputs {
    return this.#inputs;
  }

  /** Sets some dependency flags (and optional human detail per dependency). */
  update(patch: Partial<ReadinessInputs>, notes?: Partial<Record<'storage' | 'iam' | 'lock' | 'kms' | 'peers', string>>): void {
    const prev = this.report();
    this.#inputs = { ...this.#inputs, ...patch };
    if (notes) for (const [k, v] of Object.entries(notes)) if (v !== undefined) this.#notes[k] = v;
    const next = this.report();
    if (readinessEvaluated.hasSubscribers) {
      readinessEvaluated.publish({ ready: next.ready, pending: next.pending, degradedReasons: next.degradedReasons } satisfies ReadinessEvaluatedMessage);
    }
    if (next.ready !== prev.ready || next.pending !== prev.pending || next.degradedReasons.join() !== prev.degradedReasons.join() || patch.stopping === true) {
      for (const l of this.#listeners) l(next, prev);
    }
  }

  report(probe: ProbeKind = 'ready'): ReadinessReport {
    return evaluateReadiness(this.#inputs, probe, this.#notes);
  }

  get ready(): boolean {
    return this.report().ready;
  }

  /** Called on every change of ready/pending/reasons; returns an unsubscribe function. */
  onChange(fn: (r: ReadinessReport, prev: ReadinessReport) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Resolves when ready, or with false when `signal` aborts first. */
  whenReady(signal?: AbortSignal): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const off = this.onChange((r) => {
        if (r.ready) {
          off();
          resolve(true);
        }
      });
      signal?.addEventListener(
        'abort',
        () => {
          off();
          resolve(false);
        },
        { once: true },
      );
    });
  }
}

/** JSON body of the readiness probes (the `pending` stage is a header, not a field). */
export function readinessBody(r: ReadinessReport): { ready: boolean; status: string; details: ReadinessReport['details']; degradedReasons: readonly string[] } {
  return { ready: r.ready, status: r.status, details: r.details, degradedReasons: r.degradedReasons };
}
