/**
 * What an object heal must do, decided from what the drives hold. Pure:
 * the engine (`heal-object.ts`) reads the journals and checks the shards,
 * these functions turn that into a plan, the engine carries it out.
 *
 * 1. `voteObject`: the authoritative version set. Per version id, the newest
 *    group of identical copies that reached its quorum (K drives for data, a
 *    majority for delete markers: the vote reads use) is authoritative.
 *    Copies of that id that lost the vote (older copies a drive kept,
 *    superseded copies a crashed commit left, newer copies of a write that
 *    never reached quorum) are garbage on the drives holding them. An id
 *    with no group at quorum is *dangling* when the drives that did not
 *    answer could not bring any of its groups to quorum, and *undecided*
 *    when they could (then heal leaves it alone until they answer).
 *    Dangling must be proven: a damaged drive (unreadable journal, missing
 *    bucket folder) that could make up the quorum leaves the id *unproven*,
 *    and a zero-parity version is never dangling (*noParity*: nothing can
 *    rebuild it, nothing proves it gone). Only proven dangling versions are
 *    ever removed.
 * 2. `planVersion`: per authoritative version and drive, the state before
 *    (`ok`, `missing`, `corrupt`, `offline`), which drives get data rebuilt
 *    and which only metadata rewritten, and why it cannot be healed now
 *    (geometry that does not match the set, zero parity, too few good
 *    shards) or that its data is lost for good (dangling).
 */
import { BLOCK_SIZE } from '../../erasure/index.ts';
import type { FileVersion, PartState } from '../../storage/drive.ts';
import { hasCode } from '../../util/errors.ts';
import { groupVersions, metaKey, type SlotMeta, type VersionGroup } from '../../object/quorum.ts';

/** A drive's state for one object (HealResultItem `state`). */
export type DriveState = 'ok' | 'missing' | 'corrupt' | 'offline';

/** What reading one drive's xl.meta gave. */
export type SlotRead =
  | { kind: 'journal'; versions: FileVersion[] }
  /** answered: the object is not there */
  | { kind: 'absent' }
  /** answered: the drive lacks the bucket's volume */
  | { kind: 'no-volume' }
  /** answered with an unreadable xl.meta: every version there is to be rebuilt */
  | { kind: 'corrupt' }
  | { kind: 'offline' };

export function classifySlot(m: SlotMeta): SlotRead {
  if (m.ok) return { kind: 'journal', versions: m.versions };
  // A missing bucket volume reads as "not found" too: it is told apart first (heal makes the volume).
  if (m.noVolume === true || hasCode(m.error, 'VolumeNotFound')) return { kind: 'no-volume' };
  if (m.notFound) return { kind: 'absent' };
  if (hasCode(m.error, 'FileCorrupt')) return { kind: 'corrupt' };
  return { kind: 'offline' };
}

/** Drives that answered count in the vote; corrupt and volume-less drives answered "nothing usable". */
function forVote(r: SlotRead): SlotMeta {
  return r.kind === 'journal' ? { ok: true, versions: r.versions } : { ok: false, notFound: r.kind !== 'offline' };
}

export interface ObjectVote {
  /** Authoritative versions, newest first. */
  authoritative: VersionGroup[];
  /** Drive copies that lost the vote to an authoritative version of their id: `[slot, journal id]`. */
  stale: { slot: number; id: string }[];
  /**
   * Versions no group of which can reach quorum, proven: every drive
   * answered cleanly (journal or a clean "not here"), so the missing copies
   * are nowhere. Every copy, `[slot, journal id]`, and the groups.
   */
  dangling: { groups: VersionGroup[]; copies: { slot: number; id: string }[] };
  /** Version ids the offline drives could still decide (left alone). */
  undecided: string[];
  /**
   * Version ids below quorum that damaged drives (an unreadable journal, a
   * missing bucket folder) might still hold: not proven garbage, so never
   * removed; they do not stop the heal of the rest.
   */
  unproven: string[];
  /** Data versions without parity below quorum: nothing can rebuild them and nothing proves them gone (`NO_PARITY`). */
  noParity: string[];
  /** Drives that did not answer. */
  offline: number;
}

export function voteObject(reads: readonly SlotRead[]): ObjectVote {
  const { groups, failed } = groupVersions(reads.map(forVote));
  // Drives that answered but are damaged: they may hold copies the vote cannot see.
  const damaged = reads.filter((r) => r.kind === 'corrupt' || r.kind === 'no-volume').length;
  const byId = new Map<string, VersionGroup[]>();
  for (const g of groups) {
    const id = g.version.versionId;
    const list = byId.get(id);
    if (list) list.push(g);
    else byId.set(id, [g]);
  }
  const out: ObjectVote = { authoritative: [], stale: [], dangling: { groups: [], copies: [] }, undecided: [], unproven: [], noParity: [], offline: failed };
  const copies = (g: VersionGroup) => g.perSlot.flatMap((v, slot) => (v ? [{ slot, id: v.versionId }] : []));
  for (const [id, gs] of byId) {
    // Newest first (groupVersions' order).
    const auth = gs.find((g) => g.votes >= g.quorum);
    if (auth === undefined) {
      if (gs.some((g) => g.votes + failed >= g.quorum)) out.undecided.push(id);
      else if (gs.some((g) => g.version.type === 'object' && g.version.erasure?.parity === 0)) out.noParity.push(id);
      else if (gs.some((g) => g.votes + failed + damaged >= g.quorum)) out.unproven.push(id);
      else {
        out.dangling.groups.push(...gs);
        out.dangling.copies.push(...gs.flatMap(copies));
      }
      continue;
    }
    // A newer group the missing drives could still carry to quorum may be the real latest: undecided.
    const newer = gs.slice(0, gs.indexOf(auth));
    if (newer.some((g) => g.votes + failed >= g.quorum)) {
      out.undecided.push(id);
      continue;
    }
    out.authoritative.push(auth);
    for (const g of gs) if (g !== auth) out.stale.push(...copies(g));
  }
  out.authoritative.sort((a, b) => b.version.modTime - a.version.modTime || (a.version.versionId < b.version.versionId ? 1 : -1));
  return out;
}

