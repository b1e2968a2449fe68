/**
 * Arithmetic in GF(2^8) with the reducing polynomial x^8 + x^4 + x^3 + x^2 + 1
 * (0x11d), generator 2: the field ISA-L, Jerasure and most RS codecs use, so
 * parity computed here can be cross-checked against them.
 *
 * Addition is XOR. Multiplication goes through log/exp tables; the full
 * 256 × 256 product table (`MUL_TABLE`, 64 KiB) backs the TypeScript kernel,
 * where one lookup per byte is the cheapest inner loop JS can run.
 */

export const GF_POLY = 0x11d;

/** `EXP[i] = 2^i`, doubled in length so `EXP[LOG[a] + LOG[b]]` needs no modulo. */
export const GF_EXP: Uint8Array = new Uint8Array(512);
/** `LOG[a]` for a ≠ 0; `LOG[0]` is unused (0). */
export const GF_LOG: Uint8Array = new Uint8Array(256);

{
  let x = 1;
  for (let i = 0; i < 255; i++) {
    GF_EXP[i] = x;
    GF_LOG[x] = i;
    x <<= 1;
    if (x & 0x100) x ^= GF_POLY;
  }
  for (let i = 255; i < 512; i++) GF_EXP[i] = GF_EXP[i - 255]!;
}

export function gfAdd(a: number, b: number): number {
  return a ^ b;
}

export function gfMul(a: number, b: number): number {
  if (a === 0 || b === 0) return 0;
  return GF_EXP[GF_LOG[a]! + GF_LOG[b]!]!;
}

/** Multiplicative inverse; `gfInv(0)` is undefined in the field and throws. */
export function gfInv(a: number): number {
  if (a === 0) throw new RangeError('GF(2^8): 0 has no inverse');
  return GF_EXP[255 - GF_LOG[a]!]!;
}

export function gfDiv(a: number, b: number): number {
  if (b === 0) throw new RangeError('GF(2^8): division by 0');
  if (a === 0) return 0;
  return GF_EXP[GF_LOG[a]! + 255 - GF_LOG[b]!]!;
}

/** `a^n` for n ≥ 0. */
export function gfPow(a: number, n: number): number {
  if (n === 0) return 1;
  if (a === 0) return 0;
  return GF_EXP[(GF_LOG[a]! * n) % 255]!;
}

/** `MUL_TABLE[c * 256 + x] = c · x`: row c is the "multiply by c" lookup table. */
export const MUL_TABLE: Uint8Array = new Uint8Array(256 * 256);
for (let c = 1; c < 256; c++) {
  const row = c * 256;
  for (let x = 1; x < 256; x++) MUL_TABLE[row + x] = GF_EXP[GF_LOG[c]! + GF_LOG[x]!]!;
}

/** The 256-entry "multiply by c" table as a view into `MUL_TABLE`. */
export function mulRow(c: number): Uint8Array {
  return MUL_TABLE.subarray(c * 256, c * 256 + 256);
}
