import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { writeChunks } from './write-chunks.ts';

/** A source that refills one buffer for every chunk (as `reuseBuffers` reads do). */
function refilling(count: number, size: number, state: { finished: boolean }): AsyncGenerator<Uint8Array> {
  return (async function* () {
    const buf = Buffer.alloc(size);
    try {
      for (let i = 0; i < count; i++) {
        buf.fill(i);
        yield buf;
      }
    } finally {
      state.finished = true;
    }
  })();
}

/** A sink that, like a socket with a full send buffer, takes the bytes only some time after `write`. */
function lateSink(seen: number[][]): Writable {
  return new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _enc, done) {
      setTimeout(() => {
        seen.push([...new Set(chunk)]);
        done();
      }, 2);
    },
  });
}

describe('writeChunks', () => {
  it('pulls the next chunk only after the previous write completed', async () => {
    const seen: number[][] = [];
    const state = { finished: false };
    await writeChunks(refilling(20, 4096, state), lateSink(seen));
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => [i]));
    expect(state.finished).toBe(true);
  });

  it('a stream pipeline over the same source hands the sink overwritten chunks (why writeChunks exists)', async () => {
    const seen: number[][] = [];
    await pipeline(Readable.from(refilling(20, 4096, { finished: false }), { objectMode: false }), lateSink(seen));
    const intact = seen.every((s, i) => s.length === 1 && s[0] === i);
    expect(intact).toBe(false);
  });

  it('stops the source and rejects when the destination closes first', async () => {
    const state = { finished: false };
    let writes = 0;
    const sink = new Writable({
      write(_chunk, _enc, done) {
        writes++;
        if (writes === 3) {
          sink.destroy();
          return;
        }
        setImmediate(done);
      },
    });
    await expect(writeChunks(refilling(100, 1024, state), sink)).rejects.toThrow();
    expect(state.finished).toBe(true);
    expect(writes).toBe(3);
  });

  it('destroys the destination when the source fails', async () => {
    const sink = new Writable({
      write(_chunk, _enc, done) {
        done();
      },
    });
    const failing = (async function* () {
      yield Buffer.from('a');
      throw new Error('read quorum lost');
    })();
    await expect(writeChunks(failing, sink)).rejects.toThrow('read quorum lost');
    expect(sink.destroyed).toBe(true);
  });
});
