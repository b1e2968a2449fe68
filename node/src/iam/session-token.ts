/**
 * Session tokens of temporary credentials (STS): self-contained and sealed.
 * A token carries the credential's access key, secret, expiry, where it came
 * from (AssumeRole by a user, a web identity, an LDAP user), the session
 * policy and the identity provider's claims, encrypted and authenticated
 * with AES-256-GCM under the deployment's session key (kept in the identity
 * store, the same on every node). So every node verifies a session with no
 * lookup and nothing to propagate, and a forged or altered token fails to
 * open. What a session may do is still decided per request from the
 * current store: a disabled or deleted parent user, or a detached policy,
 * takes effect on its sessions at once.
 *
 * Token: base64url(`1` | iv[12] | ciphertext | tag[16]); the plaintext is JSON.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export type SessionKind = 'assume-role' | 'web-identity' | 'ldap';

export interface SessionClaims {
  /** Access key and secret of the temporary credential. */
  ak: string;
  sk: string;
  /** Issued at and expiry, Unix ms. */
  iat: number;
  exp: number;
  kind: SessionKind;
  /** AssumeRole: the user that asked (null for the root credential). Web/LDAP: absent. */
  parent?: string | null;
  /** Web identity and LDAP: the user name the session acts as (`aws:username`). */
  subject?: string;
  /** Web identity and LDAP: the policy names mapped from the provider (resolved per request). */
  policies?: string[];
  /** The session policy (JSON text) narrowing the session, if any. */
  sessionPolicy?: string;
  /** Condition keys from the provider (`jwt:sub`, `ldap:username`, ...). */
  claims?: Record<string, string[]>;
}

const VERSION = 1;
const AAD = Buffer.from('svc-sts-session-v1');

export function sealSessionToken(key: Uint8Array, c: SessionClaims): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const body = Buffer.concat([cipher.update(JSON.stringify(c), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.of(VERSION), iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The claims of a token sealed with `key`; undefined for anything else (malformed, forged, another key). */
export function openSessionToken(key: Uint8Array, token: string): SessionClaims | undefined {
  if (token.length < 40 || token.length > 16 * 1024 || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length < 1 + 12 + 16 + 2 || raw[0] !== VERSION) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(1, 13));
    decipher.setAAD(AAD);
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const text = Buffer.concat([decipher.update(raw.subarray(13, raw.length - 16)), decipher.final()]).toString('utf8');
    const c = JSON.parse(text) as SessionClaims;
    if (typeof c.ak !== 'string' || typeof c.sk !== 'string' || typeof c.exp !== 'number') return undefined;
    return c;
  } catch {
    return undefined;
  }
}
