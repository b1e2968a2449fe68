import { Readable } from 'node:stream';
import { xxh64 } from '@node-rs/xxhash';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BITROT_HASH_SIZE,
  BitrotVerifier,
  bitrotHash,
  bitrotHashShards,
  bitrotVerify,
  frameOffset,
  frameRange,
  FrameStreamCheck,
  frameShardFileSize,
  verifyShardStream,
} from './bitrot.ts';

/** Builds a framed shard file the way the storage layer writes one. */
function frame(data: Uint8Array, blockSize: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let off = 0; off < data.length; off += blockSize) {
    const block = data.subarray(off, Math.min(off + blockSize, data.length));
    parts.push(bitrotHash(block), block);
  }
  return Buffer.concat(parts);
}

describe('bitrot framing', () => {
  it('the hash is canonical (big-endian) XXH64 with seed 0', () => {
    const h = bitrotHash(Buffer.from('abc'));
    expect(h.length).toBe(BITROT_HASH_SIZE);
    expect(Buffer.from(h).toString('hex')).toBe('44bc2cf5ad770999');
    expect(Buffer.from(h).readBigUInt64BE(0)).toBe(xxh64(Buffer.from('abc')));
    const big = Buffer.alloc(100_003, 7);
    expect(Buffer.from(bitrotHash(big)).readBigUInt64BE(0)).toBe(xxh64(big));
  });

  it('hashes all shards of a stripe in one call', () => {
    const shards = [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(5000, 1)];
    const all = bitrotHashShards(shards);
    expect(all.length).toBe(3 * BITROT_HASH_SIZE);
    shards.forEach((s, i) => {
      expect(Buffer.from(all.subarray(8 * i, 8 * i + 8)).equals(Buffer.from(bitrotHash(s)))).toBe(true);
    });
  });

  it('file sizes and offsets', () => {
    expect(frameShardFileSize(0, 100)).toBe(0);
    expect(frameShardFileSize(100, 100)).toBe(108);
    expect(frameShardFileSize(101, 100)).toBe(117);
    expect(frameOffset(3, 100)).toBe(324);
    expect(frameRange(1, 2, 100, 250)).toEqual({ offset: 108, length: 166 });
    expect(frameRange(0, 0, 100, 250)).toEqual({ offset: 0, length: 108 });
    expect(() => frameRange(3, 3, 100, 250)).toThrow();
  });

  it('a flipped byte anywhere in a frame is detected', () => {
    const data = Uint8Array.from({ length: 64 }, (_, i) => i * 7);
    const file = frame(data, 64);
    for (let i = 0; i < file.length; i++) {
      const bad = Uint8Array.from(file);
      bad[i]! ^= 1 << (i % 8);
      expect(bitrotVerify(bad.subarray(BITROT_HASH_SIZE), bad, 0)).toBe(false);
    }
    expect(bitrotVerify(file.subarray(BITROT_HASH_SIZE), file, 0)).toBe(true);
  });

  it('the streaming verifier yields the data for any chunking', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 2000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 10 }),
        (data, blockSize, cuts) => {
          const file = frame(data, blockSize);
          const v = new BitrotVerifier(blockSize, data.length);
          const out: Uint8Array[] = [];
          let pos = 0;
          let c = 0;
          while (pos < file.length) {
            const n = cuts[c++ % cuts.length]!;
            out.push(...v.push(file.subarray(pos, pos + n)));
            pos += n;
          }
          v.end();
          expect(Buffer.concat(out).equals(Buffer.from(data))).toBe(true);
          expect(out.length).toBe(Math.ceil(data.length / blockSize));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('the streaming verifier reports the corrupt block, short and long files', async () => {
    const data = Buffer.alloc(1000, 3);
    const file = frame(data, 256);
    const bad = Buffer.from(file);
    bad[frameOffset(2, 256) + BITROT_HASH_SIZE + 10]! ^= 0x40;
    const v = new BitrotVerifier(256, 1000);
    expect(v.push(bad.subarray(0, frameOffset(2, 256))).length).toBe(2);
    expect(() => v.push(bad.subarray(frameOffset(2, 256)))).toThrow(
      expect.objectContaining({ code: 'FileCorrupt', details: { block: 2 } }),
    );

    const short = new BitrotVerifier(256, 1000);
    short.push(file.subarray(0, file.length - 1));
    expect(() => short.end()).toThrow(expect.objectContaining({ code: 'FileCorrupt' }));

    const long = new BitrotVerifier(256, 1000);
    expect(() => long.push(Buffer.concat([file, Buffer.alloc(1)]))).toThrow(expect.objectContaining({ code: 'FileCorrupt' }));

    const blocks: Uint8Array[] = [];
    for await (const b of verifyShardStream(Readable.from([file.subarray(0, 500), file.subarray(500)]), 256, 1000)) {
      blocks.push(b);
    }
    expect(Buffer.concat(blocks).equals(data)).toBe(true);
    await expect(async () => {
      for await (const _ of verifyShardStream(Readable.from([bad]), 256, 1000)) {
        // drain
      }
    }).rejects.toMatchObject({ code: 'FileCorrupt' });
  });

  it('a ranged read verifies from a middle block', () => {
    const data = Uint8Array.from({ length: 1000 }, (_, i) => i & 255);
    const file = frame(data, 256);
    const r = frameRange(2, 3, 256, 1000);
    const v = new BitrotVerifier(256, 1000 - 512, 2);
    const blocks = v.push(file.subarray(r.offset, r.offset + r.length));
    v.end();
    expect(Buffer.concat(blocks).equals(Buffer.from(data.subarray(512)))).toBe(true);
  });
});

