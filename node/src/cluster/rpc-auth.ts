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
 * clocks are assumed synchronized (spec, Authentication 4).
 *
 * While the root credential rotates (util/root-credential.ts) a node knows
 * two secrets for a grace period: it signs with both (a sixth part carries
 * the previous secret's MAC) and accepts either, so a peer that has not seen
 * the new key files yet and one that has still authenticate each other. Comparison is
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

/** The secrets a node knows, current first (then the previous one during a rotation's grace period). */
export type RpcSecrets = () => readonly string[];

/** Signs and verifies internode tokens for the cluster secret. */
export class RpcAuth {
  readonly #secrets: RpcSecrets;
  /** KeyObjects made once per secret: createHmac imports a Buffer key anew on every call (6× the HMAC itself). */
  readonly #keys = new Map<string, KeyObject>();
  readonly #clock: Clock;
  readonly #validityMs: number;

  /**
   * @param rootSecret the cluster's root secret (identical on every node), or
   *   the secrets it currently knows (current first).
   * @param clock injected time source.
   */
  constructor(rootSecret: string | RpcSecrets, clock: Clock, validityMs = RPC_TOKEN_VALIDITY_MS) {
    if (typeof rootSecret === 'string') {
      const fixed = [rootSecret];
      this.#secrets = () => fixed;
    } else this.#secrets = rootSecret;
    this.#keysNow();
    this.#clock = clock;
    this.#validityMs = validityMs;
  }

  /** The current keys (current first, at most two); derived once per secret. */
  #keysNow(): KeyObject[] {
    const secrets = this.#secrets().slice(0, 2);
    if (secrets.length === 0 || secrets.some((s) => s.length === 0)) throw new SvcError('InvalidConfig', 'internode RPC needs a non-empty root secret');
    return secrets.map((secret) => {
      let key = this.#keys.get(secret);
      if (key === undefined) {
        if (this.#keys.size >= 4) this.#keys.clear();
        key = createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), HKDF_SALT, HKDF_INFO, 32)));
        this.#keys.set(secret, key);
      }
      return key;
    });
  }

  /** A token for one call from `nodeId`: `method path` with these argument bytes. */
  sign(method: string, path: string, nodeId: string, args: Uint8Array): string {
    const ts = Math.trunc(this.#clock.now());
    const digest = argsDigest(args);
    const macs = this.#keysNow().map((k) => mac(k, method, path, ts, nodeId, digest).toString('base64url'));
    return `${TOKEN_VERSION}.${Buffer.from(nodeId, 'utf8').toString('base64url')}.${ts}.${digest.toString('base64url')}.${macs.join('.')}`;
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
    if (parts.length < 5 || parts.length > 6 || parts[0] !== TOKEN_VERSION) throw denied('malformed token');
    const [, nodeB64, tsText, digestB64, ...macsB64] = parts as [string, string, string, string, string];
    if (!/^\d{1,16}$/.test(tsText)) throw denied('malformed token');
    const digest = Buffer.from(digestB64, 'base64url');
    if (digest.length !== DIGEST_BYTES) throw denied('malformed token');
    const ts = Number(tsText);
    const nodeId = Buffer.from(nodeB64, 'base64url').toString('utf8');
    const given = macsB64.map((m) => Buffer.from(m, 'base64url'));
    // Any of the caller's MACs under any secret this node knows (two at most each, during a rotation).
    // Length is public (always 32 for a well-formed token); compare the bytes in constant time.
    let ok = false;
    for (const key of this.#keysNow()) {
      const expected = mac(key, method, path, ts, nodeId, digest);
      for (const g of given) if (g.length === expected.length && timingSafeEqual(g, expected)) ok = true;
    }
    if (!ok) throw denied('bad signature');
    // The MAC is good, so the node and its clock are the caller's own: a stale or future token is clock skew.
    const skewMs = this.#clock.now() - ts;
    if (Math.abs(skewMs) > this.#validityMs) {
      throw new SvcError(
        'AccessDenied',
        `internode RPC authentication failed: the token of ${nodeId} is ${Math.round(Math.abs(skewMs) / 1000)} s ${skewMs > 0 ? 'old' : 'in the future'}: its clock and this node's differ by more than ${this.#validityMs / 1000} s`,
        { reason: 'clock skew', nodeId, skewMs },
      );
    }
    return { nodeId, argsDigest: digest, skewMs };
  }

  /** Throws `AccessDenied` unless `args` are the bytes the verified token was signed for. */
  checkArgs(token: VerifiedToken, args: Uint8Array): void {
    if (!timingSafeEqual(argsDigest(args), token.argsDigest)) throw denied('arguments do not match the token');
  }
}

function mac(key: KeyObject, method: string, path: string, ts: number, nodeId: string, digest: Buffer): Buffer {
  return createHmac('sha256', key)
    .update(`${method.toUpperCase()}\n${path}\n${ts}\n${nodeId}\n${digest.toString('base64url')}`, 'utf8')
    .digest();
}

export interface VerifiedToken {
  readonly nodeId: string;
  readonly argsDigest: Buffer;
  /** This node's clock minus the caller's when it signed (network delay included): the skew seen in this call. */
  readonly skewMs: number;
}

function argsDigest(args: Uint8Array): Buffer {
  return createHash('sha256').update(args).digest();
}

function denied(reason: string): SvcError {
  return new SvcError('AccessDenied', `internode RPC authentication failed: ${reason}`, { reason });
}
