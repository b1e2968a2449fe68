/**
 * Places a pool's drives in their erasure-set slots. The slot of a drive
 * comes from its format (the set matrix); a drive whose format could not be
 * read (offline, replaced) keeps its command-line position, which is the
 * position a fresh format gave it. Pure.
 */
import type { SlotStatus } from '../storage/format.ts';
import type { Endpoint, PoolLayout } from 'svc-topology';

export function placeDrives<D>(layout: PoolLayout, slots: readonly SlotStatus[], driveOf: (ep: Endpoint) => D): D[][] {
  const sets: D[][] = Array.from({ length: layout.setCount }, () => new Array<D>(layout.setDriveCount));
  const placed = sets.map(() => new Array<boolean>(layout.setDriveCount).fill(false));
  const pending: number[] = [];
  layout.endpoints.forEach((ep, i) => {
    const slot = slots[i];
    if (slot?.status === 'ok' && slot.set < layout.setCount && slot.slot < layout.setDriveCount && !placed[slot.set]![slot.slot]) {
      sets[slot.set]![slot.slot] = driveOf(ep);
      placed[slot.set]![slot.slot] = true;
    } else pending.push(i);
  });
  for (const i of pending) {
    const s = Math.floor(i / layout.setDriveCount);
    let d = i % layout.setDriveCount;
    if (placed[s]![d]) d = placed[s]!.indexOf(false);
    sets[s]![d] = driveOf(layout.endpoints[i]!);
    placed[s]![d] = true;
  }
  return sets;
}
