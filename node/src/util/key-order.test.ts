import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from './key-order.ts';

const utf8Order = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

describe('compareKeys (S3 UTF-8 binary order)', () => {
  it('puts characters above U+FFFF after U+E000–U+FFFF, unlike <', () => {
    const clef = '\u{1D11E}'; // surrogate pair in UTF-16
    const pua = '\uE000';
    expect(clef < pua).toBe(true); // UTF-16 order
    expect(compareKeys(clef, pua)).toBeGreaterThan(0);
    expect(compareKeys('a\uFFFF', 'a\u{10000}')).toBeLessThan(0);
    expect(['b', '\u{1F600}', '\uFF21', 'a/', 'a'].sort(compareKeys)).toEqual(['a', 'a/', 'b', '\uFF21', '\u{1F600}']);
  });

  it('agrees with the byte order of the UTF-8 encodings on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareKeys(a, b))).toBe(Math.sign(utf8Order(a, b)));
      }),
      { numRuns: 5000 },
    );
    // shared prefixes, where the first difference is deep inside
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (p, a, b) => {
        expect(Math.sign(compareKeys(p + a, p + b))).toBe(Math.sign(utf8Order(p + a, p + b)));
      }),
      { numRuns: 5000 },
    );
  });
});
