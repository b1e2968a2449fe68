import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listPolicy, mergeSorted, parseListQuorum } from './list-merge.ts';

async function* fromArray<T>(xs: T[]): AsyncGenerator<T> {
  for (const x of xs) yield x;
}

describe('mergeSorted', () => {
  it('yields every distinct name once, ascending, with all sources holding it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uniqueArray(fc.string({ maxLength: 4 }), { maxLength: 20 }), { minLength: 1, maxLength: 5 }), async (lists) => {
        const sorted = lists.map((l) => [...l].sort().map((name) => ({ name })));
        const out: { name: string; srcs: number[] }[] = [];
        for await (const g of mergeSorted(sorted.map(fromArray))) out.push({ name: g.name, srcs: g.items.map((i) => i.src).sort() });
        const all = [...new Set(lists.flat())].sort();
        expect(out.map((o) => o.name)).toEqual(all);
        for (const o of out) {
          const want = lists.flatMap((l, i) => (l.includes(o.name) ? [i] : []));
          expect(o.srcs).toEqual(want);
        }
      }),
    );
  });
});

describe('list quorum policy', () => {
  it('parses modes, unknown values are strict', () => {
    expect(parseListQuorum(undefined)).toBe('optimal');
    expect(parseListQuorum('disk')).toBe('disk');
    expect(parseListQuorum('bogus')).toBe('strict');
  });
  it('asks the right number of drives', () => {
    expect(listPolicy('disk', 4).ask).toBe(1);
    expect(listPolicy('reduced', 4).ask).toBe(2);
    expect(listPolicy('optimal', 3).ask).toBe(3);
    const g = { quorum: 4 } as Parameters<ReturnType<typeof listPolicy>['threshold']>[0];
    expect(listPolicy('optimal', 3).threshold(g)).toBe(3);
    expect(listPolicy('optimal', 4).threshold({ quorum: 2 } as typeof g)).toBe(2);
    expect(listPolicy('strict', 3).threshold(g)).toBe(4);
  });
});
