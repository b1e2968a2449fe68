/**
 * The pure-TypeScript GF(2^8) kernel: portable fallback when the native addon
 * is not built, and the oracle the native kernels are fuzzed against.
 * One table lookup per byte per coefficient (`MUL_TABLE` row of the
 * coefficient), roughly 0.1–0.3 GB/s: correct everywhere, never fast.
 */
import { mulRow } from './gf256.ts';
import { type GfKernel, RsCodec } from './rs-codec.ts';

export const tsKernel: GfKernel = {
  name: 'ts',
  matMul(coef, rows, cols, inputs, outputs, len) {
    for (let r = 0; r < rows; r++) {
      const out = outputs[r]!;
      for (let j = 0; j < cols; j++) {
        const c = coef[r * cols + j]!;
        const src = inputs[j]!;
        if (j === 0) {
          if (c === 0) out.fill(0, 0, len);
          else if (c === 1) out.set(src.subarray(0, len));
          else {
            const t = mulRow(c);
            for (let i = 0; i < len; i++) out[i] = t[src[i]!]!;
          }
        } else if (c === 1) {
          for (let i = 0; i < len; i++) out[i]! ^= src[i]!;
        } else if (c !== 0) {
          const t = mulRow(c);
          for (let i = 0; i < len; i++) out[i]! ^= t[src[i]!]!;
        }
      }
    }
  },
};

/** A codec running the TypeScript kernel. */
export function createTsCodec(k: number, m: number): RsCodec {
  return new RsCodec(k, m, tsKernel);
}
