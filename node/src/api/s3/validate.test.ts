import { describe, expect, it } from 'vitest';
import { code } from '../../../test/helpers/error-code.ts';
import { checkPreconditions, encodeTags, normaliseTags, parseRange, validateBucketName } from './validate.ts';

describe('validation', () => {
  it('bucket names follow the S3 rules', () => {
    for (const ok of ['abc', 'my-bucket.data', 'a'.repeat(63), '1bucket']) expect(code(() => validateBucketName(ok)), ok).toBeUndefined();
    for (const bad of ['ab', 'a'.repeat(64), 'Upper', 'under_score', '-start', 'end-', 'a..b', '192.168.1.1', 'xn--abc', 'a.-b', 'x-s3alias'.padStart(12, 'b')]) {
      expect(code(() => validateBucketName(bad)), bad).toBe('InvalidBucketName');
    }
  });

  it('ranges: syntax, suffix, open; invalid syntax is ignored', () => {
    expect(parseRange('bytes=0-9')).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=5-')).toEqual({ start: 5 });
    expect(parseRange('bytes=-3')).toEqual({ suffix: 3 });
    for (const ignored of ['bytes=9-0', 'bytes=0-1,3-4', 'items=0-1', 'bytes=-', undefined]) expect(parseRange(ignored)).toBeUndefined();
  });

  it('preconditions follow RFC 7232 precedence', () => {
    const mod = new Date('2026-01-01T00:00:00Z');
    const before = new Date('2025-12-31T00:00:00Z');
    const after = new Date('2026-01-02T00:00:00Z');
    expect(code(() => checkPreconditions({ ifMatch: '"abc"' }, 'abc', mod))).toBeUndefined();
    expect(code(() => checkPreconditions({ ifMatch: '"zzz"' }, 'abc', mod))).toBe('PreconditionFailed');
    expect(code(() => checkPreconditions({ ifMatch: '*' }, 'abc', mod))).toBeUndefined();
    // If-Match true overrides a failing If-Unmodified-Since
    expect(code(() => checkPreconditions({ ifMatch: 'abc', ifUnmodifiedSince: before }, 'abc', mod))).toBeUndefined();
    expect(code(() => checkPreconditions({ ifUnmodifiedSince: before }, 'abc', mod))).toBe('PreconditionFailed');
    expect(code(() => checkPreconditions({ ifNoneMatch: '"abc"' }, 'abc', mod))).toBe('NotModified');
    expect(code(() => checkPreconditions({ ifNoneMatch: '"abc"' }, 'abc', mod, true))).toBe('PreconditionFailed');
    expect(code(() => checkPreconditions({ ifModifiedSince: after }, 'abc', mod))).toBe('NotModified');
    expect(code(() => checkPreconditions({ ifModifiedSince: before }, 'abc', mod))).toBeUndefined();
    // If-None-Match false overrides If-Modified-Since
    expect(code(() => checkPreconditions({ ifNoneMatch: '"x"', ifModifiedSince: after }, 'abc', mod))).toBeUndefined();
  });

  it('tags: limits, duplicates, aws: prefix, normalisation', () => {
    expect(normaliseTags('b=2&a=1', 10)).toBe('b=2&a=1');
    expect(normaliseTags('k=v%20w', 10)).toBe('k=v+w');
    expect(code(() => encodeTags([['k', 'v'], ['k', 'w']], 10))).toBe('InvalidTag');
    expect(code(() => encodeTags([['aws:x', 'v']], 10))).toBe('InvalidTag');
    expect(code(() => encodeTags([['k'.repeat(129), 'v']], 10))).toBe('InvalidTag');
    expect(code(() => encodeTags([['k', 'v'.repeat(257)]], 10))).toBe('InvalidTag');
    expect(code(() => encodeTags(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'] as [string, string]), 10))).toBe('InvalidTag');
  });
});
