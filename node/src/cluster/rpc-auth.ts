/**
 * Internode RPC authentication.
 *
 * Every internode request (`/svc/rpc/…`, `/svc/peer/…`) carries a short-lived
 * token in the `x-svc-rpc-token` header:
 *
 *     v2.<node-id-base64url>.<unix-ms>.<args-sha256-base64url>.<hmac-base64url>
 *
 * The HMAC-SHA256 covers the HTTP method, the request path (with query), the
 * timestamp, the calling node's id and the SHA-256 of the call's arguments
 * (the msgpack body of a unary call, the args header of a streamed upload).
 * So a token authorises exactly one call: a captured token cannot be reused
 * for another path or with other arguments (say, a delete of another
 * object). The receiver checks the MAC before it reads a body, then the
 * arguments against the digest. The key is derived from the cluster's root
 * secret with HKDF-SHA256, so the root secret itself never signs anything.
 * Tokens are valid for a few minutes around the receiver's clock: node
 * clocks are assumed synchronized (spec, Authentication 4). Comparison is
 * constant-time. An upload's data stream is not covered (its shard frames
 * carry bitrot hashes; a hostile network needs TLS), and an identical call
 * can be replayed inside the validity window.
 */
import { createHash, createHmac, createSecretKey, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';

export const RPC_TOKEN_HEADER = 'x-svc-rpc-token';

/** How far a token's timestamp may be from the receiver's clock, either way. */
export const RPC_TOKEN_VALIDITY_MS = 5 * 60_000;

const TOKEN_VERSION = 'v2';
const DIGEST_BYTES = 32;
const HKDF_SALT = 'svc-internode-rpc';
const HKDF_INFO = 'svc-rpc-token-v2';

/** Signs and verifies internode tokens for one cluster secret. */
export class RpcAuth {
  /** A KeyObject made once: createHmac imports a Buffer key anew on every call (6× the HMAC itself). */
  readonly #key: KeyObject;
  readonly #clock: Clock;
  readonly #validityMs: number;

  /**
   * @param rootSecret the cluster's root secret (identical on every node).
   * @param clock injected time source.
   */
  constructor(rootSecret: string, clock: Clock, validityMs = RPC_TOKEN_VALIDITY_MS) {
    if (rootSecret.length === 0) throw new SvcError('InvalidConfig', 'internode RPC needs a non-empty root secret');
    this.#key = createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(rootSecret, 'utf8'), HKDF_SALT, HKDF_INFO, 32)));
    this.#clock = clock;
    this.#validityMs = validityMs;
  }

  /** A token for one call from `nodeId`: `method path` with these argument bytes. */
  sign(method: string, path: string, nodeId: string, args: Uint8Array): string {
    const ts = Math.trunc(this.#clock.now());
    const digest = argsDigest(args);
    const mac = this.#mac(method, path, ts, nodeId, digest);
    return `${TOKEN_VERSION}.${Buffer.from(nodeId, 'utf8').toString('base64url')}.${ts}.${digest.toString('base64url')}.${mac.toString('base64url')}`;
  }

  /**
   * Verifies a token for `method path` (before the arguments are read).
   * Returns the caller's node id and the argument digest the token was
   * signed for (see `checkArgs`); throws `AccessDenied` when the token is
   * missing, malformed, forged or expired.
   */
  verify(method: string, path: string, token: string | undefined): VerifiedToken {
    if (token === undefined || token.length === 0 || token.length > 1024) throw denied('missing token');
    const parts = token.split('.');
    if (parts.length !== 5 || parts[0] !== TOKEN_VERSION) throw denied('malformed token');
    const [, nodeB64, tsText, digestB64, macB64] = parts as [string, string, string, string, string];
    if (!/^\d{1,16}$/.test(tsText)) throw denied('malformed token');
    const digest = Buffer.from(digestB64, 'base64url');
    if (digest.length !== DIGEST_BYTES) throw denied('malformed token');
    const ts = Number(tsText);
    const nodeId = Buffer.from(nodeB64, 'base64url').toString('utf8');
    const given = Buffer.from(macB64, 'base64url');
    const expected = this.#mac(method, path, ts, nodeId, digest);
    // Length is public (always 32 for a well-formed token); compare the bytes in constant time.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw denied('bad signature');
    if (Math.abs(this.#clock.now() - ts) > this.#validityMs) throw denied('expired token');
    return { nodeId, argsDigest: digest };
  }

  /** Throws `AccessDenied` unless `args` are the bytes the verified token was signed for. */
  checkArgs(token: VerifiedToken, args: Uint8Array): void {
    if (!timingSafeEqual(argsDigest(args), token.argsDigest)) throw denied('arguments do not match the token');
  }

  #mac(method: string, path: string, ts: number, nodeId: string, digest: Buffer): Buffer {
    return createHmac('sha256', this.#key)
      .update(`${method.toUpperCase()}\n${path}\n${ts}\n${nodeId}\n${digest.toString('base64url')}`, 'utf8')
      .digest();
  }
}

export interface VerifiedToken {
  readonly nodeId: string;
  readonly argsDigest: Buffer;
}

function argsDigest(args: Uint8Array): Buffer {
  return createHash('sha256').update(args).digest();
}

function denied(reason: string): SvcError {
  return new SvcError('AccessDenied', `internode RPC authentication failed: ${reason}`, { reason });
}