/** Cuts `buf` at the given (sorted, deduplicated) offsets. */
function cut(buf: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.filter((x) => x > 0 && x < buf.length))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  out.push(buf.subarray(prev));
  return out;
}

describe('FrameStreamCheck (write-time frame check, any chunking)', () => {
  const arb = fc.record({
    blockSize: fc.integer({ min: 1, max: 300 }),
    size: fc.integer({ min: 1, max: 2000 }),
    cuts: fc.array(fc.nat({ max: 3000 }), { maxLength: 20 }),
    flip: fc.nat(),
  });

  it('passes a good stream cut anywhere and counts its data bytes', () => {
    fc.assert(
      fc.property(arb, ({ blockSize, size, cuts }) => {
        const data = new Uint8Array(size).map((_, i) => (i * 31 + size) & 0xff);
        const file = frame(data, blockSize);
        const check = new FrameStreamCheck(blockSize);
        // Each chunk is overwritten after push: the check must not keep references to it.
        for (const c of cut(file, cuts)) {
          const copy = Uint8Array.from(c);
          check.push(copy);
          copy.fill(0xee);
        }
        check.finish();
        expect(check.dataBytes).toBe(size);
      }),
      { numRuns: 500 },
    );
  });

  it('throws FileCorrupt for any flipped byte, however the stream is cut', () => {
    fc.assert(
      fc.property(arb, ({ blockSize, size, cuts, flip }) => {
        const data = new Uint8Array(size).map((_, i) => (i * 7 + 3) & 0xff);
        const file = Uint8Array.from(frame(data, blockSize));
        file[flip % file.length]! ^= 0x40;
        const check = new FrameStreamCheck(blockSize);
        expect(() => {
          for (const c of cut(file, cuts)) check.push(c);
          check.finish();
        }).toThrow(expect.objectContaining({ code: 'FileCorrupt' }));
      }),
      { numRuns: 500 },
    );
  });

  it('several whole frames in one chunk are checked together; a bad one is reported at its own offset', () => {
    const blockSize = 4096;
    const file = Uint8Array.from(frame(new Uint8Array(6 * blockSize).map((_, i) => (i * 13) & 0xff), blockSize));
    const good = new FrameStreamCheck(blockSize);
    good.push(file);
    good.finish();
    expect(good.dataBytes).toBe(6 * blockSize);
    for (const bad of [0, 2, 5]) {
      const copy = Uint8Array.from(file);
      copy[bad * (8 + blockSize) + 8 + 100]! ^= 1;
      const check = new FrameStreamCheck(blockSize);
      // The first frame alone, then the other five in one chunk.
      const first = 8 + blockSize;
      expect(() => {
        check.push(copy.subarray(0, first));
        check.push(copy.subarray(first));
      }).toThrow(expect.objectContaining({ code: 'FileCorrupt', details: { offset: bad * (8 + blockSize) } }));
    }
  });

  it('a stream torn inside a frame header is corrupt; an empty stream holds no data', () => {
    const file = frame(new Uint8Array(100).fill(9), 64);
    const torn = new FrameStreamCheck(64);
    torn.push(file.subarray(0, 8 + 64 + 5));
    expect(() => torn.finish()).toThrow(expect.objectContaining({ code: 'FileCorrupt' }));
    const empty = new FrameStreamCheck(64);
    empty.finish();
    expect(empty.dataBytes).toBe(0);
  });
});
