import { describe, expect, it } from 'vitest';
import { ShardReaders } from './shard-readers.ts';

/** A slot's stream: blocks of `len` bytes filled with the slot number, or one that never delivers. */
function stream(slot: number, len: number, hang = false): AsyncGenerator<Uint8Array> {
  return (async function* () {
    for (;;) {
      if (hang) await new Promise<void>(() => undefined);
      yield new Uint8Array(len).fill(slot);
    }
  })();
}

describe('ShardReaders', () => {
  it('reads K shards a block, preferring the first K slots', async () => {
    const opened: number[] = [];
    const r = new ShardReaders([0, 1, 2, 3], 2, async (s) => (opened.push(s), stream(s, 4)), () => undefined);
    for (let b = 0; b < 3; b++) expect([...(await r.block(b, 4)).keys()].sort()).toEqual([0, 1]);
    expect(opened).toEqual([0, 1]);
    await r.close();
  });

  it('never waits on a hung stream once K shards are in: a spare is hedged in and the straggler dropped', async () => {
    const fails: number[] = [];
    const r = new ShardReaders([0, 1, 2, 3], 2, async (s) => stream(s, 4, s === 1), (s) => fails.push(s), { hedgeMs: 20 });
    const t0 = performance.now();
    const got = await r.block(0, 4);
    expect([...got.keys()].sort()).toEqual([0, 2]);
    expect(got.get(2)).toEqual(new Uint8Array(4).fill(2));
    // The next blocks come from the two that answered; the hung slot is not asked again while they serve.
    for (let b = 1; b < 4; b++) expect([...(await r.block(b, 4)).keys()].sort()).toEqual([0, 2]);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(fails).toEqual([]);
    await r.close();
  });

  it('fails over on an error and reports it; fewer than K left is ErasureReadQuorum', async () => {
    const fails: number[] = [];
    const bad = (async function* () {
      yield new Uint8Array(4).fill(1);
      throw Object.assign(new Error('gone'), { code: 'EIO' });
    })();
    const r = new ShardReaders([0, 1, 2], 2, async (s) => (s === 1 ? bad : stream(s, 4)), (s) => fails.push(s), { hedgeMs: 0 });
    expect([...(await r.block(0, 4)).keys()].sort()).toEqual([0, 1]);
    expect([...(await r.block(1, 4)).keys()].sort()).toEqual([0, 2]);
    expect(fails).toEqual([1]);
    const lone = new ShardReaders([0], 2, async (s) => stream(s, 4), () => undefined);
    await expect(lone.block(0, 4)).rejects.toMatchObject({ code: 'ErasureReadQuorum' });
  });
});
