import { describe, expect, it } from 'vitest';
import { code } from '../../../test/helpers/error-code.ts';
import { checkPostPolicy, parsePostPolicy } from './post-policy.ts';

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64');
const NOW = Date.parse('2026-01-01T00:00:00Z');
const policy = (conditions: unknown[], expiration = '2026-01-02T00:00:00Z') => parsePostPolicy(b64({ expiration, conditions }));
const fields = (o: Record<string, string>) => new Map(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));

describe('POST policy', () => {
  it('eq, starts-with, content-length-range, object shorthand, case rules', () => {
    const p = policy([{ bucket: 'b' }, ['starts-with', '$key', 'user/'], ['eq', '$Content-Type', 'image/png'], ['content-length-range', 10, 100], ['starts-with', '$x-amz-meta-note', '']]);
    expect(checkPostPolicy(p, fields({ key: 'user/${filename}', 'Content-Type': 'image/png', 'x-amz-meta-note': 'anything', policy: 'p', 'x-amz-signature': 's', 'x-ignore-me': '1' }), 'b', NOW)).toEqual({ min: 10, max: 100 });
    const deny = (f: Record<string, string>, bucket = 'b') => code(() => checkPostPolicy(p, fields({ key: 'user/a', 'Content-Type': 'image/png', ...f }), bucket, NOW));
    expect(deny({ key: 'other/a' })).toBe('AccessDenied');
    expect(deny({ 'Content-Type': 'IMAGE/PNG' })).toBe('AccessDenied');
    expect(deny({ 'x-amz-meta-extra': 'x' })).toBe('AccessDenied');
    expect(deny({}, 'other-bucket')).toBe('AccessDenied');
    const ct = policy([['starts-with', '$Content-Type', 'image/']]);
    expect(checkPostPolicy(ct, fields({ 'content-type': 'image/png, image/jpeg' }), 'b', NOW)).toEqual({ min: 0, max: Number.MAX_SAFE_INTEGER });
    expect(code(() => checkPostPolicy(ct, fields({ 'content-type': 'image/png, text/plain' }), 'b', NOW))).toBe('AccessDenied');
  });

  it('expired policies are AccessDenied; malformed ones InvalidPolicyDocument', () => {
    expect(code(() => checkPostPolicy(policy([], '2025-12-31T00:00:00Z'), fields({}), 'b', NOW))).toBe('AccessDenied');
    for (const bad of ['not json', { conditions: [] }, { expiration: 'never', conditions: [] }, { expiration: '2026-01-02T00:00:00Z' }, { expiration: '2026-01-02T00:00:00Z', conditions: [['eq', 'key', 'x']] }, { expiration: '2026-01-02T00:00:00Z', conditions: [['content-length-range', 5, 1]] }, { expiration: '2026-01-02T00:00:00Z', conditions: [['matches', '$key', 'x']] }, { expiration: '2026-01-02T00:00:00Z', conditions: [{ a: 1, b: 2 }] }]) {
      expect(code(() => parsePostPolicy(b64(bad))), JSON.stringify(bad)).toBe('InvalidPolicyDocument');
    }
  });
});
