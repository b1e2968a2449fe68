import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopologyError } from './errors.ts';
import { expandEllipsis, hasEllipsis, parseArgPattern, patternSize } from './ellipsis.ts';

describe('ellipsis expansion', () => {
  it('expands numeric ranges', () => {
    expect(expandEllipsis('/mnt/d{1...4}')).toEqual(['/mnt/d1', '/mnt/d2', '/mnt/d3', '/mnt/d4']);
  });
  it('zero-pads when the start has a leading zero', () => {
    const out = expandEllipsis('/d{01...16}');
    expect(out[0]).toBe('/d01');
    expect(out[9]).toBe('/d10');
    expect(out).toHaveLength(16);
    expect(expandEllipsis('/d{001...3}')).toEqual(['/d001', '/d002', '/d003']);
    expect(expandEllipsis('/d{8...10}')).toEqual(['/d8', '/d9', '/d10']);
  });
  it('expands alphabetic ranges', () => {
    expect(expandEllipsis('/x/{a...d}')).toEqual(['/x/a', '/x/b', '/x/c', '/x/d']);
    expect(expandEllipsis('/x/{A...C}')).toEqual(['/x/A', '/x/B', '/x/C']);
  });
  it('uses the last range as the outer loop', () => {
    expect(expandEllipsis('http://h{1...2}:9000/d{1...3}')).toEqual([
      'http://h1:9000/d1',
      'http://h2:9000/d1',
      'http://h1:9000/d2',
      'http://h2:9000/d2',
      'http://h1:9000/d3',
      'http://h2:9000/d3',
    ]);
  });
  it('leaves arguments without ranges alone', () => {
    expect(hasEllipsis('/mnt/data')).toBe(false);
    expect(expandEllipsis('/mnt/data')).toEqual(['/mnt/data']);
    expect(hasEllipsis('/d{3...3}')).toBe(true);
    expect(expandEllipsis('/d{3...3}')).toEqual(['/d3']);
  });
  it.each([
    ['/d{4...1}', 'start greater than end'],
    ['/d{1..4}', 'do not hold a range'],
    ['/d{1...4', 'unbalanced'],
    ['/d1...4}', 'unbalanced'],
    ['/d{a...4}', 'numeric'],
    ['/d{a...D}', 'numeric'],
    ['/d{1...2...3}', 'malformed'],
    ['/d{1...100000}', 'larger than'],
  ])('rejects %s', (arg, msg) => {
    let err: unknown;
    try {
      expandEllipsis(arg);
    } catch (e) {
      err = e;
    }
    expect(err instanceof TopologyError && err.code === 'InvalidTopology').toBe(true);
    expect(String((err as Error).message)).toContain(msg);
  });

  it('property: size is the product of range sizes, every value distinct, first range fastest', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 6 })), { minLength: 1, maxLength: 3 }), (ranges) => {
        const arg = ranges.map(([s, n], i) => `/p${i}-{${s}...${s + n - 1}}`).join('');
        const out = expandEllipsis(arg);
        const product = ranges.reduce((acc, [, n]) => acc * n, 1);
        expect(out).toHaveLength(product);
        expect(patternSize(parseArgPattern(arg))).toBe(product);
        expect(new Set(out).size).toBe(product);
        // first range varies fastest: the first n0 outputs differ only in range 0
        const [s0, n0] = ranges[0]!;
        for (let k = 0; k < n0; k++) expect(out[k]!.startsWith(`/p0-${s0 + k}`)).toBe(true);
        // last range is the outer loop: it changes every product/nLast entries
        const nLast = ranges[ranges.length - 1]![1];
        const block = product / nLast;
        const tail = (s: string) => s.slice(s.lastIndexOf('-'));
        for (let k = 0; k < product; k++) expect(tail(out[k]!)).toBe(tail(out[Math.floor(k / block) * block]!));
      }),
    );
  });

  it('property: zero padded values all have the start width', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 4 }), fc.integer({ min: 1, max: 50 }), (width, n) => {
        const start = '0'.repeat(width - 1) + '1';
        const out = expandEllipsis(`/d{${start}...${n + 1}}`);
        for (const v of out) expect(v.length).toBe(2 + Math.max(width, String(n + 1).length));
      }),
    );
  });
});
