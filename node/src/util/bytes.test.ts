import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBytes, parseByteSize } from './bytes.ts';

describe('byte sizes', () => {
  it('parses binary and decimal units', () => {
    expect(parseByteSize('128KiB')).toBe(131072);
    expect(parseByteSize('128kib')).toBe(131072);
    expect(parseByteSize('1 MiB')).toBe(1048576);
    expect(parseByteSize('64KB')).toBe(64000);
    expect(parseByteSize('4096')).toBe(4096);
    expect(parseByteSize('1.5GiB')).toBe(1610612736);
    expect(parseByteSize('2Ki')).toBe(2048);
  });
  it.each(['', 'abc', '-1KiB', '12 parsecs', '1e3', 'KiB'])('rejects %j', (v) => {
    expect(() => parseByteSize(v, 'SVC_X')).toThrow(/SVC_X: invalid byte size/);
  });
  it('property: formatBytes round-trips through parseByteSize', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (n) => {
        expect(parseByteSize(formatBytes(n).replace(' ', ''))).toBe(n);
      }),
    );
  });
});
