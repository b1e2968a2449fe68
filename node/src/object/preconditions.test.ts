import { describe, expect, it } from 'vitest';
import type { FileVersion } from '../storage/drive.ts';
import { checkPreconditions, checkWritePreconditions, etagMatches } from './preconditions.ts';

const code = (f: () => void) => {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe('preconditions', () => {
  it('ETag lists: quoted, bare, weak, several, *', () => {
    expect(etagMatches('"abc"', 'abc')).toBe(true);
    expect(etagMatches('abc', 'abc')).toBe(true);
    expect(etagMatches('W/"abc"', 'abc')).toBe(true);
    expect(etagMatches('"x", "abc"', 'abc')).toBe(true);
    expect(etagMatches('*', 'abc')).toBe(true);
    expect(etagMatches('"x","y"', 'abc')).toBe(false);
    expect(etagMatches('"abcd"', 'abc')).toBe(false);
  });

  it('reads compare dates at HTTP (second) precision', () => {
    const mod = new Date('2026-01-01T00:00:00.900Z');
    expect(code(() => checkPreconditions({ ifModifiedSince: new Date('2026-01-01T00:00:00Z') }, 'e', mod))).toBe('NotModified');
    expect(code(() => checkPreconditions({ ifUnmodifiedSince: new Date('2026-01-01T00:00:00Z') }, 'e', mod))).toBeUndefined();
  });

  it('conditional writes: If-None-Match * refuses an existing object, If-Match needs one', () => {
    const live = { type: 'object', etag: 'abc' } as FileVersion;
    const marker = { type: 'delete' } as FileVersion;
    expect(code(() => checkWritePreconditions({ ifNoneMatch: '*' }, live))).toBe('PreconditionFailed');
    expect(code(() => checkWritePreconditions({ ifNoneMatch: '*' }, marker))).toBeUndefined();
    expect(code(() => checkWritePreconditions({ ifNoneMatch: '*' }, undefined))).toBeUndefined();
    expect(code(() => checkWritePreconditions({ ifMatch: '"abc"' }, live))).toBeUndefined();
    expect(code(() => checkWritePreconditions({ ifMatch: '"zzz"' }, live))).toBe('PreconditionFailed');
    expect(code(() => checkWritePreconditions({ ifMatch: '"abc"' }, marker))).toBe('NoSuchKey');
  });
});
