/** Cookie header parsing and Set-Cookie serialisation (RFC 6265), pure. */

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (header === undefined) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    const name = part.slice(0, i).trim();
    let value = part.slice(i + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    // the first occurrence wins (the most specific path comes first)
    if (name !== '' && !out.has(name)) out.set(name, value);
  }
  return out;
}

export interface CookieOptions {
  readonly path: string;
  /** Seconds; 0 deletes the cookie. */
  readonly maxAge: number;
  readonly secure: boolean;
  /** Lax: also sent on a top-level navigation from another site (the identity provider's redirect back). Default Strict. */
  readonly sameSite?: 'Strict' | 'Lax';
}

/** An HttpOnly, SameSite=Strict (or Lax) cookie: never readable by scripts, never sent on cross-site requests (Lax: but for top-level GET navigations). */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${o.path}`, `Max-Age=${Math.max(0, Math.floor(o.maxAge))}`, 'HttpOnly', `SameSite=${o.sameSite ?? 'Strict'}`];
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}
