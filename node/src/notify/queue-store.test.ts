import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueStore } from './queue-store.ts';

const dirs: string[] = [];
async function dir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'svc-queue-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('queue store', () => {
  it('keeps order, hides entries still being written, and never passes its limit', async () => {
    const q = new QueueStore<{ n: number }>(join(await dir(), 'q'), 50);
    await q.open();
    // Many concurrent puts while a reader peeks: every peeked entry is whole, none is lost.
    const seen: number[] = [];
    let stop = false;
    const reader = (async () => {
      while (!stop || q.length > 0) {
        const got = await q.peek(10, ['ready'], (id, err) => {
          throw new Error(`entry ${id} unreadable: ${String(err)}`);
        });
        for (const e of got) seen.push(e.value.n);
        await q.remove(got.map((e) => e.id));
        await new Promise((r) => setImmediate(r));
      }
    })();
    await Promise.all(Array.from({ length: 40 }, (_, n) => q.put([{ n }])));
    stop = true;
    await reader;
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, n) => n));
    const full = new QueueStore<number>(join(await dir(), 'full'), 3);
    await full.open();
    await full.put([1, 2]);
    await expect(full.put([3, 4])).rejects.toMatchObject({ code: 'XSvcNotifyQueueFull' });
    expect(full.length).toBe(2);
    expect((await full.peek(10)).map((e) => e.value)).toEqual([1, 2]);
  });

  it('survives a reopen: ready entries stay ready, prepared ones come back unsettled, temporary files go', async () => {
    const d = join(await dir(), 'q');
    const q = new QueueStore<string>(d, 10);
    await q.open();
    const [a] = await q.put(['a']);
    const [b] = await q.put(['b'], 'prepared');
    const [c] = await q.put(['c'], 'prepared');
    await q.confirm([c!]);
    expect(q.counts()).toEqual({ ready: 2, prepared: 1, unsettled: 0 });
    const again = new QueueStore<string>(d, 10);
    await again.open();
    expect(again.counts()).toEqual({ ready: 2, prepared: 0, unsettled: 1 });
    expect((await again.peek(10, ['ready'])).map((e) => [e.id, e.value])).toEqual([
      [a, 'a'],
      [c, 'c'],
    ]);
    expect((await again.peek(10, ['unsettled'])).map((e) => e.id)).toEqual([b]);
    await again.put(['d']);
    expect((await readdir(d)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect((await again.peek(10)).map((e) => e.value)).toEqual(['a', 'c', 'd']);
  });
});
