/**
 * Placement: pool → set → shard order. Pure.
 *
 * - set = SipHash-2-4(object name, key = the 16 bytes of the deployment UUID)
 *   mod set count (the bucket is not hashed);
 * - shard order inside the set = a rotation of 1..N starting at
 *   CRC32(`bucket/object`) mod N;
 * - a new object goes to the active pool with the most free space.
 */
import { crc32 } from 'node:zlib';
import { SvcError } from '../util/errors.ts';

const MASK = (1n << 64n) - 1n;

function rotl(x: bigint, b: bigint): bigint {
  return ((x << b) | (x >> (64n - b))) & MASK;
}

function readLe64(buf: Uint8Array, off: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(buf[off + i] ?? 0);
  return v;
}

/** SipHash-2-4 of `msg` under the 128-bit key (k0, k1), as an unsigned 64-bit BigInt. */
export function sipHash24(k0: bigint, k1: bigint, msg: Uint8Array): bigint {
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const round = () => {
    v0 = (v0 + v1) & MASK;
    v1 = rotl(v1, 13n) ^ v0;
    v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & MASK;
    v3 = rotl(v3, 16n) ^ v2;
    v0 = (v0 + v3) & MASK;
    v3 = rotl(v3, 21n) ^ v0;
    v2 = (v2 + v1) & MASK;
    v1 = rotl(v1, 17n) ^ v2;
    v2 = rotl(v2, 32n);
  };
  const len = msg.length;
  const full = len - (len % 8);
  for (let off = 0; off < full; off += 8) {
    const m = readLe64(msg, off);
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
  let last = BigInt(len & 0xff) << 56n;
  for (let i = len - 1; i >= full; i--) last |= BigInt(msg[i]!) << BigInt(8 * (i - full));
  v3 ^= last;
  round();
  round();
  v0 ^= last;
  v2 ^= 0xffn;
  round();
  round();
  round();
  round();
  return (v0 ^ v1 ^ v2 ^ v3) & MASK;
}

/** The 16 bytes of a UUID string. */
export function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new SvcError('InvalidArgument', `not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}

/** Set index of an object name within a pool of `setCount` sets. */
export function setIndexOf(objectName: string, deploymentId: Uint8Array, setCount: number): number {
  if (setCount === 1) return 0;
  const h = sipHash24(readLe64(deploymentId, 0), readLe64(deploymentId, 8), Buffer.from(objectName, 'utf8'));
  return Number(h % BigInt(setCount));
}

/**
 * Shard distribution of `bucket/object` over N drives: `dist[slot]` is the
 * 1-based shard number held by the drive at set slot `slot`.
 */
export function hashOrder(key: string, n: number): number[] {
  const start = crc32(key) % n;
  const dist: number[] = new Array(n);
  for (let i = 1; i <= n; i++) dist[i - 1] = 1 + ((start + i) % n);
  return dist;
}

/** Indices of the `active` pools, most free bytes first (ties: lower index first). */
export function rankPools(free: readonly number[], active: readonly boolean[]): number[] {
  return free
    .map((f, i) => ({ f, i }))
    .filter(({ i }) => active[i])
    .sort((a, b) => b.f - a.f || a.i - b.i)
    .map(({ i }) => i);
}

/** Index of the pool with the most free bytes among `active` ones; -1 if none. */
export function choosePool(free: readonly number[], active: readonly boolean[]): number {
  return rankPools(free, active)[0] ?? -1;
}
