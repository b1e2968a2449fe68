/**
 * What svc's own clients trust when they call an https:// svc endpoint: the
 * internode RPC client, the console's calls to its node's S3 listener, the
 * `svc` admin client and probes. One CA set: Node's default roots
 * (Mozilla's bundle plus `NODE_EXTRA_CA_CERTS`), every certificate in the
 * certificate directory's `CAs/`, and on a server its own certificates (so
 * one self-signed pair shared by every node works without a CA). Host names
 * are always verified; `--insecure` (clients only) turns verification off.
 *
 * A trust set is live: the server's certificate store bumps `version` when
 * `CAs/` or its pairs change, and `tlsConnector` builds new connections with
 * the new set (open ones keep theirs).
 */
import { getCACertificates, type ConnectionOptions } from 'node:tls';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { readCertificateDir } from './cert-dir.ts';
import { TLS_CIPHERS, TLS_MIN_VERSION } from './tls-settings.ts';

export interface ClientTrust {
  /** Changes whenever `connectOptions()` would return something else. */
  readonly version: number;
  /** `tls.connect` options: the CA set, or no verification for `--insecure`. */
  connectOptions(): ConnectionOptions;
  /** True when certificates are not verified (`--insecure`). */
  readonly insecure: boolean;
}

let defaults: readonly string[] | undefined;

/** Node's default roots (bundled Mozilla set plus `NODE_EXTRA_CA_CERTS`), read once. */
export function defaultCaCertificates(): readonly string[] {
  defaults ??= getCACertificates('default');
  return defaults;
}

/** TLS options common to every svc client connection. */
export const CLIENT_BASE = { minVersion: TLS_MIN_VERSION, ciphers: TLS_CIPHERS } as const;

/** A fixed trust set: the defaults plus `extraPems` (own leaves may be among them: partial chains are accepted). */
export function staticTrust(extraPems: readonly string[], insecure = false): ClientTrust {
  const options: ConnectionOptions = insecure
    ? { ...CLIENT_BASE, rejectUnauthorized: false }
    : { ...CLIENT_BASE, ca: [...defaultCaCertificates(), ...extraPems], allowPartialTrustChain: extraPems.length > 0 };
  return { version: 0, insecure, connectOptions: () => options };
}

/**
 * A client's trust from a certificate directory (the `svc` command's:
 * `SVC_CERTS_DIR`, default `~/.svc/certs`): its `CAs/` and, when present,
 * its `public.crt` (a self-signed server certificate copied there). A
 * missing directory is the defaults alone.
 */
export async function loadClientTrust(dir: string | undefined, insecure: boolean, now = Date.now()): Promise<ClientTrust> {
  if (insecure) return staticTrust([], true);
  if (dir === undefined) return staticTrust([]);
  const d = await readCertificateDir(dir, now);
  return staticTrust([...d.cas.map((c) => c.pem), ...(d.main ? [d.main.leaf.toString()] : [])]);
}

/**
 * An undici `connect` function for https origins that follows `trust` (a
 * new connector when its version changes). `base` carries the connector's
 * own options (connect timeout, session cache).
 */
export function tlsConnector(trust: ClientTrust, base: buildConnector.BuildOptions = {}, extra: () => ConnectionOptions = () => ({})): buildConnector.connector {
  let built: { version: number; connect: buildConnector.connector } | undefined;
  return (opts, cb) => {
    if (built?.version !== trust.version) built = { version: trust.version, connect: buildConnector({ ...base, ...trust.connectOptions(), ...extra() } as buildConnector.BuildOptions) };
    built.connect(opts, cb);
  };
}

const fetchers = new WeakMap<ClientTrust, typeof fetch>();

/**
 * A `fetch` whose https connections follow `trust` (the node's CA set, host
 * names verified): for calls to services the operator runs, such as an
 * OpenID provider behind a private CA. One connection pool per trust set.
 */
export function trustedFetch(trust: ClientTrust): typeof fetch {
  let f = fetchers.get(trust);
  if (f === undefined) {
    const agent = new Agent({ connect: tlsConnector(trust, { timeout: 10_000 }), keepAliveTimeout: 4_000 });
    // undici's fetch is the one Node's global wraps; its types are its own
    f = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
    fetchers.set(trust, f);
  }
  return f;
}

/** OpenSSL and Node codes of a refused certificate or a failed handshake. */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
  'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'EPROTO',
]);

/**
 * When `err` (or a cause) is a TLS verification or handshake failure: a
 * short reason (`CODE: message`); else undefined.
 */
export function tlsFailureReason(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))) {
      return `${code}: ${(e as Error).message}`;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
