/**
 * Server-side encryption section: object-layer PUT and GET of 64 MiB on 4
 * drives at EC:2, SSE-S3 beside unencrypted in the same run (the ceiling is
 * the unencrypted figure; target ≥ 70 %), plus the cipher alone per CPU
 * second, sealing and opening 64 KiB packages, node:crypto beside the native
 * kernel (docs/governance.md), and a 1 MiB ranged GET from the
 * middle of an encrypted object (only the packages it covers are decrypted).
 * Unencrypted and encrypted runs alternate, best of three each, so a noisy
 * neighbour on these shared machines penalises both alike.
 * The SSE GET per CPU-second is also printed beside its bound: the
 * unencrypted GET plus the AES-256-GCM work alone (the native kernel opening
 * 1 MiB runs between preallocated buffers), i.e. what the GET would reach if
 * decryption cost nothing beyond OpenSSL's own cipher.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalKms } from '../src/crypto/kms.ts';
import { type CipherKernel, cipherKernel, decryptPackages, encryptStream, FULL_PACKAGE, PACKAGE_SIZE, packageRange } from '../src/crypto/package-cipher.ts';
import { nativeAddon } from '../src/erasure/native.ts';
import { createObjectLayer } from '../src/object/index.ts';
import { putDataFromBuffer } from '../src/object/put-data.ts';
import type { ObjectLayer, PutObjectOptions } from '../src/object/types.ts';
import { LocalDrive } from '../src/storage/local-drive.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { GB, type Measurement, measure, measureSync, section } from './harness.ts';

const MiB = 1024 * 1024;
const BIG = 64 * MiB;
const ROUNDS = 3;

async function drain(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of body) n += c.length;
  return n;
}

function best(ms: Measurement[]): Measurement {
  return ms.reduce((a, b) => (b.perWallSecond > a.perWallSecond ? b : a));
}

section('sse: SSE-S3 PUT/GET 64 MiB beside unencrypted (4 drives EC:2)', async (ctx) => {
  const base = await mkdtemp(join(tmpdir(), 'svc-bench-sse-'));
  try {
    const drives: LocalDrive[] = [];
    for (let i = 0; i < 4; i++) {
      await mkdir(join(base, `d${i}`));
      const d = new LocalDrive(join(base, `d${i}`));
      await d.init();
      drives.push(d);
    }
    const kms = new LocalKms({ secretKey: `bench-key:${randomBytes(32).toString('base64')}`, readFile: async () => '', now: () => Date.now() });
    const layer: ObjectLayer = await createObjectLayer({
      deploymentId: '11111111-2222-4333-8444-555555555556',
      pools: [{ cmdline: 'bench', sets: [drives], standardParity: 2, rrsParity: 1 }],
      logger: silentLogger,
      clock: systemClock,
      kms,
    });
    await layer.makeBucket('bench');
    const big = randomBytes(BIG);

    const key = randomBytes(32);
    async function* slices(): AsyncGenerator<Uint8Array> {
      for (let off = 0; off < BIG; off += MiB) yield big.subarray(off, off + MiB);
    }
    // The cipher alone, node:crypto beside the native kernel (when built), in the same run.
    const kernels: CipherKernel[] = cipherKernel === 'native' ? ['node', 'native'] : ['node'];
    const sealed: Buffer[] = [];
    for await (const c of encryptStream(key, slices(), 'node')) sealed.push(Buffer.from(c));
    const cipherText = Buffer.concat(sealed);
    async function* cipherSlices(): AsyncGenerator<Uint8Array> {
      for (let off = 0; off < cipherText.length; off += MiB) yield cipherText.subarray(off, off + MiB);
    }
    const span = packageRange(0, BIG - 1, BIG);
    const rates: Record<string, number> = {};
    for (const k of kernels) {
      const seal = await measure(
        BIG,
        async () => {
          let n = 0;
          for await (const c of encryptStream(key, slices(), k)) n += c.length;
          return n;
        },
        { minMs: 800, warmup: 1 },
      );
      const open = await measure(
        BIG,
        async () => {
          let n = 0;
          for await (const c of decryptPackages(key, cipherSlices(), { first: span.first, last: span.last, plain: BIG, skip: 0, length: BIG }, { kernel: k })) n += c.length;
          if (n !== BIG) throw new Error('short decrypt');
        },
        { minMs: 800, warmup: 1 },
      );
      rates[`seal ${k}`] = seal.perCpuSecond / GB;
      rates[`open ${k}`] = open.perCpuSecond / GB;
    }
    for (const op of ['seal', 'open']) {
      for (const k of kernels) {
        ctx.row({
          name: `AES-256-GCM ${op}, 64 KiB packages (${k === 'node' ? 'node:crypto' : 'native'} kernel)`,
          value: rates[`${op} ${k}`]!,
          unit: 'GB/cpu-s',
          ...(k === 'native' ? { ceiling: { name: 'node:crypto', value: rates[`${op} node`]! } } : {}),
        });
      }
    }

    const kinds: { name: string; key: string; opts: PutObjectOptions }[] = [
      { name: 'plain', key: 'plain', opts: {} },
      { name: 'sse-s3', key: 'sse', opts: { sse: { type: 'SSE-S3' } } },
    ];
    const puts: Record<string, Measurement[]> = { plain: [], 'sse-s3': [] };
    const gets: Record<string, Measurement[]> = { plain: [], 'sse-s3': [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of kinds) {
        puts[k.name]!.push(await measure(BIG, () => layer.putObject('bench', k.key, putDataFromBuffer(big), k.opts), { minMs: 1500, warmup: 1 }));
      }
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of kinds) {
        gets[k.name]!.push(
          await measure(
            BIG,
            async () => {
              const g = await layer.getObject('bench', k.key, { reuseBuffers: true });
              if ((await drain(g.chunks ?? g.body)) !== BIG) throw new Error('short read');
            },
            { minMs: 1500, warmup: 1 },
          ),
        );
      }
    }
    const putPlain = best(puts.plain!);
    const putSse = best(puts['sse-s3']!);
    const getPlain = best(gets.plain!);
    const getSse = best(gets['sse-s3']!);
    ctx.row({ name: 'PUT 64 MiB unencrypted', value: putPlain.perWallSecond / GB, unit: 'GB/s' });
    ctx.row({ name: 'PUT 64 MiB SSE-S3', value: putSse.perWallSecond / GB, unit: 'GB/s', ceiling: { name: 'unencrypted PUT', value: putPlain.perWallSecond / GB }, note: 'target ≥ 70%' });
    ctx.row({ name: 'PUT 64 MiB SSE-S3, per CPU-second', value: putSse.perCpuSecond / GB, unit: 'GB/cpu-s', ceiling: { name: 'unencrypted', value: putPlain.perCpuSecond / GB } });
    ctx.row({ name: 'GET 64 MiB unencrypted', value: getPlain.perWallSecond / GB, unit: 'GB/s' });
    ctx.row({ name: 'GET 64 MiB SSE-S3', value: getSse.perWallSecond / GB, unit: 'GB/s', ceiling: { name: 'unencrypted GET', value: getPlain.perWallSecond / GB }, note: 'target ≥ 70%' });
    ctx.row({ name: 'GET 64 MiB SSE-S3, per CPU-second', value: getSse.perCpuSecond / GB, unit: 'GB/cpu-s', ceiling: { name: 'unencrypted', value: getPlain.perCpuSecond / GB } });
    if (cipherKernel === 'native' && nativeAddon) {
      const addon = nativeAddon;
      const run = cipherText.subarray(0, 16 * FULL_PACKAGE);
      const out = Buffer.allocUnsafe(16 * PACKAGE_SIZE);
      const openRun = () => addon.gcmOpen(key, run.subarray(4, 16), 0, BIG / PACKAGE_SIZE - 1, run, out);
      if (openRun() !== out.length) throw new Error('the native open of the first 16 packages failed');
      const aes = measureSync(16 * PACKAGE_SIZE, openRun, { minMs: 800 });
      const bound = 1 / (1 / getPlain.perCpuSecond + 1 / aes.perCpuSecond);
      ctx.row({ name: 'AES-256-GCM open alone, 1 MiB runs (native)', value: aes.perCpuSecond / GB, unit: 'GB/cpu-s' });
      ctx.row({
        name: 'GET 64 MiB SSE-S3, per CPU-second, beside its bound',
        value: getSse.perCpuSecond / GB,
        unit: 'GB/cpu-s',
        ceiling: { name: 'unencrypted + AES alone', value: bound / GB },
      });
    }

    const mid = Math.floor(BIG / 2) + 12_345;
    const rangedGet = (key: string) =>
      measure(
        MiB,
        async () => {
          const g = await layer.getObject('bench', key, { range: { start: mid, end: mid + MiB - 1 }, reuseBuffers: true });
          if ((await drain(g.chunks ?? g.body)) !== MiB) throw new Error('short read');
        },
        { minMs: 800 },
      );
    const ranged = await rangedGet('sse');
    const rangedPlain = await rangedGet('plain');
    ctx.row({ name: '1 MiB ranged GET mid-object, SSE-S3', value: ranged.perWallSecond / 1e6, unit: 'MB/s', ceiling: { name: 'unencrypted', value: rangedPlain.perWallSecond / 1e6 } });
    await layer.close();
    for (const d of drives) await d.flush();
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
