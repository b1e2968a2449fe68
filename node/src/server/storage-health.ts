/**
 * Storage readiness of the pools: every erasure set needs read quorum
 * (K = N − STANDARD parity drives holding the pool's format in their slot;
 * for zero parity the `.svc.sys` quorum, see `readinessParity`); write
 * quorum (K, or K + 1 when K equals parity) feeds the cluster probe. Pure.
 */
import type { DriveFormatState, FormatFile } from '../storage/format.ts';
import { quorums, readinessParity } from 'svc-topology';

export interface SetHealth {
  readonly pool: number;
  readonly set: number;
  readonly online: number;
  readonly drives: number;
  readonly readQuorum: number;
  readonly writeQuorum: number;
}

export interface StorageHealthReport {
  readonly read: boolean;
  readonly write: boolean;
  readonly sets: readonly SetHealth[];
  readonly detail: string;
}

/** Online drives per set of one pool: drives whose format matches `reference`, counted at the slot the matrix gives them. */
export function onlinePerSet(reference: FormatFile, drives: readonly DriveFormatState[]): number[] {
  const slot = new Map<string, number>();
  reference.erasure.sets.forEach((row, s) => {
    for (const id of row) slot.set(id, s);
  });
  const refSets = JSON.stringify(reference.erasure.sets);
  const counted = new Set<string>();
  const online = reference.erasure.sets.map(() => 0);
  for (const d of drives) {
    if (d.state !== 'formatted' || d.format.id !== reference.id) continue;
    if (JSON.stringify(d.format.erasure.sets) !== refSets) continue;
    const s = slot.get(d.format.erasure.this);
    if (s === undefined || counted.has(d.format.erasure.this)) continue;
    counted.add(d.format.erasure.this);
    online[s] = (online[s] ?? 0) + 1;
  }
  return online;
}

export interface PoolHealthInput {
  readonly setDriveCount: number;
  readonly standardParity: number;
  readonly reference: FormatFile | undefined;
  readonly drives: readonly DriveFormatState[];
}

export function evaluateStorage(pools: readonly PoolHealthInput[]): StorageHealthReport {
  const sets: SetHealth[] = [];
  let read = true;
  let write = true;
  pools.forEach((p, pool) => {
    const q = quorums(p.setDriveCount, readinessParity(p.setDriveCount, p.standardParity));
    if (!p.reference) {
      read = false;
      write = false;
      return;
    }
    onlinePerSet(p.reference, p.drives).forEach((online, set) => {
      sets.push({ pool, set, online, drives: p.setDriveCount, readQuorum: q.read, writeQuorum: q.write });
      if (online < q.read) read = false;
      if (online < q.write) write = false;
    });
  });
  const below = sets.filter((s) => s.online < s.readQuorum);
  const short = sets.filter((s) => s.online < s.drives && s.online >= s.readQuorum);
  const offline = short.length === 0 ? '' : `; drives offline in ${short.map((s) => `pool ${s.pool} set ${s.set} (${s.online}/${s.drives} online)`).join(', ')}`;
  const detail = !pools.every((p) => p.reference)
    ? 'format quorum not reached'
    : below.length === 0
      ? `${sets.length} of ${sets.length} erasure sets have read quorum${offline}`
      : `${sets.length - below.length} of ${sets.length} erasure sets have read quorum; below: ${below.map((s) => `pool ${s.pool} set ${s.set} (${s.online}/${s.drives} online, ${s.readQuorum} needed)`).join(', ')}${offline}`;
  return { read, write, sets, detail };
}
