/**
 * The TLS parameters every svc listener uses: TLS 1.2 and 1.3 only, AEAD
 * ciphers with forward secrecy (Mozilla's "intermediate" list without the
 * finite-field DHE suites, which cost a slow handshake and add nothing a
 * client of an object store lacks), X25519 then the NIST curves. Pure.
 */
import type { SecureContextOptions } from 'node:tls';
import type { CertificatePair } from './cert-dir.ts';

export const TLS_MIN_VERSION = 'TLSv1.2' as const;

/** TLS 1.3 suites first (OpenSSL takes them from the same list), then the TLS 1.2 ECDHE AEAD suites. */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

export const TLS_ECDH_CURVES = 'X25519:prime256v1:secp384r1';

/** Options of a server context serving `pair`. */
export function serverContextOptions(pair: CertificatePair): SecureContextOptions {
  return {
    cert: pair.certPem,
    key: pair.keyPem,
    minVersion: TLS_MIN_VERSION,
    ciphers: TLS_CIPHERS,
    ecdhCurve: TLS_ECDH_CURVES,
    honorCipherOrder: true,
  };
}
