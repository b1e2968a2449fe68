import { describe, expect, it } from 'vitest';
import { MrfQueue } from './mrf.ts';
import { LocalNamespaceLocker } from './ns-lock.ts';

describe('LocalNamespaceLocker', () => {
  it('serialises writers and lets readers share', async () => {
    const l = new LocalNamespaceLocker();
    const order: string[] = [];
    const r1 = await l.rlock('b', 'o');
    const r2 = await l.rlock('b', 'o');
    const w = l.lock('b', 'o').then((rel) => {
      order.push('w');
      return rel;
    });
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    r1();
    r2();
    const rel = await w;
    expect(order).toEqual(['w']);
    const other = await l.lock('b', 'other');
    other();
    rel();
    expect(l.size).toBe(0);
  });
});

describe('MrfQueue', () => {
  it('is bounded and drains oldest first', () => {
    const q = new MrfQueue(2);
    let woken = 0;
    q.onEnqueue(() => woken++);
    for (const o of ['a', 'b', 'c']) q.enqueue({ bucket: 'b', object: o, versionId: 'null', pool: 0, set: 0, reason: 'read-missing', slots: [1] });
    expect(q.size).toBe(2);
    expect(q.dropped).toBe(1);
    expect(woken).toBe(3);
    expect(q.drain().map((e) => e.object)).toEqual(['b', 'c']);
    expect(q.size).toBe(0);
  });
});
