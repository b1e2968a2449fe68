import { describe, expect, it } from 'vitest';
import { mergeUsage, type UsageRecord } from './usage.ts';

const u = (objects: number, size: number) => ({ objects, versions: objects, deleteMarkers: 0, size, rawSize: size * 2 });

describe('mergeUsage', () => {
  it('takes each set once, from the newest scan, and sums per bucket and pool', () => {
    const a: UsageRecord = {
      v: 1,
      node: 'a',
      updatedAt: 10,
      sets: [
        { pool: 0, set: 0, scannedAt: 10, buckets: { b1: u(2, 100), b2: u(1, 5) } },
        { pool: 0, set: 1, scannedAt: 5, buckets: { b1: u(9, 999) } },
      ],
    };
    // Node b scanned set 0/1 later (node a went away meanwhile): its count wins.
    const b: UsageRecord = { v: 1, node: 'b', updatedAt: 20, sets: [{ pool: 0, set: 1, scannedAt: 20, buckets: { b1: u(3, 30) } }, { pool: 1, set: 0, scannedAt: 15, buckets: { b2: u(4, 40) } }] };
    const m = mergeUsage([a, b], 2);
    expect(m).toMatchObject({ lastUpdate: 20, objects: 10, size: 175, rawSize: 350, sets: 3 });
    expect(m.buckets).toEqual({ b1: u(5, 130), b2: u(5, 45) });
    expect(m.pools).toEqual([
      { pool: 0, objects: 6, versions: 6, size: 135, rawSize: 270 },
      { pool: 1, objects: 4, versions: 4, size: 40, rawSize: 80 },
    ]);
  });
});
