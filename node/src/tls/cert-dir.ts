/**
 * The certificate directory (`--certs-dir`, `SVC_CERTS_DIR`; docs/tls.md):
 *
 *   <dir>/public.crt, <dir>/private.key     the default pair (leaf first, then intermediates)
 *   <dir>/<name>/public.crt, private.key     more pairs, chosen by SNI (the name is free)
 *   <dir>/CAs/*                              trusted CAs (PEM; several per file allowed)
 *
 * Entries starting with a dot are skipped (a Kubernetes Secret volume's
 * `..data` and timestamped directories: its visible names are symlinks into
 * them, which are followed). `readCertificateDir` reads and checks
 * everything at once and either returns a usable set or throws one clear
 * `TlsCertificateInvalid` naming the file: unreadable, not PEM, a key that
 * does not belong to its certificate, an encrypted key, a certificate
 * expired or not valid yet.
 */
import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../util/errors.ts';

export const PUBLIC_CERT = 'public.crt';
export const PRIVATE_KEY = 'private.key';
export const CAS_DIR = 'CAs';

export interface CertificatePair {
  /** '' for the default pair, else its subdirectory's name. */
  readonly name: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The chain as read (leaf first). */
  readonly certPem: string;
  readonly keyPem: string;
  readonly leaf: X509Certificate;
  /** DNS names (wildcards kept) and IP addresses the leaf is issued for. */
  readonly names: readonly string[];
  readonly subject: string;
  readonly issuer: string;
  /** Validity, ms since the epoch. */
  readonly notBefore: number;
  readonly notAfter: number;
  /** SHA-256 fingerprint of the leaf, `AB:CD:…` as node:crypto writes it. */
  readonly fingerprint: string;
}

export interface TrustedCa {
  readonly file: string;
  readonly pem: string;
  readonly cert: X509Certificate;
}

export interface CertificateDir {
  readonly dir: string;
  /** The directory exists. */
  readonly exists: boolean;
  /** The default pair; undefined when the directory holds none (TLS off). */
  readonly main: CertificatePair | undefined;
  /** Pairs chosen by SNI, in name order. */
  readonly sni: readonly CertificatePair[];
  readonly cas: readonly TrustedCa[];
  /** Digest over every file's content: equal digests, equal sets. */
  readonly digest: string;
}

function invalid(message: string, file: string, cause?: unknown): SvcError {
  return new SvcError('TlsCertificateInvalid', `TLS: ${message}`, { file }, cause === undefined ? undefined : { cause });
}

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw invalid(`cannot read ${file} (${errnoOf(err) ?? String(err)})`, file, err);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw invalid(`cannot read ${path} (${errnoOf(err) ?? String(err)})`, path, err);
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate block of a PEM text, parsed. */
export function parsePemCertificates(pem: string, file: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw invalid(`${file} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)`, file);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (err) {
      throw invalid(`certificate ${i + 1} in ${file} cannot be parsed: ${(err as Error).message}`, file, err);
    }
  });
}

/** DNS names and IPs of a certificate's subjectAltName (the subject CN when it has none). */
export function certificateNames(cert: X509Certificate): string[] {
  const san = cert.subjectAltName;
  if (san !== undefined && san !== '') {
    const out: string[] = [];
    for (const part of san.split(/,\s*/)) {
      const m = /^(DNS|IP Address):(.+)$/.exec(part.trim());
      if (m) out.push(m[2]!.trim().toLowerCase());
    }
    return out;
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(cert.subject);
  return cn ? [cn[1]!.trim().toLowerCase()] : [];
}

function parseKey(pem: string, file: string): KeyObject {
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pem)) {
    throw invalid(`${file} is encrypted; svc needs an unencrypted key (decrypt it with \`openssl pkey -in ${file} -out ${file}\`)`, file);
  }
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw invalid(`${file} holds no usable private key: ${(err as Error).message}`, file, err);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

