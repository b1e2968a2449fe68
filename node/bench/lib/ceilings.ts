/**
 * Ceilings of the S3 bench, measured in the bench's own process in the same
 * run: single-stream hashing through node:crypto (OpenSSL), the native
 * multi-buffer hash at 8 streams, fsync'd
 * small-file creates, and sequential disk write and read in the bench's
 * temp dir (the drives' disk).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { type MbAlg, MbHash, mbHashInterleave, mbHashKernels, mbHashSingle, mbUpdate } from '../../src/erasure/mb-hash.ts';
import type { SectionContext } from '../harness.ts';

const MiB = 1024 * 1024;
const MB = 1e6;
const scale = Number(process.env.BENCH_SCALE ?? '1') || 1;

function cpuOf(fn: () => void): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return Math.max((c.user + c.system) / 1e6, 1e-6);
}

export interface HashCeilings {
  md5: number;
  sha256: number;
  /** Both over the same bytes, one stream (what a PUT with a signed payload needs). */
  md5Sha256: number;
}

/** node:crypto rates in MB/cpu-s over 1 MiB updates. */
export function hashCeilings(ctx: SectionContext): HashCeilings {
  const buf = randomBytes(MiB);
  const n = Math.round(128 * scale);
  const rate = (algs: string[]) => {
    const hs = algs.map((a) => createHash(a));
    for (let i = 0; i < 8; i++) for (const h of hs) h.update(buf);
    const cpu = cpuOf(() => {
      for (let i = 0; i < n; i++) for (const h of hs) h.update(buf);
      for (const h of hs) h.digest();
    });
    return (n * MiB) / MB / cpu;
  };
  const out = { md5: rate(['md5']), sha256: rate(['sha256']), md5Sha256: rate(['md5', 'sha256']) };
  ctx.row({ name: 'ceiling: MD5, node:crypto, one stream', value: out.md5, unit: 'MB/cpu-s' });
  ctx.row({ name: 'ceiling: SHA-256, node:crypto, one stream', value: out.sha256, unit: 'MB/cpu-s' });
  ctx.row({ name: 'ceiling: MD5+SHA-256, node:crypto, one stream', value: out.md5Sha256, unit: 'MB/cpu-s' });
  return out;
}

/**
 * The native multi-buffer hash (`erasure/mb-hash.ts`) over 8 concurrent
 * streams, 1 MiB per stream per call, in MB/cpu-s; each beside the
 * single-stream node:crypto rate, with the 3× target. Undefined without the
 * addon's multi-buffer kernels.
 */
export function multiBufferCeilings(ctx: SectionContext, single: HashCeilings): { md5: number; sha256: number; md5Sha256: number } | undefined {
  if (mbHashKernels.length === 0) {
    ctx.info('multi-buffer hashing: the native addon is not built, no multi-buffer rate this run');
    return undefined;
  }
  const buf = randomBytes(MiB + 64);
  const n = Math.max(4, Math.round(16 * scale));
  /** 8 streams of each of `algs`, all in the lanes, or (`shaAlone`) SHA-256 through the scalar kernel as the service runs it where the lanes lose. */
  const rate = (algs: MbAlg[], shaAlone = false) => {
    const hs = algs.flatMap((a) => Array.from({ length: 8 }, () => new MbHash(a)));
    const items = hs.map((h, i) => [h, buf.subarray(i % 8, (i % 8) + MiB)] as const);
    const step = () => {
      if (!shaAlone) return mbUpdate(items);
      mbUpdate(items.filter(([h]) => h.alg === 'md5'));
      mbUpdate(
        items.filter(([h]) => h.alg === 'sha256'),
        'scalar',
      );
    };
    step();
    const cpu = cpuOf(() => {
      for (let i = 0; i < n; i++) step();
      for (const h of hs) h.digest();
    });
    return (8 * n * MiB) / MB / cpu;
  };
  const out = { md5: rate(['md5']), sha256: rate(['sha256']), md5Sha256: rate(['md5', 'sha256']) };
  const row = (name: string, v: number, base: number) =>
    ctx.row({
      name: `multi-buffer ${name}, 8 streams (${mbHashKernels[0]})`,
      value: v,
      unit: 'MB/cpu-s',
      ceiling: { name: 'node:crypto one stream', value: base },
      note: `target ≥ 3× ${v >= 3 * base ? '✓' : '✗'}`,
    });
  row('MD5', out.md5, single.md5);
  row('SHA-256', out.sha256, single.sha256);
  row('MD5+SHA-256', out.md5Sha256, single.md5Sha256);
  // What the upload hashing service runs on a CPU whose scalar SHA-256 beats the lanes (SHA-NI):
  // each stream alone through OpenSSL, or up to four interleaved on one core.
  const mixed = rate(['md5', 'sha256'], true);
  const shaScalar = mbHashInterleave.sha256 > 1 ? `SHA extensions, ${mbHashInterleave.sha256} streams interleaved` : `alone, ${mbHashSingle.sha256}`;
  ctx.row({
    name: `MD5 in lanes + SHA-256 scalar (${shaScalar}), 8 streams`,
    value: mixed,
    unit: 'MB/cpu-s',
    ceiling: { name: 'node:crypto one stream', value: single.md5Sha256 },
  });
  return out;
}

