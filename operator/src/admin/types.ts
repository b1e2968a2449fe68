/**
 * The admin API shapes the operator reads (SPEC "Admin API" plus the
 * reference shapes for what the spec leaves "not shown": MinIO's flat
 * `PoolStatus`, always with a `decommissionInfo` object; RustFS' rebalance
 * superset). Decoding is tolerant (case-insensitive status words, optional
 * extras), the way Go clients read them. Pure.
 */

export interface DecommissionInfo {
  startTime?: string | null;
  startSize?: number;
  totalSize?: number;
  currentSize?: number;
  complete?: boolean;
  failed?: boolean;
  canceled?: boolean;
  /** RustFS extra: the entry waits behind another pool. */
  queued?: boolean;
  objectsDecommissioned?: number;
  objectsDecommissionedFailed?: number;
  bytesDecommissioned?: number;
  bytesDecommissionedFailed?: number;
}

export interface AdminPoolStatus {
  id: number;
  cmdline: string;
  lastUpdate?: string;
  decommissionInfo?: DecommissionInfo | null;
  /** RustFS extra, when present: none|queued|running|complete|failed|canceled. */
  decommissionStatus?: string;
}

export interface RebalancePoolStatus {
  id: number;
  status: string;
  stopping?: boolean;
  used?: number;
  lastError?: string | null;
  progress?: { objects?: number; versions?: number; bytes?: number; elapsed?: number; eta?: number } | null;
}

export interface RebalanceStatus {
  id?: string;
  ID?: string;
  pools: RebalancePoolStatus[];
  stoppedAt?: string | null;
  stopPropagation?: { failedPeers?: string[]; pendingTerminalReload?: boolean; terminalReloadFailedPeers?: string[] } | null;
}

/** The zero time Go writes for an unset `time.Time`. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

export function isZeroTime(t: string | null | undefined): boolean {
  return !t || t.startsWith('0001-01-01');
}

export type DecommissionPhase = 'None' | 'Queued' | 'Active' | 'Completed' | 'Failed' | 'Canceled';

/** mc's order: complete, failed, canceled, then a start time means draining. */
export function decommissionPhase(info: DecommissionInfo | null | undefined): DecommissionPhase {
  if (!info) return 'None';
  if (info.complete) return 'Completed';
  if (info.failed) return 'Failed';
  if (info.canceled) return 'Canceled';
  if (info.queued) return 'Queued';
  if (!isZeroTime(info.startTime)) return 'Active';
  return 'None';
}

const ACTIVE_WORDS = new Set(['started', 'active', 'running', 'stopping']);

export function rebalanceId(s: RebalanceStatus | undefined): string | undefined {
  return s?.id ?? s?.ID;
}

/** A pool is moving data (or stopping) for the rebalance. */
export function rebalanceActive(s: RebalanceStatus | undefined): boolean {
  if (!s) return false;
  return s.pools.some((p) => ACTIVE_WORDS.has(p.status.toLowerCase()) || p.stopping === true) || s.stopPropagation?.pendingTerminalReload === true;
}

/**
 * SPEC: a rebalance is finished only when no pool is active or stopping and
 * stop propagation completed. Returns the errors to surface (empty on a clean finish).
 */
export function rebalanceOutcome(s: RebalanceStatus): { done: boolean; errors: string[] } {
  const done = !rebalanceActive(s);
  const errors: string[] = [];
  for (const p of s.pools) {
    if (p.status.toLowerCase() === 'failed') errors.push(`pool ${p.id}: rebalance failed${p.lastError ? `: ${p.lastError}` : ''}`);
    else if (p.lastError) errors.push(`pool ${p.id}: ${p.lastError}`);
  }
  for (const peer of s.stopPropagation?.failedPeers ?? []) errors.push(`stop did not reach ${peer}`);
  return { done, errors };
}

/** An admin API error: `{Code, Message}` JSON (reference §2.1) or a transport failure (`code: 'Unreachable'`). */
export class AdminError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'AdminError';
    this.status = status;
    this.code = code;
  }
}

/** Error texts the spec names; the operator recognises them by code or message. */
export function isInsufficientCapacity(e: { code: string; message: string }): boolean {
  return /insufficient target pool capacity/i.test(e.message);
}
export function isRebalanceRunning(e: { code: string; message: string }): boolean {
  return /rebalance is already in progress/i.test(e.message) || e.code === 'XSvcAdminRebalanceAlreadyStarted' || e.code === 'XMinioAdminRebalanceAlreadyStarted';
}
export function isDecommissionRunning(e: { code: string; message: string }): boolean {
  return /cannot start rebalance while decommission is in progress/i.test(e.message);
}
export function isUnknownPool(e: { code: string; message: string }): boolean {
  return (e.code === 'InvalidArgument' || e.code === 'XSvcAdminInvalidArgument') && /not found|unknown pool/i.test(e.message);
}
