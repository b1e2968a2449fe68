/**
 * What one reconcile sees (built by the controller from informer caches and
 * admin reads) and what it decides. Plain data: the planner does no I/O.
 */
import type { AdminPoolStatus, RebalanceStatus } from '../admin/types.ts';
import type { SvcClusterStatus } from '../crd/svccluster.ts';
import type { KubeObject } from './render.ts';

export interface PodObs {
  readonly name: string;
  readonly pool: string;
  readonly ordinal: number;
  readonly launchHash?: string | undefined;
  readonly templateHash?: string | undefined;
  /** Container started (liveness territory): phase Running and the container running. */
  readonly running: boolean;
  /** Readiness (`/health/ready` 200). */
  readonly ready: boolean;
  /** Waiting reason of the container, e.g. ImagePullBackOff, CrashLoopBackOff. */
  readonly waitingReason?: string | undefined;
  /** The scheduler reported the pod Unschedulable (condition PodScheduled False). */
  readonly unschedulable?: boolean | undefined;
  readonly terminating: boolean;
  /** Base URL of the pod's S3 listener through the headless Service. */
  readonly url: string;
}

export interface StatefulSetObs {
  readonly name: string;
  readonly pool: string;
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly launchHash?: string | undefined;
  readonly storage?: string | number | undefined;
  /** StorageClass of the drive claim template (immutable once created). */
  readonly storageClassName?: string | undefined;
  /** The credentials Secret its pods mount. */
  readonly credentialsSecret?: string | undefined;
}

export interface PvcObs {
  readonly name: string;
  readonly pool: string;
  readonly phase: string;
  readonly storage?: string | number | undefined;
}

export interface AdminObs {
  /** false when no node answered (or none is running yet). */
  readonly reachable: boolean;
  readonly error?: string | undefined;
  readonly pools?: AdminPoolStatus[] | undefined;
  /** undefined: no rebalance was ever started. */
  readonly rebalance?: RebalanceStatus | undefined;
}

/** `spec.tls` as the controller found it (`runtime/tls-manager.ts`); undefined without spec.tls. */
export interface TlsObs {
  readonly ready: boolean;
  readonly reason: 'AsExpected' | 'TlsSecretMissing' | 'CertManagerCrdMissing' | 'CertificateNotReady';
  readonly message: string;
  /** PEM the operator verifies its pods with (the Secret's ca.crt, else its tls.crt). */
  readonly ca?: string | undefined;
  /** When the operator renews the certificate itself (mode generated), ms since the epoch. */
  readonly renewAtMs?: number | undefined;
}

export interface Observation {
  readonly now: Date;
  /** Undefined when the credentials Secret exists with both keys; otherwise why not. */
  readonly credentialsProblem?: string | undefined;
  readonly statefulSets: readonly StatefulSetObs[];
  readonly pods: readonly PodObs[];
  readonly pvcs: readonly PvcObs[];
  /** Names of the cluster's PodDisruptionBudgets. */
  readonly pdbs?: readonly string[] | undefined;
  readonly admin?: AdminObs | undefined;
  readonly tls?: TlsObs | undefined;
}

export interface PlanContext {
  /** Operator default cluster DNS domain. */
  readonly clusterDomain: string;
  /** Requeue while an operation is in flight. */
  readonly pollMs: number;
  /** Requeue when idle (level-triggered safety net). */
  readonly idleMs: number;
  /** Requeue while stalled. */
  readonly stalledMs: number;
  /** Fresh operation ids. */
  readonly newId: () => string;
}

export type AdminCall = 'decommissionStart' | 'decommissionCancel' | 'decommissionClear' | 'rebalanceStart' | 'rebalanceStop';

export type Action =
  | { readonly kind: 'apply'; readonly object: KubeObject }
  | { readonly kind: 'deletePods'; readonly names: readonly string[] }
  | { readonly kind: 'deleteStatefulSet'; readonly name: string }
  | { readonly kind: 'deleteService'; readonly name: string }
  | { readonly kind: 'deletePdb'; readonly name: string }
  | { readonly kind: 'deletePvcs'; readonly pool: string }
  | { readonly kind: 'expandPvcs'; readonly pool: string; readonly storage: string | number }
  | { readonly kind: 'admin'; readonly call: AdminCall; readonly pool?: string | undefined };

export interface EventSpec {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface Plan {
  readonly actions: Action[];
  readonly status: SvcClusterStatus;
  readonly requeueAfterMs: number;
  readonly events: EventSpec[];
}
