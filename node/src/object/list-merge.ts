/**
 * Merge-walk helpers for listings: k-way merge of name-sorted async streams
 * (drives of a set, then sets and pools), and the list-quorum policy
 * (`SVC_LIST_OBJECTS_QUORUM`).
 */
import type { VersionGroup } from './quorum.ts';
import { compareKeys } from '../util/key-order.ts';

export type ListQuorum = 'disk' | 'reduced' | 'optimal' | 'auto' | 'strict';

/** Parses the configured list quorum: `disk`, `reduced`, `optimal` (default), `auto`; anything else strict. */
export function parseListQuorum(v: string | undefined): ListQuorum {
  if (v === undefined || v === '') return 'optimal';
  return v === 'disk' || v === 'reduced' || v === 'optimal' || v === 'auto' ? v : 'strict';
}

/**
 * How many of a set's N drives a listing walks, and how many of them must
 * hold a version (or prefix) for it to be listed:
 * - disk: one drive, seen once;
 * - reduced: two drives, seen once;
 * - optimal / auto: every drive, seen on min(read quorum, drives that answered);
 * - strict: all N drives must answer, a version needs its read quorum.
 */
export function listPolicy(mode: ListQuorum, online: number): { ask: number; threshold(g: VersionGroup | undefined): number } {
  switch (mode) {
    case 'disk':
      return { ask: Math.min(1, online), threshold: () => 1 };
    case 'reduced':
      return { ask: Math.min(2, online), threshold: () => 1 };
    case 'optimal':
    case 'auto': {
      // A version needs its read quorum, capped at the drives that answered:
      // listing keeps working with drives down (EC:0 included) without ever
      // listing a partial write that GET would not serve.
      const half = Math.max(1, Math.ceil(online / 2));
      return { ask: online, threshold: (g) => (g ? Math.min(g.quorum, online) : half) };
    }
    default:
      return { ask: online, threshold: (g) => (g ? g.quorum : Math.max(1, Math.ceil(online / 2))) };
  }
}

/**
 * Merges name-sorted streams; yields, per distinct name in ascending order,
 * the items of every stream carrying that name (with their stream index).
 */
export async function* mergeSorted<T extends { name: string }>(
  streams: AsyncIterable<T>[],
): AsyncGenerator<{ name: string; items: { src: number; item: T }[] }> {
  const its = streams.map((s) => s[Symbol.asyncIterator]());
  const heads: (T | undefined)[] = await Promise.all(its.map(async (it) => (await it.next()).value as T | undefined));
  try {
    for (;;) {
      let min: string | undefined;
      for (const h of heads) if (h !== undefined && (min === undefined || compareKeys(h.name, min) < 0)) min = h.name;
      if (min === undefined) return;
      const items: { src: number; item: T }[] = [];
      const advance: number[] = [];
      heads.forEach((h, i) => {
        if (h !== undefined && h.name === min) {
          items.push({ src: i, item: h });
          advance.push(i);
        }
      });
      yield { name: min, items };
      await Promise.all(
        advance.map(async (i) => {
          const r = await its[i]!.next();
          heads[i] = r.done ? undefined : r.value;
        }),
      );
    }
  } finally {
    await Promise.all(its.map((it) => it.return?.(undefined)));
  }
}
