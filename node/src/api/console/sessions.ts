/**
 * Console sessions, held in this node's memory only.
 *
 * Signing in exchanges an access key and secret key for a random session
 * token (256 bits), which the browser keeps in an HttpOnly, SameSite=Strict
 * cookie; the keys stay here and sign the node's own S3 and admin calls on
 * the user's behalf. The store is keyed by the token's SHA-256, so the
 * tokens themselves are not kept either.
 *
 * A session ends `idleMs` after its last request, `maxMs` after sign-in
 * whatever its activity, at sign-out, and with the process. Memory is
 * bounded: past `maxSessions` the least recently used session is dropped.
 * Time comes from the injected clock.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../util/clock.ts';

export interface SessionCredentials {
  readonly accessKey: string;
  readonly secretKey: string;
  /** Temporary credentials (single sign-on through STS) carry their session token. */
  readonly sessionToken?: string;
}

export interface Session {
  readonly credentials: SessionCredentials;
  /** The user may read the cluster (the admin API answered its sign-in check). */
  readonly admin: boolean;
  /** What the identity's own policies allow (the pages hide or disable what it may not do). */
  readonly permissions?: Readonly<Record<string, boolean>>;
  /** Sent by the page on every mutating call (`x-csrf-token`). */
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** The session's temporary credentials expire then (single sign-on): it ends then at the latest. */
  readonly notAfter?: number;
}

export interface SessionStoreOptions {
  readonly clock: Clock;
  readonly idleMs: number;
  readonly maxMs: number;
  readonly maxSessions?: number;
}

const keyOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** base64url of 32 random bytes: 43 characters. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

export class SessionStore {
  readonly #o: Required<SessionStoreOptions>;
  /** Insertion order = least recently used first (a touched session is re-inserted). */
  readonly #sessions = new Map<string, Session>();

  constructor(o: SessionStoreOptions) {
    this.#o = { maxSessions: 10_000, ...o };
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** When `s` ends if nothing else happens. */
  expiresAt(s: Session): number {
    return Math.min(s.lastSeenAt + this.#o.idleMs, this.endsBy(s));
  }

  /** When `s` ends at the latest, however active. */
  endsBy(s: Session): number {
    return Math.min(s.createdAt + this.#o.maxMs, s.notAfter ?? Infinity);
  }

  create(credentials: SessionCredentials, admin: boolean, permissions?: Readonly<Record<string, boolean>>, notAfter?: number): { token: string; session: Session } {
    const now = this.#o.clock.now();
    this.#sweep(now);
    while (this.#sessions.size >= this.#o.maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
    const token = randomBytes(32).toString('base64url');
    const session: Session = { credentials, admin, ...(permissions ? { permissions } : {}), csrfToken: randomBytes(32).toString('base64url'), createdAt: now, lastSeenAt: now, ...(notAfter !== undefined ? { notAfter } : {}) };
    this.#sessions.set(keyOf(token), session);
    return { token, session };
  }

  /**
   * The live session for `token`; undefined when unknown, ended or malformed.
   * `touch` (default) counts the request as activity; a page's own periodic
   * refresh passes false, so a tab left open still ends after the idle time.
   */
  get(token: string, touch = true): Session | undefined {
    if (!TOKEN_RE.test(token)) return undefined;
    const key = keyOf(token);
    const s = this.#sessions.get(key);
    if (s === undefined) return undefined;
    const now = this.#o.clock.now();
    if (now >= this.expiresAt(s)) {
      this.#sessions.delete(key);
      return undefined;
    }
    if (!touch) return s;
    s.lastSeenAt = now;
    this.#sessions.delete(key);
    this.#sessions.set(key, s);
    return s;
  }

  end(token: string): void {
    if (TOKEN_RE.test(token)) this.#sessions.delete(keyOf(token));
  }

  #sweep(now: number): void {
    for (const [k, s] of this.#sessions) if (now >= this.expiresAt(s)) this.#sessions.delete(k);
  }
}

/** Constant-time comparison of a presented CSRF token with the session's. */
export function csrfMatches(session: Session, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
