import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BITROT_HASH_SIZE, bitrotHash } from './bitrot.ts';
import { createTsCodec } from './codec-ts.ts';
import {
  BLOCK_SIZE,
  decodeStripe,
  encodeFilledFramedStripe,
  encodeFramedStripe,
  encodeStripe,
  fillFramedStripe,
  framedStripeBufferSize,
  shardFileDataSize,
  shardSize,
  shardStride,
  stripeBufferSize,
} from './stripe.ts';

describe('stripe split and join', () => {
  it('shard sizes', () => {
    expect(BLOCK_SIZE).toBe(1048576);
    expect(shardSize(BLOCK_SIZE, 12)).toBe(87382);
    expect(shardSize(1, 4)).toBe(1);
    expect(shardSize(0, 4)).toBe(0);
    expect(shardFileDataSize(0, BLOCK_SIZE, 4)).toBe(0);
    expect(shardFileDataSize(BLOCK_SIZE + 1, BLOCK_SIZE, 4)).toBe(262144 + 1);
    expect(shardFileDataSize(3 * BLOCK_SIZE, BLOCK_SIZE, 12)).toBe(3 * 87382);
  });

  it('strides are 64-byte aligned and never a multiple of 4 KiB', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1 << 21 }), (s) => {
        const st = shardStride(s);
        expect(st).toBeGreaterThanOrEqual(s);
        expect(st % 64).toBe(0);
        expect(st % 4096).not.toBe(0);
      }),
    );
  });

  it('encodeStripe splits into K zero-padded shards plus parity', () => {
    const codec = createTsCodec(4, 2);
    const block = Uint8Array.from({ length: 10 }, (_, i) => i + 1);
    const shards = encodeStripe(codec, block);
    expect(shards.length).toBe(6);
    expect(shards.map((s) => Array.from(s))).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
      [10, 0, 0],
      expect.any(Array),
      expect.any(Array),
    ]);
    const check = shards.slice(0, 4).map((s) => Uint8Array.from(s));
    const parity = [new Uint8Array(3), new Uint8Array(3)];
    codec.encode([...check, ...parity]);
    expect(Uint8Array.from(shards[4]!)).toEqual(parity[0]);
    expect(Uint8Array.from(shards[5]!)).toEqual(parity[1]);
    // One buffer for all shards.
    expect(new Set(shards.map((s) => s.buffer)).size).toBe(1);
  });

  it('round trips through any ≤ M missing shards, input shards untouched', () => {
    for (const [k, m] of [[1, 0], [2, 2], [4, 2], [8, 4], [12, 4], [8, 8]] as const) {
      const codec = createTsCodec(k, m);
      fc.assert(
        fc.property(
          fc.uint8Array({ minLength: 0, maxLength: 3000 }),
          fc.shuffledSubarray([...Array(k + m).keys()], { minLength: 0, maxLength: m }),
          (block, lost) => {
            const shards: (Uint8Array | null)[] = encodeStripe(codec, block);
            const kept = shards.map((s) => (s === null ? null : Uint8Array.from(s)));
            for (const i of lost) shards[i] = null;
            const out = decodeStripe(codec, shards, block.length);
            expect(Buffer.from(out).equals(Buffer.from(block))).toBe(true);
            shards.forEach((s, i) => {
              if (s !== null) expect(Uint8Array.from(s)).toEqual(kept[i]);
            });
          },
        ),
        { numRuns: 25 },
      );
    }
  });

  it('encodeStripe and decodeStripe reuse a caller buffer', () => {
    const codec = createTsCodec(4, 2);
    const block = Uint8Array.from({ length: 5000 }, (_, i) => (i * 13) & 255);
    const buf = new Uint8Array(stripeBufferSize(codec, block.length)).fill(0xee);
    const shards: (Uint8Array | null)[] = encodeStripe(codec, block, buf);
    expect(shards.every((s) => s!.buffer === buf.buffer)).toBe(true);
    const fresh = encodeStripe(codec, block);
    shards.forEach((s, i) => {
      expect(Buffer.from(s!).equals(Buffer.from(fresh[i]!))).toBe(true);
    });
    shards[1] = null;
    const out = new Uint8Array(4 * 1250);
    const joined = decodeStripe(codec, shards, block.length, out);
    expect(joined.buffer).toBe(out.buffer);
    expect(Buffer.from(joined).equals(Buffer.from(block))).toBe(true);
    expect(() => encodeStripe(codec, block, new Uint8Array(10))).toThrow(expect.objectContaining({ code: 'InternalError' }));
    expect(() => decodeStripe(codec, shards, block.length, new Uint8Array(10))).toThrow(
      expect.objectContaining({ code: 'InternalError' }),
    );
  });

  it('encodeFramedStripe gives [hash][shard] frames equal to encodeStripe + bitrotHash', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 5000 }), fc.boolean(), (block, reuse) => {
        const codec = createTsCodec(4, 2);
        const buf = reuse ? new Uint8Array(framedStripeBufferSize(codec, block.length)).fill(0xcc) : undefined;
        const { frames, shards } = encodeFramedStripe(codec, block, buf);
        const plain = encodeStripe(codec, block);
        expect(frames.length).toBe(6);
        for (let i = 0; i < 6; i++) {
          expect(frames[i]!.length).toBe(BITROT_HASH_SIZE + plain[i]!.length);
          expect(Buffer.from(shards[i]!).equals(Buffer.from(plain[i]!))).toBe(true);
          expect(Buffer.from(frames[i]!.subarray(0, BITROT_HASH_SIZE)).equals(Buffer.from(bitrotHash(plain[i]!)))).toBe(true);
          expect(shards[i]!.buffer).toBe(frames[i]!.buffer);
          if (buf) expect(frames[i]!.buffer).toBe(buf.buffer);
        }
      }),
      { numRuns: 40 },
    );
    expect(() => encodeFramedStripe(createTsCodec(2, 2), new Uint8Array(100), new Uint8Array(10))).toThrow(
      expect.objectContaining({ code: 'InternalError' }),
    );
  });

  it('a stripe filled piece by piece encodes to the frames encodeFramedStripe gives (full and short blocks)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom([2, 2], [4, 2], [3, 1], [5, 3]),
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 12 }),
        fc.option(fc.record({ offset: fc.integer({ min: 0, max: 5000 }), extra: fc.integer({ min: 0, max: 300 }) }), { nil: undefined }),
        ([k, m], blockSize, rawLen, cuts, place) => {
          const codec = createTsCodec(k!, m!);
          const len = Math.min(rawLen, blockSize);
          const block = Buffer.from(Array.from({ length: len }, (_, i) => (i * 7 + k!) & 0xff));
          // Frames where a writer places them (any offset, any stride that holds a frame), or the encoder's layout.
          const layout = place && { offset: place.offset, stride: BITROT_HASH_SIZE + shardSize(blockSize, k!) + place.extra };
          const need = layout ? layout.offset + (k! + m!) * layout.stride : framedStripeBufferSize(codec, blockSize);
          // A reused buffer full of stale bytes: padding must not leak them into the frames.
          const buf = new Uint8Array(need).fill(0xcc);
          let at = 0;
          for (let c = 0; at < len; c++) {
            const take = Math.min(cuts[c % cuts.length]!, len - at);
            fillFramedStripe(codec, buf, blockSize, at, block.subarray(at, at + take), layout);
            at += take;
          }
          const got = encodeFilledFramedStripe(codec, buf, blockSize, len, layout);
          const want = encodeFramedStripe(codec, block);
          expect(got.frames.length).toBe(k! + m!);
          for (let i = 0; i < k! + m!; i++) {
            expect(Buffer.from(got.frames[i]!).equals(Buffer.from(want.frames[i]!))).toBe(true);
            if (layout) expect(got.frames[i]!.byteOffset - buf.byteOffset).toBe(layout.offset + i * layout.stride);
          }
        },
      ),
      { numRuns: 200 },
    );
    const codec = createTsCodec(2, 2);
    expect(() => fillFramedStripe(codec, new Uint8Array(framedStripeBufferSize(codec, 100)), 100, 90, new Uint8Array(11))).toThrow(
      expect.objectContaining({ code: 'InternalError' }),
    );
  });

  it('decodeStripe below K shards throws ErasureReadQuorum', () => {
    const codec = createTsCodec(2, 1);
    const shards: (Uint8Array | null)[] = encodeStripe(codec, new Uint8Array(100).fill(9));
    shards[0] = null;
    shards[2] = null;
    expect(() => decodeStripe(codec, shards, 100)).toThrow(expect.objectContaining({ code: 'ErasureReadQuorum' }));
  });

  it('decodeStripe rejects shards of the wrong size', () => {
    const codec = createTsCodec(2, 1);
    const shards: (Uint8Array | null)[] = encodeStripe(codec, new Uint8Array(100));
    expect(() => decodeStripe(codec, shards, 102)).toThrow(expect.objectContaining({ code: 'InternalError' }));
  });
});
