/**
 * Where a large PUT's server CPU goes, per MB of object data: each step of
 * svc's PUT path measured alone in this process (same run, same machine
 * state), for a signed-payload PUT with the SDK's CRC32 on EC 2+2 (every MB
 * of data becomes 2 MB of shards), beside the server's measured total. The
 * remainder is the JavaScript around the steps (streams, promises, pipes)
 * and garbage collection.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from '@node-rs/crc32';
import { hashService } from '../../src/erasure/hash-service.ts';
import { FrameStreamCheck, BLOCK_SIZE, createCodec, encodeFramedStripe, framedStripeBufferSize } from '../../src/erasure/index.ts';
import { MbHash, mbHashInterleave, mbHashKernels, mbUpdate } from '../../src/erasure/mb-hash.ts';
import { nativeAddon } from '../../src/erasure/native.ts';

const MiB = 1 << 20;
const MB = 1e6;
const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;

export interface AccountingRow {
  step: string;
  /** CPU ms per MB of object data. */
  msPerMb: number;
  how: string;
}

/** CPU-seconds of `fn` (this process, all threads), repeated until it used at least 0.2 s; per call. */
function cpuPerCall(fn: () => void): number {
  fn();
  const c0 = process.cpuUsage();
  let calls = 0;
  let used = 0;
  do {
    for (let i = 0; i < 4; i++) fn();
    calls += 4;
    const c = process.cpuUsage(c0);
    used = (c.user + c.system) / 1e6;
  } while (used < 0.2 * scale);
  return used / calls;
}

async function cpuOfAsync(fn: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1e6;
}

/**
 * The steps a 64 MiB signed PUT takes per MB, measured here; `httpMsPerMb`
 * is the loopback HTTP ceiling of the same run (the same client's PUT into a
 * plain node:http process), `dir` a directory on the drives' disk.
 */
export async function putAccounting(httpMsPerMb: number, dir: string): Promise<AccountingRow[]> {
  const mib = randomBytes(MiB);
  const perMb = (secondsPerMiB: number) => (secondsPerMiB * 1000 * MB) / MiB;
  const rows: AccountingRow[] = [{ step: 'HTTP receive (node:http, loopback)', msPerMb: httpMsPerMb, how: 'same client into a plain node:http process, same run' }];

  // MD5: in the lanes where the service puts it (4 concurrent uploads: a batch of 4), else OpenSSL.
  const lanes = hashService.lanesWin('md5');
  if (lanes) {
    const hs = Array.from({ length: 4 }, () => new MbHash('md5'));
    const items = hs.map((h, i) => [h, mib.subarray(i * 64, MiB - 256 + i * 64)] as const);
    rows.push({ step: 'MD5 (ETag)', msPerMb: perMb(cpuPerCall(() => mbUpdate(items)) / 4), how: `multi-buffer lanes (${mbHashKernels[0]}), 4 streams` });
  } else {
    const h = createHash('md5');
    rows.push({ step: 'MD5 (ETag)', msPerMb: perMb(cpuPerCall(() => h.update(mib))), how: 'OpenSSL, one stream' });
  }
  // SHA-256 as the service runs it for 4 concurrent uploads: in the lanes where they win, else
  // the scalar kernel (4 streams interleaved with the SHA extensions, or each alone), else OpenSSL.
  if (lanes) {
    const shaLanes = hashService.lanesWin('sha256');
    const hs = Array.from({ length: 4 }, () => new MbHash('sha256'));
    const items = hs.map((h, i) => [h, mib.subarray(i * 64, MiB - 256 + i * 64)] as const);
    const how = shaLanes
      ? `multi-buffer lanes (${mbHashKernels[0]}), 4 streams`
      : mbHashInterleave.sha256 > 1
        ? `SHA extensions, 4 streams interleaved on one core`
        : 'OpenSSL (SHA-NI where present), each stream alone';
    rows.push({ step: 'SHA-256 (signed payload)', msPerMb: perMb(cpuPerCall(() => mbUpdate(items, shaLanes ? undefined : 'scalar')) / 4), how });
  } else {
    const sha = createHash('sha256');
    rows.push({ step: 'SHA-256 (signed payload)', msPerMb: perMb(cpuPerCall(() => sha.update(mib))), how: 'OpenSSL (SHA-NI where present), one stream' });
  }
  rows.push({
    step: 'CRC32 (x-amz-checksum-crc32)',
    msPerMb: perMb(cpuPerCall(() => {
      let c = 0;
      for (let off = 0; off < MiB; off += 65_536) c = crc32(mib.subarray(off, off + 65_536), c);
    })),
    how: '@node-rs/crc32 over 64 KiB socket pieces',
  });
  const stage = Buffer.allocUnsafe(MiB);
  rows.push({ step: 'copy into the hashing stage', msPerMb: perMb(cpuPerCall(() => stage.set(mib))), how: '1 MiB memcpy' });
  const codec = createCodec(2, 2);
  const frameBuf = Buffer.allocUnsafe(framedStripeBufferSize(codec, BLOCK_SIZE));
  let frames: Uint8Array[] = [];
  rows.push({
    step: 'erasure code 2+2 + bitrot XXH64 of 4 shards',
    msPerMb: perMb(cpuPerCall(() => {
      frames = encodeFramedStripe(codec, mib, frameBuf).frames;
    })),
    how: `encodeFramedStripe (split copy, parity, 4 × XXH64), ${nativeAddon?.kernel ?? 'TypeScript'} kernel`,
  });
  rows.push({
    step: 'frame check as shards are written',
    msPerMb: perMb(cpuPerCall(() => {
      for (const f of frames) {
        const c = new FrameStreamCheck(f.length - 8);
        c.push(f);
        c.finish();
      }
    })),
    how: 'XXH64 again over the 2 MB handed to write(2)',
  });
  // Shard writes: 4 files of 32 MiB (one 64 MiB object's shards) with O_DIRECT and one fsync each, in
  // the 2 MiB writes the PUT path makes (its frames grouped per drive and written where they lie: no
  // staging copy on EC 2+2).
  const objBytes = 64 * MiB;
  const write = 2 * MiB;
  const align = nativeAddon?.alignOffset;
  if (align !== undefined && fsc.O_DIRECT !== undefined) {
    const raw = Buffer.allocUnsafeSlow(write + 4096);
    const off = align(raw, 4096);
    const buf = raw.subarray(off, off + write);
    buf.set(mib);
    buf.set(mib, MiB);
    const cpu = await cpuOfAsync(async () => {
      await Promise.all(
        [0, 1, 2, 3].map(async (i) => {
          const fh = await fsp.open(join(dir, `acct-${i}`), fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT);
          try {
            for (let pos = 0; pos < objBytes / 2; pos += write) await fh.write(buf, 0, write, pos);
            await fh.sync();
          } finally {
            await fh.close();
          }
        }),
      );
    });
    await Promise.all([0, 1, 2, 3].map((i) => fsp.rm(join(dir, `acct-${i}`), { force: true })));
    rows.push({ step: 'shard writes (O_DIRECT) + fsync', msPerMb: (cpu * 1000 * MB) / objBytes, how: '4 files × 32 MiB in 2 MiB writes, one fsync each' });
  }
  return rows;
}