async function readPair(dir: string, name: string, now: number): Promise<CertificatePair> {
  const certFile = join(dir, PUBLIC_CERT);
  const keyFile = join(dir, PRIVATE_KEY);
  const [certPem, keyPem] = await Promise.all([readText(certFile), readText(keyFile)]);
  const chain = parsePemCertificates(certPem, certFile);
  const leaf = chain[0]!;
  const key = parseKey(keyPem, keyFile);
  if (!leaf.checkPrivateKey(key)) throw invalid(`${keyFile} does not match ${certFile} (the key belongs to another certificate)`, keyFile);
  const notBefore = Date.parse(leaf.validFrom);
  const notAfter = Date.parse(leaf.validTo);
  if (notAfter <= now) throw invalid(`${certFile} expired on ${iso(notAfter)}`, certFile);
  if (notBefore > now) throw invalid(`${certFile} is not valid before ${iso(notBefore)} (check the clock of this machine)`, certFile);
  return {
    name,
    certFile,
    keyFile,
    certPem,
    keyPem,
    leaf,
    names: certificateNames(leaf),
    subject: leaf.subject.replace(/\n/g, ', '),
    issuer: leaf.issuer.replace(/\n/g, ', '),
    notBefore,
    notAfter,
    fingerprint: leaf.fingerprint256,
  };
}

/** The pair in `dir`, undefined when it holds neither file; one file alone is an error. */
async function maybePair(dir: string, name: string, now: number): Promise<CertificatePair | undefined> {
  const [hasCert, hasKey] = await Promise.all([exists(join(dir, PUBLIC_CERT)), exists(join(dir, PRIVATE_KEY))]);
  if (!hasCert && !hasKey) return undefined;
  if (!hasKey) throw invalid(`${join(dir, PUBLIC_CERT)} has no ${PRIVATE_KEY} beside it`, join(dir, PRIVATE_KEY));
  if (!hasCert) throw invalid(`${join(dir, PRIVATE_KEY)} has no ${PUBLIC_CERT} beside it`, join(dir, PUBLIC_CERT));
  return readPair(dir, name, now);
}

async function listDir(dir: string): Promise<string[] | undefined> {
  try {
    return (await readdir(dir)).filter((n) => !n.startsWith('.')).sort();
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    if (errnoOf(err) === 'ENOTDIR') throw invalid(`${dir} is not a directory`, dir, err);
    throw invalid(`cannot list ${dir} (${errnoOf(err) ?? String(err)})`, dir, err);
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Reads and checks the whole directory at time `now` (ms). */
export async function readCertificateDir(dir: string, now: number): Promise<CertificateDir> {
  const entries = await listDir(dir);
  if (entries === undefined) return { dir, exists: false, main: undefined, sni: [], cas: [], digest: '' };
  const main = await maybePair(dir, '', now);
  const sni: CertificatePair[] = [];
  const cas: TrustedCa[] = [];
  for (const entry of entries) {
    const path = join(dir, entry);
    if (entry === PUBLIC_CERT || entry === PRIVATE_KEY || !(await isDirectory(path))) continue;
    if (entry === CAS_DIR) {
      for (const f of (await listDir(path)) ?? []) {
        const file = join(path, f);
        if (await isDirectory(file)) continue;
        const pem = await readText(file);
        for (const cert of parsePemCertificates(pem, file)) cas.push({ file, pem: cert.toString(), cert });
      }
      continue;
    }
    const pair = await maybePair(path, entry, now);
    if (pair !== undefined) sni.push(pair);
  }
  if (main === undefined && sni.length > 0) {
    throw invalid(`${dir} has certificates in ${sni.map((p) => `${p.name}/`).join(', ')} but no default ${PUBLIC_CERT} and ${PRIVATE_KEY} (clients without SNI need one)`, join(dir, PUBLIC_CERT));
  }
  const h = createHash('sha256');
  for (const p of [...(main ? [main] : []), ...sni]) h.update(`${p.name}\0${p.certPem}\0${p.keyPem}\0`);
  for (const c of cas) h.update(`${c.file}\0${c.pem}\0`);
  return { dir, exists: true, main, sni, cas, digest: h.digest('hex') };
}

/** Every pair, the default first. */
export function allPairs(d: CertificateDir): CertificatePair[] {
  return [...(d.main ? [d.main] : []), ...d.sni];
}
