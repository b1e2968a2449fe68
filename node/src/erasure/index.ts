/**
 * The erasure module's API: codecs per geometry (native kernel when the addon
 * is built, TypeScript otherwise), stripe split/join and bitrot framing.
 */

import { SvcError } from '../util/errors.ts';
import type { ErasureCodec } from './codec.ts';
import { tsKernel } from './codec-ts.ts';
import { nativeAddon, nativeLoadError } from './native.ts';
import { type GfKernel, RsCodec } from './rs-codec.ts';

export * from './bitrot.ts';
export { BufferPool } from './buffer-pool.ts';
export type { ErasureCodec } from './codec.ts';
export {
  BLOCK_SIZE,
  decodeStripe,
  encodeFilledFramedStripe,
  encodeFramedStripe,
  encodeStripe,
  fillFramedStripe,
  type FrameLayout,
  type FramedStripe,
  framedStripeBufferSize,
  frameStride,
  shardFileDataSize,
  shardSize,
  shardStride,
  stripeBufferSize,
} from './stripe.ts';

/**
 * `SVC_ERASURE_KERNEL` may name one of the addon's kernels (`avx2`,
 * `ssse3`, `scalar`, …) to pin it, e.g. to rule a SIMD kernel out while
 * debugging; `ts` disables the addon (see native.ts). A name this CPU cannot
 * run is refused at start-up rather than silently replaced.
 */
function pickNativeKernel(): GfKernel | null {
  if (nativeAddon === null) return null;
  const addon = nativeAddon;
  const forced = process.env.SVC_ERASURE_KERNEL;
  if (forced === undefined || forced === '') {
    return { name: `native-${addon.kernel}`, matMul: addon.matMul };
  }
  const name = forced.replace(/^native-/, '');
  if (!addon.kernels.includes(name)) {
    throw new SvcError(
      'InvalidConfig',
      `SVC_ERASURE_KERNEL=${forced}: not available here (kernels: ${addon.kernels.join(', ')}, ts)`,
    );
  }
  return {
    name: `native-${name}`,
    matMul: (coef, rows, cols, inputs, outputs, len) => addon.matMul(coef, rows, cols, inputs, outputs, len, name),
  };
}

const nativeKernel = pickNativeKernel();

const codecs = new Map<string, ErasureCodec>();

/**
 * The codec for K data + M parity shards (cached per geometry). Uses the
 * native kernel when the addon loaded, the TypeScript kernel otherwise.
 */
export function createCodec(k: number, m: number): ErasureCodec {
  const key = `${k}+${m}`;
  let codec = codecs.get(key);
  if (codec === undefined) {
    codec = new RsCodec(k, m, nativeKernel ?? tsKernel);
    codecs.set(key, codec);
  }
  return codec;
}

/** Name of the kernel codecs use: `native-gfni`, `native-gfni-avx2`, `native-avx2`, `native-ssse3`, `native-neon`, `native-scalar` or `ts`. */
export function codecKernel(): string {
  return (nativeKernel ?? tsKernel).name;
}

/** Why the native addon is not in use, or null when it is (for the start-up log). */
export function codecFallbackReason(): string | null {
  return nativeLoadError;
}
