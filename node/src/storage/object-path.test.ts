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
});
