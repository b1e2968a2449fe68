/**
 * Internode RPC authentication.
 *
 * Every internode request (`/svc/rpc/…`, `/svc/peer/…`) carries a short-lived
 * token in the `x-svc-rpc-token` header:
 *
 *     v1.<node-id-base64url>.<unix-ms>.<hmac-base64url>
 *
 * The HMAC-SHA256 covers the HTTP method, the request path (with query), the
 * timestamp and the calling node's id. Its key is derived from the cluster's
 * root secret with HKDF-SHA256, so the root secret itself never signs anything
 * and a token for one request cannot be replayed on another path. Tokens are
 * valid for a few minutes around the receiver's clock: node clocks are assumed
 * synchronized (spec, Authentication 4). Comparison is constant-time.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';

export const RPC_TOKEN_HEADER = 'x-svc-rpc-token';

/** How far a token's timestamp may be from the receiver's clock, either way. */
export const RPC_TOKEN_VALIDITY_MS = 5 * 60_000;

const TOKEN_VERSION = 'v1';
const HKDF_SALT = 'svc-internode-rpc';
const HKDF_INFO = 'svc-rpc-token-v1';

/** Signs and verifies internode tokens for one cluster secret. */
export class RpcAuth {
  readonly #key: Buffer;
  readonly #clock: Clock;
  readonly #validityMs: number;

  /**
   * @param rootSecret the cluster's root secret (identical on every node).
   * @param clock injected time source.
   */
  constructor(rootSecret: string, clock: Clock, validityMs = RPC_TOKEN_VALIDITY_MS) {
    if (rootSecret.length === 0) throw new SvcError('InvalidConfig', 'internode RPC needs a non-empty root secret');
    this.#key = Buffer.from(hkdfSync('sha256', Buffer.from(rootSecret, 'utf8'), HKDF_SALT, HKDF_INFO, 32));
    this.#clock = clock;
    this.#validityMs = validityMs;
  }

  /** A token for one request from `nodeId`, stamped with the current time. */
  sign(method: string, path: string, nodeId: string): string {
    const ts = Math.trunc(this.#clock.now());
    const mac = this.#mac(method, path, ts, nodeId);
    return `${TOKEN_VERSION}.${Buffer.from(nodeId, 'utf8').toString('base64url')}.${ts}.${mac.toString('base64url')}`;
  }

  /**
   * Verifies a token for `method path`. Returns the caller's node id; throws
   * `AccessDenied` when the token is missing, malformed, forged or expired.
   */
  verify(method: string, path: string, token: string | undefined): string {
    if (token === undefined || token.length === 0 || token.length > 1024) throw denied('missing token');
    const parts = token.split('.');
    if (parts.length !== 4 || parts[0] !== TOKEN_VERSION) throw denied('malformed token');
    const [, nodeB64, tsText, macB64] = parts as [string, string, string, string];
    if (!/^\d{1,16}$/.test(tsText)) throw denied('malformed token');
    const ts = Number(tsText);
    const nodeId = Buffer.from(nodeB64, 'base64url').toString('utf8');
    const given = Buffer.from(macB64, 'base64url');
    const expected = this.#mac(method, path, ts, nodeId);
    // Length is public (always 32 for a well-formed token); compare the bytes in constant time.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw denied('bad signature');
    if (Math.abs(this.#clock.now() - ts) > this.#validityMs) throw denied('expired token');
    return nodeId;
  }

  #mac(method: string, path: string, ts: number, nodeId: string): Buffer {
    return createHmac('sha256', this.#key).update(`${method.toUpperCase()}\n${path}\n${ts}\n${nodeId}`, 'utf8').digest();
  }
}

function denied(reason: string): SvcError {
  return new SvcError('AccessDenied', `internode RPC authentication failed: ${reason}`, { reason });
}
