/**
 * Test certificates made by the real `openssl` command (Debian's openssl;
 * CI installs it in `.ci/run`): a CA, and leaf certificates it signs with
 * chosen names and validity, written as a certificate directory's
 * `public.crt` + `private.key`. EC P-256 keys (fast to make).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

async function openssl(args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await exec('openssl', args, { ...(cwd ? { cwd } : {}), maxBuffer: 4 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new Error("'openssl' is not installed: the TLS tests need Debian's openssl package (apt-get install openssl; CI does this in .ci/run)");
    throw new Error(`openssl ${args.join(' ')} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
}

export interface TestCa {
  readonly dir: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The CA certificate, PEM. */
  readonly pem: string;
}

export interface LeafOptions {
  readonly cn?: string;
  readonly dns?: readonly string[];
  readonly ips?: readonly string[];
  /** Validity (default: from an hour ago, for 30 days). */
  readonly start?: Date;
  readonly end?: Date;
}

/** openssl's `YYYYMMDDHHMMSSZ`. */
function stamp(d: Date): string {
  return `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

/** A fresh CA in `dir` (created). */
export async function makeCa(dir: string, name = 'svc test CA'): Promise<TestCa> {
  await mkdir(join(dir, 'newcerts'), { recursive: true });
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '365', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await writeFile(join(dir, 'index.txt'), '');
  await writeFile(join(dir, 'serial'), `${Date.now().toString(16).padStart(16, '0')}\n`);
  await writeFile(
    join(dir, 'ca.cnf'),
    [
      '[ ca ]',
      'default_ca = CA_default',
      '[ CA_default ]',
      `dir = ${dir}`,
      'database = $dir/index.txt',
      'new_certs_dir = $dir/newcerts',
      'certificate = $dir/ca.crt',
      'private_key = $dir/ca.key',
      'serial = $dir/serial',
      'default_md = sha256',
      'policy = policy_any',
      'unique_subject = no',
      '[ policy_any ]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  return { dir, certFile, keyFile, pem: await readFile(certFile, 'utf8') };
}

/**
 * A leaf signed by `ca`, written to `<outDir>/public.crt` and
 * `<outDir>/private.key` (`outDir` created). Returns the two paths.
 */
export async function issueLeaf(ca: TestCa, outDir: string, o: LeafOptions = {}): Promise<{ certFile: string; keyFile: string }> {
  await mkdir(outDir, { recursive: true });
  const cn = o.cn ?? o.dns?.[0] ?? o.ips?.[0] ?? 'svc';
  const tag = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const csr = join(ca.dir, `${tag}.csr`);
  const ext = join(ca.dir, `${tag}.ext`);
  const keyFile = join(outDir, 'private.key');
  const certFile = join(outDir, 'public.crt');
  await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', `/CN=${cn}`]);
  const san = [...(o.dns ?? []).map((d) => `DNS:${d}`), ...(o.ips ?? []).map((i) => `IP:${i}`)];
  await writeFile(
    ext,
    [
      'basicConstraints = critical,CA:FALSE',
      'keyUsage = critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage = serverAuth,clientAuth',
      ...(san.length > 0 ? [`subjectAltName = ${san.join(',')}`] : []),
      '',
    ].join('\n'),
  );
  const start = o.start ?? new Date(Date.now() - 3_600_000);
  const end = o.end ?? new Date(start.getTime() + 30 * 86_400_000);
  await openssl(['ca', '-batch', '-config', join(ca.dir, 'ca.cnf'), '-in', csr, '-out', certFile, '-notext', '-extfile', ext, '-startdate', stamp(start), '-enddate', stamp(end)]);
  return { certFile, keyFile };
}

/** A self-signed pair (no CA) in `outDir`. */
export async function selfSigned(outDir: string, o: { dns?: readonly string[]; ips?: readonly string[] } = {}): Promise<{ certFile: string; keyFile: string }> {
  await mkdir(outDir, { recursive: true });
  const keyFile = join(outDir, 'private.key');
  const certFile = join(outDir, 'public.crt');
  const san = [...(o.dns ?? []).map((d) => `DNS:${d}`), ...(o.ips ?? []).map((i) => `IP:${i}`)];
  await openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '30', '-subj', `/CN=${o.dns?.[0] ?? o.ips?.[0] ?? 'svc'}`,
    ...(san.length > 0 ? ['-addext', `subjectAltName=${san.join(',')}`] : [])]);
  return { certFile, keyFile };
}

/** SHA-256 fingerprint (`AB:CD:…`) of the certificate a TLS server at `host:port` presents, read with `openssl s_client`. */
export async function presentedFingerprint(host: string, port: number, servername?: string): Promise<string> {
  const shown = await new Promise<string>((resolve, reject) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `${host}:${port}`, ...(servername ? ['-servername', servername] : []), '-showcerts'],
      { maxBuffer: 4 * 1024 * 1024, timeout: 20_000 },
      (err, stdout) => (err && stdout === '' ? reject(err) : resolve(stdout)),
    );
    child.stdin?.end();
  });
  const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(shown)?.[0];
  if (pem === undefined) throw new Error(`openssl s_client got no certificate from ${host}:${port}:\n${shown}`);
  const { X509Certificate } = await import('node:crypto');
  return new X509Certificate(pem).fingerprint256;
}
