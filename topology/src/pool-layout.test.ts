import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Endpoint, endpointKey } from './endpoint.ts';
import { buildPoolLayouts, isSingleDrive } from './pool-layout.ts';
import { validSetWidths } from './set-width.ts';
import { parseParity } from './storage-class.ts';

const autoSc = { standard: parseParity('S', undefined), rrs: parseParity('R', undefined) };
const opts = (extra: Record<string, unknown> = {}) => ({ storageClass: autoSc, cwd: '/srv', ...extra });

function err(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected a throw');
}

const host = (e: Endpoint) => (e.kind === 'url' ? e.host : 'local');

describe('pool layout', () => {
  it('four local drives: one set of four, parity 2', () => {
    const [p] = buildPoolLayouts(['/x/d{1...4}'], opts());
    expect(p).toMatchObject({ index: 0, cmdline: '/x/d{1...4}', setCount: 1, setDriveCount: 4, ellipsis: true });
    expect(p!.parity).toEqual({ standard: 2, rrs: 1, standardAuto: true, rrsAuto: true });
    expect(p!.sets[0]!.map((e) => e.raw)).toEqual(['/x/d1', '/x/d2', '/x/d3', '/x/d4']);
  });
  it('single local path is the single-drive layout', () => {
    const [p] = buildPoolLayouts(['./data'], opts());
    expect(isSingleDrive(p!)).toBe(true);
    expect(p).toMatchObject({ setCount: 1, setDriveCount: 1, ellipsis: false });
    expect(p!.endpoints[0]).toMatchObject({ path: '/srv/data' });
    expect(p!.parity).toMatchObject({ standard: 0, rrs: 0, standardAuto: true });
  });
  it('8 drives give one set of 8; pinned 4 gives two sets', () => {
    expect(buildPoolLayouts(['/x/d{1...8}'], opts())[0]).toMatchObject({ setCount: 1, setDriveCount: 8 });
    const [p] = buildPoolLayouts(['/x/d{1...8}'], opts({ setDriveCount: 4 }));
    expect(p).toMatchObject({ setCount: 2, setDriveCount: 4 });
    expect(p!.sets[1]!.map((e) => e.raw)).toEqual(['/x/d5', '/x/d6', '/x/d7', '/x/d8']);
  });
  it('refuses an invalid pinned width with the valid list', () => {
    const e = err(() => buildPoolLayouts(['/x/d{1...8}'], opts({ setDriveCount: 3 })));
    expect(e.code).toBe('InvalidTopology');
    expect(e.message).toContain('valid widths: 2, 4, 8');
    expect(err(() => buildPoolLayouts(['/x/d{1...32}'], opts({ setDriveCount: 32 }))).code).toBe('InvalidTopology');
  });
  it('refuses counts with no width in 2..16', () => {
    expect(err(() => buildPoolLayouts(['/x/d{1...17}'], opts())).message).toContain('17 drives');
  });
  it('multi-pool validation', () => {
    const pools = buildPoolLayouts(['/a/d{1...4}', '/b/d{1...6}'], opts());
    expect(pools.map((p) => [p.index, p.setDriveCount])).toEqual([
      [0, 4],
      [1, 6],
    ]);
    expect(err(() => buildPoolLayouts(['/a/d{1...4}', '/b/d1'], opts())).message).toContain('"/b/d1" has no ellipsis');
    expect(err(() => buildPoolLayouts(['/a/d{1...4}', '/b/d{3...3}'], opts())).message).toContain('at least two distinct');
    expect(err(() => buildPoolLayouts(['/a/d{1...4}', '/a/d{3...6}'], opts())).message).toContain('appears in pool');
    expect(err(() => buildPoolLayouts(['/a/d{1...4}', 'http://h{1...4}:9000/d'], opts())).message).toContain('mix');
    // TLS is all nodes or none
    expect(err(() => buildPoolLayouts(['https://h{1...4}:9000/d', 'http://g{1...4}:9000/d'], opts())).message).toContain(
      'volume arguments mix http:// (http://g1:9000/d) and https:// (https://h1:9000/d) endpoints',
    );
    expect(buildPoolLayouts(['https://h{1...4}:9000/d', 'https://g{1...4}:9000/d'], opts())).toHaveLength(2);
  });
  it('refuses a drive nested inside another drive', () => {
    expect(err(() => buildPoolLayouts(['/a/d{1...4}', '/a/d1/x{1...4}'], opts())).message).toContain('lies inside drive /a/d1');
    expect(err(() => buildPoolLayouts(['http://h{1...2}:9000/d{1...2}', 'http://h{1...2}:9000/d1/sub{1...2}'], opts())).message).toContain('lies inside');
    // same path on different hosts, and sibling prefixes, are fine
    expect(buildPoolLayouts(['/a/d{1...2}', '/a/d1x{1...2}'], opts())).toHaveLength(2);
    expect(buildPoolLayouts(['http://h{1...4}:9000/d{1...2}'], opts())).toHaveLength(1);
  });
  it('single pool validation', () => {
    expect(err(() => buildPoolLayouts(['/d{3...3}'], opts())).message).toContain('at least two distinct');
    expect(err(() => buildPoolLayouts(['http://h:9000/d'], opts())).message).toContain('single-drive layout must be a local path');
    expect(err(() => buildPoolLayouts([], opts())).message).toContain('SVC_VOLUMES');
    expect(err(() => buildPoolLayouts(['/x/d{1...4}'], opts({ storageClass: { ...autoSc, standard: parseParity('S', 'EC:3') } }))).code).toBe(
      'InvalidStorageClassConfig',
    );
  });

  const grid = (hosts: number, drives: number) => buildPoolLayouts([`http://h{1...${hosts}}:9000/d{1...${drives}}`], opts())[0]!;

  it('16 hosts x 16 drives: 16 sets of 16, each spanning all hosts', () => {
    const p = grid(16, 16);
    expect([p.setCount, p.setDriveCount]).toEqual([16, 16]);
    for (const s of p.sets) expect(new Set(s.map(host)).size).toBe(16);
  });
  it('3 hosts x 5 drives: one set of 15', () => {
    const p = grid(3, 5);
    expect([p.setCount, p.setDriveCount]).toEqual([1, 15]);
    expect(p.parity.standard).toBe(4);
  });
  it('1 host x 2 drives: one set of 2', () => {
    const p = grid(1, 2);
    expect([p.setCount, p.setDriveCount]).toEqual([1, 2]);
    expect(p.parity).toMatchObject({ standard: 1, rrs: 1 });
  });

  it('property: sets partition the endpoints in order, width valid and maximal, hosts spread evenly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 16 }), (hosts, drives) => {
        const n = hosts * drives;
        const widths = validSetWidths(n, hosts > 1 ? [hosts, drives] : [drives]);
        if (n < 2 || widths.length === 0) {
          expect(() => grid(hosts, drives)).toThrow();
          return;
        }
        const p = grid(hosts, drives);
        expect(p.setDriveCount).toBe(Math.max(...widths));
        expect(p.setDriveCount).toBeGreaterThanOrEqual(2);
        expect(p.setDriveCount).toBeLessThanOrEqual(16);
        expect(p.setCount * p.setDriveCount).toBe(n);
        expect(p.sets.flat().map(endpointKey)).toEqual(p.endpoints.map(endpointKey));
        expect(new Set(p.endpoints.map(endpointKey)).size).toBe(n);
        // symmetry: every set holds the same number of drives from each of its hosts
        for (const s of p.sets) {
          const count = new Map<string, number>();
          for (const e of s) count.set(host(e), (count.get(host(e)) ?? 0) + 1);
          expect(new Set(count.values()).size).toBe(1);
        }
        expect(p.parity.standard).toBeLessThanOrEqual(p.setDriveCount / 2);
      }),
    );
  });
});
