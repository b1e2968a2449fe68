/**
 * Mode `generated` of `spec.tls`: the operator is the cluster's CA. It keeps
 * an ECDSA P-256 CA (10 years) in `<cluster>-tls-ca` and issues the
 * cluster's certificate (`tlsNames`: every pod, the Services, extra names)
 * into `<cluster>-tls` as `tls.crt`, `tls.key` and `ca.crt`, renewed before
 * its end; pods pick the new files up without a restart (docs/tls.md).
 *
 * Certificates are built with `@peculiar/x509` over Node's WebCrypto and
 * read back with `node:crypto`'s X509Certificate.
 */
import 'reflect-metadata';
import { randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// @peculiar/x509 is typed against the DOM's WebCrypto; Node's is the same API.
x509.cryptoProvider.set(webcrypto as never);
type KeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
export const CA_LIFETIME_MS = 10 * 365 * 24 * 3_600_000;
export const DEFAULT_LIFETIME = '2160h';

export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

/** A Go duration (`2160h`, `1h30m`, `90s`) in milliseconds. */
export function parseGoDuration(s: string): number {
  const re = /([0-9]+(?:\.[0-9]+)?)(h|m|s)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let seen = 0;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * { h: 3_600_000, m: 60_000, s: 1000 }[m[2] as 'h' | 'm' | 's'];
    seen = re.lastIndex;
  }
  if (seen !== s.length || s.length === 0) throw new Error(`invalid duration "${s}" (expected e.g. 2160h, 1h30m)`);
  return total;
}

/** Lifetime and renewal margin of a `generated` certificate (default: 90 days, renewed a third before the end). */
export function generatedTiming(spec: { duration?: string | undefined; renewBefore?: string | undefined } | undefined): { lifetimeMs: number; renewBeforeMs: number } {
  const lifetimeMs = parseGoDuration(spec?.duration ?? DEFAULT_LIFETIME);
  const renewBeforeMs = spec?.renewBefore === undefined ? Math.floor(lifetimeMs / 3) : parseGoDuration(spec.renewBefore);
  return { lifetimeMs, renewBeforeMs: Math.min(renewBeforeMs, lifetimeMs - 1000) };
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** A new CA for `cluster`, valid from a minute before `now` for 10 years. */
export async function createCa(cluster: string, now: Date): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as KeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=svc-operator CA for ${cluster}, O=svc`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(now.getTime() + CA_LIFETIME_MS),
    signingAlgorithm: ALG,
    keys: keys as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** A server (and client) certificate for `names`, signed by `ca`, valid `lifetimeMs` from a minute before `now`. */
export async function issueCertificate(ca: PemPair, cluster: string, names: { dns: readonly string[]; ips: readonly string[] }, now: Date, lifetimeMs: number): Promise<PemPair> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decode(ca.key)[0]!, ALG, false, ['sign']);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as KeyPair;
  const notAfter = Math.min(now.getTime() + lifetimeMs, new Date(caCert.notAfter).getTime());
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${cluster}, O=svc`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter: new Date(notAfter),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey as never,
    signingKey: caKey as never,
    extensions: [
      new x509.SubjectAlternativeNameExtension([...names.dns.map((value) => ({ type: 'dns' as const, value })), ...names.ips.map((value) => ({ type: 'ip' as const, value }))]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** Names of a certificate's subjectAltName, as `tlsNames` lists them. */
function sanOf(cert: X509Certificate): { dns: string[]; ips: string[] } {
  const dns: string[] = [];
  const ips: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(/,\s*/)) {
    const m = /^(DNS|IP Address):(.+)$/.exec(part.trim());
    if (m?.[1] === 'DNS') dns.push(m[2]!.toLowerCase());
    else if (m) ips.push(m[2]!);
  }
  return { dns, ips };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/**
 * Why the certificate in the Secret must be issued again (undefined: it is
 * good): missing or unreadable, not signed by `ca`, names that differ from
 * `names` (a pool was added), or less than `renewBeforeMs` left.
 */
export function renewalReason(
  tlsCrt: string | undefined,
  tlsKey: string | undefined,
  ca: PemPair,
  names: { dns: readonly string[]; ips: readonly string[] },
  now: Date,
  renewBeforeMs: number,
): string | undefined {
  if (tlsCrt === undefined || tlsKey === undefined || tlsCrt === '' || tlsKey === '') return 'no certificate yet';
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(tlsCrt);
  } catch {
    return 'the certificate cannot be read';
  }
  if (!cert.checkIssued(new X509Certificate(ca.cert)) || !cert.verify(new X509Certificate(ca.cert).publicKey)) return 'the certificate was not issued by the cluster CA';
  const have = sanOf(cert);
  if (!sameSet(have.dns, names.dns) || !sameSet(have.ips, names.ips)) return 'the names to cover changed';
  const left = Date.parse(cert.validTo) - now.getTime();
  if (left <= renewBeforeMs) return `it ends on ${new Date(Date.parse(cert.validTo)).toISOString()}`;
  return undefined;
}

/** When the certificate is due for renewal (ms since the epoch). */
export function renewalTime(tlsCrt: string, renewBeforeMs: number): number {
  return Date.parse(new X509Certificate(tlsCrt).validTo) - renewBeforeMs;
}
