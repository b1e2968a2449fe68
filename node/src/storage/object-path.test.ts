import { describe, expect, it } from 'vitest';
import { hasCode } from '../util/errors.ts';
import { keyOfEntry, objectPath } from './object-path.ts';

describe('object paths', () => {
  it('maps directory objects and back', () => {
    expect(objectPath('a/b')).toBe('a/b');
    expect(objectPath('a/b/')).toBe('a/b__XLDIR__');
    expect(keyOfEntry('a/', 'b__XLDIR__')).toBe('a/b/');
    expect(keyOfEntry('a/', 'b')).toBe('a/b');
  });
  it('rejects names that escape the volume or use the reserved suffix', () => {
    for (const k of ['', '..', 'a/../b', './a', 'a//b', '/a', 'x__XLDIR__', 'x__XLDIR__/y']) {
      let code = '';
      try {
        objectPath(k);
      } catch (err) {
        code = hasCode(err, 'InvalidObjectName') ? 'InvalidObjectName' : String(err);
      }
      expect(code, k).toBe('InvalidObjectName');
    }
  });
  it('refuses keys no drive can hold, with a code that says why (issue 27 items 2, 8)', () => {
    const codeOf = (k: string) => {
      try {
        objectPath(k);
        return 'ok';
      } catch (err) {
        return (err as { code?: string }).code;
      }
    };
    expect(codeOf('a/xl.meta')).toBe('XSvcObjectNameReserved');
    expect(codeOf('xl.meta/b')).toBe('XSvcObjectNameReserved');
    expect(codeOf('a/xl.meta.bak')).toBe('ok');
    expect(codeOf(`a/${'x'.repeat(255)}`)).toBe('ok');
    expect(codeOf(`a/${'x'.repeat(256)}`)).toBe('XSvcObjectNameSegmentTooLong');
    // Bytes, not characters: 128 two-byte characters are 256 bytes.
    expect(codeOf(`a/${'é'.repeat(128)}`)).toBe('XSvcObjectNameSegmentTooLong');
    expect(codeOf(`${'y'.repeat(246)}/`)).toBe('ok');
    expect(codeOf(`${'y'.repeat(247)}/`)).toBe('XSvcObjectNameSegmentTooLong');
  });
});