/** A drive's check of its shards of one version: per part, or `undefined` when it has no copy. */
export type ShardCheck = PartState[] | undefined;

export interface VersionPlan {
  group: VersionGroup;
  /** Per slot, before the heal. */
  states: DriveState[];
  /** Slots that get the version's data rebuilt (and its metadata). */
  dataTargets: number[];
  /** Slots whose data is good but whose metadata is missing or outdated. */
  metaTargets: number[];
  /** Slots holding good shards. */
  sources: number[];
  /** Why the version cannot be healed now (nothing is changed for the object). */
  refusal?: string;
  /** The data is lost for good: fewer than K good shards even counting the drives that did not answer. */
  dataLost?: boolean;
}

/** The zero-parity refusal (SPEC Errors: heal of a zero-parity object). */
export const NO_PARITY = 'no-parity object is unrecoverable';

function isPermutation(dist: readonly number[], n: number): boolean {
  if (dist.length !== n) return false;
  const seen = new Set(dist);
  return seen.size === n && dist.every((x) => Number.isInteger(x) && x >= 1 && x <= n);
}

const RANK: Record<DriveState, number> = { ok: 0, missing: 1, corrupt: 2, offline: 3 };

/** The worse of two drive states (offline > corrupt > missing > ok). */
export function worse(a: DriveState, b: DriveState): DriveState {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * The plan for one authoritative version. `checks[slot]` is the drive's
 * shard check of its copy (data versions); `members[slot]` false for drives
 * that cannot be written now (offline, not a member of their slot).
 */
export function planVersion(group: VersionGroup, reads: readonly SlotRead[], checks: readonly ShardCheck[], n: number): VersionPlan {
  const v = group.version;
  const states: DriveState[] = new Array(n);
  const dataTargets: number[] = [];
  const metaTargets: number[] = [];
  const sources: number[] = [];
  const want = metaKey(v);
  for (let s = 0; s < n; s++) {
    const r = reads[s]!;
    if (r.kind === 'offline') {
      states[s] = 'offline';
      continue;
    }
    if (r.kind === 'corrupt') {
      states[s] = 'corrupt';
      if (v.type === 'object') dataTargets.push(s);
      else metaTargets.push(s);
      continue;
    }
    const copy = group.perSlot[s];
    if (copy === undefined) {
      states[s] = 'missing';
      if (v.type === 'object') dataTargets.push(s);
      else metaTargets.push(s);
      continue;
    }
    if (v.type !== 'object') {
      states[s] = 'ok';
      if (copy.versionId !== v.versionId) metaTargets.push(s);
      continue;
    }
    const parts = checks[s];
    const bad = parts === undefined ? 'missing' : parts.includes('corrupt') ? 'corrupt' : parts.includes('missing') ? 'missing' : undefined;
    if (bad !== undefined) {
      states[s] = bad;
      dataTargets.push(s);
      continue;
    }
    sources.push(s);
    if (metaKey(copy) !== want) {
      // Good shards under outdated metadata (a tag update this drive missed).
      states[s] = 'missing';
      metaTargets.push(s);
    } else {
      states[s] = 'ok';
      // A superseded copy (an interrupted commit's) is the version: it gets its own id back.
      if (copy.versionId !== v.versionId) metaTargets.push(s);
    }
  }
  const plan: VersionPlan = { group, states, dataTargets, metaTargets, sources };
  const e = v.erasure;
  if (v.type === 'object' && e !== undefined) {
    if (e.data + e.parity !== n || !isPermutation(e.distribution, n) || e.data < 1 || e.blockSize !== BLOCK_SIZE) {
      plan.refusal = `stored geometry (${e.data} data + ${e.parity} parity shards over ${e.distribution.length} drives, ${e.blockSize}-byte blocks) does not match the set of ${n} drives`;
      return plan;
    }
    if (dataTargets.length > 0) {
      const offline = states.filter((st) => st === 'offline').length;
      if (e.parity === 0) {
        // Never dangling, never removed: nothing can rebuild it, and nothing proves it is gone.
        plan.refusal = NO_PARITY;
      } else if (sources.length < e.data) {
        plan.refusal = `more shards missing than parity can rebuild: ${sources.length} of ${n} shards are good, ${e.data} needed`;
        plan.dataLost = sources.length + offline < e.data;
      }
    }
  }
  return plan;
}