/** Creates of 4 KiB files as a drive publishes xl.meta: tmp, write, fsync, rename, directory fsync; 16 at a time. */
export async function smallFileCreateRate(ctx: SectionContext, base: string): Promise<number> {
  const dir = join(base, 'creates');
  await fsp.mkdir(dir, { recursive: true });
  const data = randomBytes(4096);
  const one = async (i: number) => {
    const tmp = join(dir, `${randomUUID()}.tmp`);
    const fh = await fsp.open(tmp, 'w');
    await fh.writeFile(data);
    await fh.sync();
    await fh.close();
    await fsp.rename(tmp, join(dir, `f${i % 256}`));
    const d = await fsp.open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    await d.sync();
    await d.close();
  };
  let i = 0;
  const t0 = performance.now();
  const until = t0 + 1500 * scale;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < until) await one(i++);
    }),
  );
  const rate = i / ((performance.now() - t0) / 1000);
  ctx.row({ name: "ceiling: fsync'd 4 KiB file creates, 16 at a time", value: rate, unit: 'ops/s' });
  await fsp.rm(dir, { recursive: true, force: true });
  return rate;
}

export interface DiskCeilings {
  /** Raw sequential write, O_DIRECT (buffered + fdatasync where O_DIRECT is refused). */
  write: number;
  /** Raw sequential read, O_DIRECT (a page-cache read where O_DIRECT is refused). */
  read: number;
  /** Buffered write + one fdatasync, the way a drive writes a shard file. */
  buffered: number;
}

/** Wall MB/s of `dd` moving `total` bytes in 1 MiB blocks with `flags`; undefined when dd refuses them. */
function ddRate(args: string[], total: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    execFile('dd', [...args, 'bs=1M', `count=${total / MiB}`, 'status=none'], (err) => {
      resolve(err ? undefined : total / MB / ((performance.now() - t0) / 1000));
    });
  });
}

/**
 * Sequential disk rates in the bench's temp dir (the drives' disk), 256 MiB
 * in 1 MiB requests: raw (O_DIRECT, through coreutils `dd`, since Node
 * cannot allocate the aligned buffers O_DIRECT needs) and buffered +
 * fdatasync (node:fs, as a drive writes). A buffered read would only
 * measure the page cache.
 */
export async function diskCeilings(ctx: SectionContext, base: string): Promise<DiskCeilings> {
  const file = join(base, 'disk-ceiling');
  const total = Math.max(64, Math.round(256 * scale)) * MiB;
  const buf = randomBytes(MiB);
  const fh = await fsp.open(file, 'w');
  const t0 = performance.now();
  for (let off = 0; off < total; off += MiB) await fh.write(buf, 0, MiB, off);
  await fh.datasync();
  const buffered = total / MB / ((performance.now() - t0) / 1000);
  await fh.close();
  const directWrite = await ddRate(['if=/dev/zero', `of=${file}.direct`, 'oflag=direct', 'conv=fdatasync'], total);
  const directRead = directWrite === undefined ? undefined : await ddRate([`if=${file}.direct`, 'of=/dev/null', 'iflag=direct'], total);
  let read = directRead;
  if (read === undefined) {
    const rh = await fsp.open(file, 'r');
    const t1 = performance.now();
    for (let off = 0; off < total; off += MiB) await rh.read(buf, 0, MiB, off);
    read = total / MB / ((performance.now() - t1) / 1000);
    await rh.close();
  }
  await fsp.rm(file, { force: true });
  await fsp.rm(`${file}.direct`, { force: true });
  const write = directWrite ?? buffered;
  const how = directWrite === undefined ? ' (no O_DIRECT here: buffered)' : ', O_DIRECT';
  ctx.row({ name: `ceiling: disk sequential write${how}`, value: write, unit: 'MB/s' });
  ctx.row({ name: `ceiling: disk sequential read${how}`, value: read, unit: 'MB/s' });
  ctx.row({ name: 'ceiling: disk write buffered + fdatasync', value: buffered, unit: 'MB/s' });
  return { write, read, buffered };
}
