/**
 * kstatus-style conditions. A condition's `lastTransitionTime` changes only
 * when its status flips; reason and message follow the latest observation.
 * Every condition carries the generation it was computed for, so
 * `kubectl wait --for=condition=Ready` never accepts a stale True.
 */
import type { ConditionT } from '../crd/svccluster.ts';

export const CONDITION_TYPES = ['Ready', 'Reconciling', 'Stalled', 'SpecValid', 'PoolsReady', 'DecommissionInProgress', 'RebalanceInProgress', 'Degraded', 'TlsReady', 'IdentitySynced'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

/** Stable CamelCase reasons, shared by conditions, events and logs. */
export type Reason =
  | 'AsExpected'
  | 'IdentitySourceMissing'
  | 'IdentityApplyFailed'
  | 'SpecInvalid'
  | 'PoolRemovedWithoutDecommission'
  | 'ParityExceedsNarrowestPool'
  | 'SetLayoutUnsupported'
  | 'CredentialsMissing'
  | 'PvcPending'
  | 'PvcShrinkUnsupported'
  | 'ImagePullBackOff'
  | 'Unschedulable'
  | 'PodsNotRunning'
  | 'ProvisioningPool'
  | 'Provisioning'
  | 'RestartingCluster'
  | 'RollingBack'
  | 'RolledBack'
  | 'RollingRestart'
  | 'WaitingForQuorum'
  | 'WaitingForAdminApi'
  | 'TopologyMismatch'
  | 'RebalanceStarting'
  | 'RebalanceRunning'
  | 'RebalanceStopping'
  | 'RebalanceFailed'
  | 'RebalanceCompleted'
  | 'DecommissionQueued'
  | 'DecommissionActive'
  | 'DecommissionFailed'
  | 'DecommissionCanceled'
  | 'DecommissionCompleted'
  | 'InsufficientTargetCapacity'
  | 'LastActivePool'
  | 'RemovingPool'
  | 'Queued'
  | 'Paused'
  | 'PodsNotReady'
  | 'Deleting'
  | 'TlsSecretMissing'
  | 'CertManagerCrdMissing'
  | 'CertificateNotReady';

export interface ConditionInput {
  readonly type: ConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: Reason;
  readonly message: string;
}

/** Returns a new list with `input` set; other conditions are kept as they are. */
export function setCondition(list: readonly ConditionT[] | undefined, input: ConditionInput, now: Date, generation: number | undefined): ConditionT[] {
  const out = [...(list ?? [])];
  const i = out.findIndex((c) => c.type === input.type);
  const prev = i >= 0 ? out[i] : undefined;
  const next: ConditionT = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime: prev && prev.status === input.status ? prev.lastTransitionTime : now.toISOString(),
  };
  if (generation !== undefined) next.observedGeneration = generation;
  if (i >= 0) out[i] = next;
  else out.push(next);
  return out;
}

export function getCondition(list: readonly ConditionT[] | undefined, type: ConditionType): ConditionT | undefined {
  return list?.find((c) => c.type === type);
}

export function isTrue(list: readonly ConditionT[] | undefined, type: ConditionType): boolean {
  return getCondition(list, type)?.status === 'True';
}

/**
 * kstatus' reading of a resource: Current when observedGeneration matches and
 * Ready is True; InProgress while Reconciling; Failed when Stalled.
 */
export function kstatus(generation: number | undefined, status: { observedGeneration?: number | undefined; conditions?: ConditionT[] | undefined } | undefined): 'Current' | 'InProgress' | 'Failed' {
  if (!status || status.observedGeneration !== generation) return 'InProgress';
  if (isTrue(status.conditions, 'Stalled')) return 'Failed';
  if (isTrue(status.conditions, 'Reconciling')) return 'InProgress';
  return isTrue(status.conditions, 'Ready') ? 'Current' : 'InProgress';
}

/** What `kubectl wait --for=condition=Ready` accepts: Ready True and computed for the current generation. */
export function readyForWait(generation: number | undefined, conditions: readonly ConditionT[] | undefined): boolean {
  const ready = getCondition(conditions, 'Ready');
  return ready?.status === 'True' && (ready.observedGeneration === undefined || ready.observedGeneration === generation);
}
