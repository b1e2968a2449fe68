import { describe, expect, it } from 'vitest';
import { uriEncode } from './uri-encode.ts';

/** The encoding spelled out: every byte but the unreserved ones as %XX (upper case), '/' kept when asked. */
function reference(s: string, keepSlash: boolean): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === '/') ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

describe('uriEncode', () => {
  it('matches the RFC 3986 encoding byte for byte, with and without slashes kept, plain keys included', () => {
    const samples = ['', 'photos/2024/a.jpg', 'a-b_c.d~e', "it's (1)*!", 'a b+c', 'ünï/cødé', '%41', 'x?y=z&w#', '日本/語', 'a//b/'];
    for (const s of samples) {
      for (const keep of [true, false]) expect(uriEncode(s, keep), `${s} ${keep}`).toBe(reference(s, keep));
    }
  });
});
