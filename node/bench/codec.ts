/**
 * Codec section: Reed-Solomon encode and decode (2 lost data shards) of one
 * 1 MiB block for 2+2, 12+4 and 8+8, per native kernel and for the
 * TypeScript kernel, in GB of data per CPU-second, against the memcpy
 * ceiling of the same run; then the hashes the object layer pays per byte
 * (bitrot XXH64, MD5 for the ETag, SHA-256, CRC-64/NVME).
 */
import { createHash } from 'node:crypto';
import { xxh64 } from '@node-rs/xxhash';
import { tsKernel } from '../src/erasure/codec-ts.ts';
import { crc64nvme, crc64nvmeTs } from '../src/erasure/crc64nvme.ts';
import {
  BITROT_HASH_SIZE,
  BLOCK_SIZE,
  bitrotHashInto,
  bitrotHashShards,
  codecKernel,
  createCodec,
  encodeFramedStripe,
  encodeStripe,
  framedStripeBufferSize,
  shardStride,
} from '../src/erasure/index.ts';
import { nativeAddon, nativeLoadError } from '../src/erasure/native.ts';
import { type GfKernel, RsCodec } from '../src/erasure/rs-codec.ts';
import { xxh64Into } from '../src/erasure/xxh64.ts';
import { GB, measureSync, section } from './harness.ts';

const GEOMETRIES: [number, number][] = [
  [2, 2],
  [12, 4],
  [8, 8],
];

function randomBytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  let s = 0x12345678;
  for (let i = 0; i < n; i += 4) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    b.writeInt32LE(s | 0, Math.min(i, n - 4));
  }
  return b;
}

/** N shards of one 1 MiB block in one buffer, strided as encodeStripe does. */
function stripeShards(k: number, m: number, stride = shardStride(Math.ceil(BLOCK_SIZE / k))): Uint8Array[] {
  const size = Math.ceil(BLOCK_SIZE / k);
  const buf = randomBytes(stride * (k + m));
  return Array.from({ length: k + m }, (_, i) => buf.subarray(i * stride, i * stride + size));
}

section('codec: Reed-Solomon, 1 MiB blocks', (ctx) => {
  ctx.info(`kernel in use: ${codecKernel()}${nativeLoadError ? ` (native not loaded: ${nativeLoadError})` : ''}`);
  const src = randomBytes(BLOCK_SIZE);
  const dst = Buffer.allocUnsafe(BLOCK_SIZE);
  const memcpy = measureSync(BLOCK_SIZE, () => dst.set(src)).perCpuSecond / GB;
  const ceiling = { name: 'memcpy', value: memcpy };
  ctx.row({ name: 'memcpy 1 MiB (ceiling)', value: memcpy, unit: 'GB/cpu-s' });

  const kernels: GfKernel[] = [];
  for (const name of nativeAddon?.kernels ?? []) {
    kernels.push({
      name: `native-${name}`,
      matMul: (c, r, k, i, o, n) => nativeAddon!.matMul(c, r, k, i, o, n, name),
    });
  }
  kernels.push(tsKernel);

  for (const gf of kernels) {
    const slow = gf.name === 'ts' || gf.name === 'native-scalar';
    const opts = { minMs: slow ? 250 : 400 };
    for (const [k, m] of GEOMETRIES) {
      const codec = new RsCodec(k, m, gf);
      const shards = stripeShards(k, m);
      const enc = measureSync(BLOCK_SIZE, () => codec.encode(shards), opts).perCpuSecond / GB;
      const target = k === 12 && m === 4 && gf.name === codecKernel() ? '  target ≥ 10 GB/cpu-s (GFNI machine)' : undefined;
      ctx.row({ name: `${gf.name} ${k}+${m} encode`, value: enc, unit: 'GB/cpu-s', ceiling, ...(target ? { note: target } : {}) });
      const present = shards.map((_, i) => i !== 0 && i !== 1);
      const dec = measureSync(BLOCK_SIZE, () => codec.reconstruct(shards, present, true), opts).perCpuSecond / GB;
      ctx.row({ name: `${gf.name} ${k}+${m} decode (2 data lost)`, value: dec, unit: 'GB/cpu-s', ceiling });
    }
  }

  // Stride effect: power-of-two strides (the 128 KiB shard of 8+8 lands on one).
  if (nativeAddon !== null) {
    const codec = createCodec(8, 8);
    for (const [label, stride] of [
      ['aligned 128 KiB stride', BLOCK_SIZE / 8],
      ['padded stride (+64 B)', shardStride(BLOCK_SIZE / 8)],
    ] as const) {
      const shards = stripeShards(8, 8, stride);
      const v = measureSync(BLOCK_SIZE, () => codec.encode(shards)).perCpuSecond / GB;
      ctx.row({ name: `${codec.kernel} 8+8 encode, ${label}`, value: v, unit: 'GB/cpu-s', ceiling });
    }
  }

  // What the object layer pays per block: split + parity + bitrot frames of
  // all shards. (a) encodeStripe, then a fresh [hash][shard] buffer per shard;
  // (b) encodeFramedStripe into a fresh buffer; (c) into a reused one.
  const codec = createCodec(12, 4);
  const separate = measureSync(BLOCK_SIZE, () => {
    const shards = encodeStripe(codec, src);
    for (const shard of shards) {
      const f = Buffer.allocUnsafe(BITROT_HASH_SIZE + shard.length);
      bitrotHashInto(shard, f, 0);
      f.set(shard, BITROT_HASH_SIZE);
    }
  }).perCpuSecond / GB;
  ctx.row({ name: `${codec.kernel} 12+4 stripe + frames, copied`, value: separate, unit: 'GB/cpu-s', ceiling });
  const reused = Buffer.allocUnsafe(framedStripeBufferSize(codec, BLOCK_SIZE));
  for (const [label, buffer] of [
    ['fresh buffer', undefined],
    ['reused buffer', reused],
  ] as const) {
    const v = measureSync(BLOCK_SIZE, () => encodeFramedStripe(codec, src, buffer)).perCpuSecond / GB;
    ctx.row({ name: `${codec.kernel} 12+4 encodeFramedStripe, ${label}`, value: v, unit: 'GB/cpu-s', ceiling });
  }
});

