/**
 * Parity defaults and the storage-class rules (SPEC "Storage-class rules").
 * Pure; violations throw `TopologyError('InvalidStorageClassConfig')`.
 */
import { TopologyError } from './errors.ts';

/** A configured parity: unset/empty means the automatic policy. */
export type ParitySetting = { readonly kind: 'auto' } | { readonly kind: 'explicit'; readonly parity: number; readonly raw: string };

export const AUTO_PARITY: ParitySetting = Object.freeze({ kind: 'auto' });

/** Default STANDARD parity by set width (SPEC table). */
export function defaultStandardParity(setDriveCount: number): number {
  if (!Number.isInteger(setDriveCount) || setDriveCount < 1 || setDriveCount > 16) {
    throw new TopologyError('InvalidTopology', `set width ${setDriveCount} is outside 1..16`);
  }
  if (setDriveCount === 1) return 0;
  if (setDriveCount <= 3) return 1;
  if (setDriveCount <= 5) return 2;
  if (setDriveCount <= 7) return 3;
  return 4;
}

/** Default RRS parity: 1, or 0 on a single drive (the persisted EC:1 resolves to 0 there). */
export function defaultRrsParity(setDriveCount: number): number {
  return setDriveCount === 1 ? 0 : 1;
}

/**
 * Parses `EC:<n>` (rule 1). `undefined` or an empty/blank string is the
 * automatic policy (the empty value restores it).
 */
export function parseParity(name: string, value: string | undefined): ParitySetting {
  if (value === undefined || value.trim() === '') return AUTO_PARITY;
  const m = /^EC:([0-9]{1,3})$/.exec(value.trim());
  if (!m) {
    throw new TopologyError('InvalidStorageClassConfig', `${name}: invalid value "${value}"; expected EC:<n> with n a non-negative integer, e.g. EC:2`, {
      variable: name,
      value,
    });
  }
  return { kind: 'explicit', parity: Number(m[1]), raw: value.trim() };
}

export interface StorageClassSettings {
  readonly standard: ParitySetting;
  readonly rrs: ParitySetting;
}

/** Parity resolved for one pool. */
export interface ResolvedParity {
  readonly standard: number;
  readonly rrs: number;
  /** true when the value came from the automatic policy. */
  readonly standardAuto: boolean;
  readonly rrsAuto: boolean;
}

/**
 * Applies rules 2, 4 and 5 against every pool's set width and returns the
 * parity per pool (same order as `setDriveCounts`).
 * - every parity ≤ N/2 for every pool (so an explicit value fits the narrowest);
 * - STANDARD ≥ RRS only when both are non-zero; EC:0 is valid on any width;
 * - an explicit non-zero RRS fails on a single drive; the default resolves to 0.
 */
export function resolveStorageClass(sc: StorageClassSettings, setDriveCounts: readonly number[]): ResolvedParity[] {
  if (setDriveCounts.length === 0) throw new TopologyError('InvalidTopology', 'no pools configured');
  const narrowest = Math.min(...setDriveCounts);
  const max = Math.floor(narrowest / 2);
  const check = (name: string, s: ParitySetting) => {
    if (s.kind !== 'explicit') return;
    if (name === 'SVC_STORAGE_CLASS_RRS' && narrowest === 1 && s.parity > 0) {
      throw new TopologyError('InvalidStorageClassConfig', `${name}=${s.raw} is not allowed on a single-drive deployment (it has no parity); unset it`, {
        variable: name,
      });
    }
    if (s.parity > max) {
      throw new TopologyError(
        'InvalidStorageClassConfig',
        `${name}=${s.raw}: parity ${s.parity} exceeds ${max}, half of the narrowest erasure set (${narrowest} drives)`,
        { variable: name, parity: s.parity, setDriveCount: narrowest },
      );
    }
  };
  check('SVC_STORAGE_CLASS_STANDARD', sc.standard);
  check('SVC_STORAGE_CLASS_RRS', sc.rrs);
  if (sc.standard.kind === 'explicit' && sc.rrs.kind === 'explicit' && sc.standard.parity > 0 && sc.rrs.parity > 0 && sc.standard.parity < sc.rrs.parity) {
    throw new TopologyError(
      'InvalidStorageClassConfig',
      `SVC_STORAGE_CLASS_STANDARD=${sc.standard.raw} must be at least SVC_STORAGE_CLASS_RRS=${sc.rrs.raw} when both are non-zero`,
    );
  }
  return setDriveCounts.map((n) => {
    const standard = sc.standard.kind === 'explicit' ? sc.standard.parity : defaultStandardParity(n);
    const rrs = sc.rrs.kind === 'explicit' ? sc.rrs.parity : defaultRrsParity(n);
    // The automatic RRS (1) never exceeds a non-zero STANDARD, so the ordering
    // rule needs no check on automatic values.
    return { standard, rrs, standardAuto: sc.standard.kind === 'auto', rrsAuto: sc.rrs.kind === 'auto' };
  });
}

/** Quorums of a set of width N at parity M (SPEC "Quorum and capacity rules"). */
export function quorums(setDriveCount: number, parity: number): { data: number; read: number; write: number } {
  const data = setDriveCount - parity;
  return { data, read: data, write: data === parity ? data + 1 : data };
}

/**
 * The parity that decides whether a set can serve (node readiness). With a
 * non-zero STANDARD parity it is that parity: below its read quorum the set's
 * objects are unreadable and the node is degraded. Zero parity has no degraded
 * mode by design (SPEC Storage-class rule 6): with a drive down only the
 * zero-parity objects fail, one by one, with ErasureReadQuorum /
 * ErasureWriteQuorum, while bucket operations, listings, deletes and the
 * `.svc.sys` metadata (always written at parity N/2) keep working. Such a set
 * is ready while that metadata quorum holds.
 */
export function readinessParity(setDriveCount: number, standardParity: number): number {
  return standardParity > 0 ? standardParity : Math.floor(setDriveCount / 2);
}
