import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { codecFallbackReason, codecKernel, createCodec, decodeStripe, encodeStripe } from './index.ts';

describe('erasure module API', () => {
  it('caches one codec per geometry and reports the kernel it uses', () => {
    const a = createCodec(4, 2);
    expect(createCodec(4, 2)).toBe(a);
    expect(createCodec(2, 2)).not.toBe(a);
    expect(a.kernel).toBe(codecKernel());
    expect(codecKernel()).toMatch(/^(ts|native-(gfni|gfni-avx2|avx2|ssse3|neon|scalar))$/);
    expect(codecKernel() === 'ts').toBe(codecFallbackReason() !== null);
  });

  it('SVC_ERASURE_KERNEL pins a kernel, and refuses one this CPU cannot run', () => {
    const run = (value: string) => {
      const r = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import('${new URL('./index.ts', import.meta.url).href}').then((m) => console.log(m.codecKernel()), (e) => console.log(e.code))`,
        ],
        { env: { ...process.env, SVC_ERASURE_KERNEL: value }, encoding: 'utf8' },
      );
      return r.stdout.trim();
    };
    expect(run('ts')).toBe('ts');
    expect(run('no-such-kernel')).toBe(codecFallbackReason() === null ? 'InvalidConfig' : 'ts');
    if (codecFallbackReason() === null) expect(run('scalar')).toBe('native-scalar');
  });

  it('round trips a stripe with the selected kernel', () => {
    const codec = createCodec(12, 4);
    const block = Uint8Array.from({ length: 100_001 }, (_, i) => (i * 31) & 255);
    const shards: (Uint8Array | null)[] = encodeStripe(codec, block);
    shards[0] = null;
    shards[5] = null;
    shards[13] = null;
    expect(Buffer.from(decodeStripe(codec, shards, block.length)).equals(Buffer.from(block))).toBe(true);
  });
});
