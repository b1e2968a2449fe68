import { describe, expect, it } from 'vitest';
import type { SlotStatus } from '../storage/format.ts';
import { AUTO_PARITY, buildPoolLayouts } from 'svc-topology';
import { placeDrives } from './set-drives.ts';

const layout = buildPoolLayouts(['http://h{1...4}:9000/d{1...2}'], { storageClass: { standard: AUTO_PARITY, rrs: AUTO_PARITY }, cwd: '/' })[0]!;
const ok = (set: number, slot: number): SlotStatus => ({ status: 'ok', set, slot, driveId: `${set}-${slot}` });

describe('placeDrives', () => {
  it('puts formatted drives at their matrix slot and the rest at their command-line position', () => {
    expect(layout.setCount).toBe(1);
    const n = layout.endpoints.length;
    // Drives 0 and 1 were swapped on disk; drive 5 is offline.
    const slots: SlotStatus[] = layout.endpoints.map((_, i) => (i === 0 ? ok(0, 1) : i === 1 ? ok(0, 0) : i === 5 ? { status: 'offline', reason: 'down' } : ok(0, i)));
    const sets = placeDrives(layout, slots, (ep) => ep.raw);
    const raw = layout.endpoints.map((e) => e.raw);
    expect(sets).toEqual([[raw[1], raw[0], ...raw.slice(2)]]);
    expect(sets[0]!.length).toBe(n);
  });

  it('never places two drives in one slot', () => {
    // Drive 2 claims slot 3 (taken by drive 3's own format): it falls back to a free slot.
    const slots: SlotStatus[] = layout.endpoints.map((_, i) => (i === 2 ? ok(0, 3) : i === 3 ? ok(0, 3) : ok(0, i)));
    const sets = placeDrives(layout, slots, (ep) => ep.raw);
    expect(new Set(sets[0]).size).toBe(layout.endpoints.length);
    expect(sets[0]!.every((d) => typeof d === 'string')).toBe(true);
  });
});
