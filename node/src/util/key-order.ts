/**
 * S3 lists keys in UTF-8 binary order, which is Unicode code point order.
 * JavaScript's `<` compares UTF-16 code units instead, and the two differ in
 * one place: a code point above U+FFFF is stored as a surrogate pair
 * (U+D800–U+DFFF), so `<` puts it before U+E000–U+FFFF, where UTF-8 puts it
 * after. `compareKeys` is `<` with that one case corrected; every listing
 * order and marker comparison goes through it.
 */

/** Code point order of two strings: negative, zero or positive. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  let x = a.charCodeAt(i);
  let y = b.charCodeAt(i);
  // Only a surrogate against U+E000–U+FFFF sorts differently: lift surrogates
  // above the rest of the top of the BMP.
  if (x >= 0xd800 && y >= 0xd800) {
    x = x < 0xe000 ? x + 0x2000 : x - 0x800;
    y = y < 0xe000 ? y + 0x2000 : y - 0x800;
  }
  return x - y;
}