section('codec: hashes per byte (bitrot, ETag, checksums)', (ctx) => {
  const buf = randomBytes(BLOCK_SIZE);
  const dst = Buffer.allocUnsafe(BLOCK_SIZE);
  const memcpy = measureSync(BLOCK_SIZE, () => dst.set(buf)).perCpuSecond / GB;
  const ceiling = { name: 'memcpy', value: memcpy };
  ctx.row({ name: 'memcpy 1 MiB (ceiling)', value: memcpy, unit: 'GB/cpu-s' });
  const out = new Uint8Array(8);
  const shard = buf.subarray(0, Math.ceil(BLOCK_SIZE / 12));
  ctx.row({
    name: 'XXH64 @node-rs/xxhash, 87 KiB shard',
    value: measureSync(shard.length, () => xxh64(shard)).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling,
  });
  if (nativeAddon !== null) {
    ctx.row({
      name: 'XXH64 native addon, 87 KiB shard',
      value: measureSync(shard.length, () => nativeAddon!.xxh64Into(shard, out, 0)).perCpuSecond / GB,
      unit: 'GB/cpu-s',
      ceiling,
    });
  }
  const shards = encodeStripe(createCodec(12, 4), buf);
  const hashes = new Uint8Array(8 * shards.length);
  ctx.row({
    name: 'bitrot of a 12+4 stripe (xxh64.ts router, used)',
    value: measureSync(BLOCK_SIZE, () => bitrotHashShards(shards, hashes)).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling,
  });
  if (nativeAddon !== null) {
    ctx.row({
      name: 'bitrot of a 12+4 stripe (native xxh64Many)',
      value: measureSync(BLOCK_SIZE, () => nativeAddon!.xxh64Many(shards, hashes)).perCpuSecond / GB,
      unit: 'GB/cpu-s',
      ceiling,
    });
  }
  // Small inputs, where the per-call cost rules: the router (addon below
  // NATIVE_INTO_MAX) against @node-rs/xxhash with its BigInt (the way before).
  const bigIntInto = (b: Uint8Array, o: Uint8Array, off: number) => new DataView(o.buffer, o.byteOffset, o.byteLength).setBigUint64(off, xxh64(b), false);
  const small = encodeStripe(createCodec(2, 2), buf.subarray(0, 4096));
  const smallHashes = new Uint8Array(8 * small.length);
  const before = measureSync(4096 * 2, () => small.forEach((sh, i) => bigIntInto(sh, smallHashes, 8 * i))).perCpuSecond / GB;
  ctx.row({
    name: 'bitrot of a 4 KiB object, 2+2 (router, used)',
    value: measureSync(4096 * 2, () => bitrotHashShards(small, smallHashes)).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling: { name: '@node-rs + BigInt', value: before },
  });
  const meta = buf.subarray(0, 300);
  const metaBefore = measureSync(meta.length, () => bigIntInto(meta, out, 0)).perCpuSecond / GB;
  ctx.row({
    name: 'XXH64 of a 300 B xl.meta body (router, used)',
    value: measureSync(meta.length, () => xxh64Into(meta, out, 0)).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling: { name: '@node-rs + BigInt', value: metaBefore },
  });
  const md5 = measureSync(BLOCK_SIZE, () => createHash('md5').update(buf).digest()).perCpuSecond / GB;
  ctx.row({ name: 'MD5 node:crypto (S3 ETag)', value: md5, unit: 'GB/cpu-s', ceiling });
  ctx.row({
    name: 'SHA-256 node:crypto',
    value: measureSync(BLOCK_SIZE, () => createHash('sha256').update(buf).digest()).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling,
  });
  ctx.row({
    name: `CRC-64/NVME (${nativeAddon ? `native ${nativeAddon.crc64nvmeKernel}` : 'ts'})`,
    value: measureSync(BLOCK_SIZE, () => crc64nvme(buf)).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling,
  });
  ctx.row({
    name: 'CRC-64/NVME (TypeScript fallback)',
    value: measureSync(BLOCK_SIZE, () => crc64nvmeTs(buf), { minMs: 200 }).perCpuSecond / GB,
    unit: 'GB/cpu-s',
    ceiling,
  });
});
