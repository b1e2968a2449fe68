import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, selfSigned, type TestCa } from '../../test/helpers/certs.ts';
import { readCertificateDir } from './cert-dir.ts';

let root: string;
let ca: TestCa;
const DAY = 86_400_000;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-certdir-'));
  ca = await makeCa(join(root, 'ca'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
const fresh = async () => {
  const d = join(root, `d${n++}`);
  await mkdir(d, { recursive: true });
  return d;
};

describe('readCertificateDir', () => {
  it('a missing directory is no TLS, not an error', async () => {
    const d = await readCertificateDir(join(root, 'nope'), Date.now());
    expect(d).toMatchObject({ exists: false, main: undefined, sni: [], cas: [] });
  });

  it('reads the default pair, SNI pairs and the CAs, skipping dot entries', async () => {
    const dir = await fresh();
    await issueLeaf(ca, dir, { dns: ['node1.svc.local', '*.svc.local'], ips: ['127.0.0.1'] });
    await issueLeaf(ca, join(dir, 'other'), { dns: ['s3.example.com'] });
    await mkdir(join(dir, 'CAs'));
    // a bundle of two certificates in one file
    await writeFile(join(dir, 'CAs', 'bundle.pem'), `${ca.pem}${await readFile(join(dir, 'other', 'public.crt'), 'utf8')}`);
    await mkdir(join(dir, '..2024_01_01'));
    await mkdir(join(dir, 'empty'));
    const d = await readCertificateDir(dir, Date.now());
    expect(d.exists).toBe(true);
    expect(d.main?.names).toEqual(['node1.svc.local', '*.svc.local', '127.0.0.1']);
    expect(d.main?.issuer).toContain('svc test CA');
    expect(d.sni.map((p) => [p.name, p.names])).toEqual([['other', ['s3.example.com']]]);
    expect(d.cas.length).toBe(2);
    expect(d.cas[0]!.cert.subject).toContain('svc test CA');
    // same content, same digest; a change, another
    expect((await readCertificateDir(dir, Date.now())).digest).toBe(d.digest);
    await issueLeaf(ca, dir, { dns: ['node1.svc.local'] });
    expect((await readCertificateDir(dir, Date.now())).digest).not.toBe(d.digest);
  });

  it('a CA-less directory is fine (plain HTTP with trusted CAs only)', async () => {
    const dir = await fresh();
    await mkdir(join(dir, 'CAs'));
    await copyFile(ca.certFile, join(dir, 'CAs', 'ca.crt'));
    const d = await readCertificateDir(dir, Date.now());
    expect(d.main).toBeUndefined();
    expect(d.cas.length).toBe(1);
  });

  it('clear errors: a lone file, a key of another certificate, an encrypted key, not PEM', async () => {
    const lone = await fresh();
    await issueLeaf(ca, lone, { dns: ['a'] });
    await rm(join(lone, 'private.key'));
    await expect(readCertificateDir(lone, Date.now())).rejects.toThrow(`TLS: ${join(lone, 'public.crt')} has no private.key beside it`);

    const mismatch = await fresh();
    await issueLeaf(ca, mismatch, { dns: ['a'] });
    const other = await fresh();
    await issueLeaf(ca, other, { dns: ['b'] });
    await copyFile(join(other, 'private.key'), join(mismatch, 'private.key'));
    await expect(readCertificateDir(mismatch, Date.now())).rejects.toThrow(/private\.key does not match .*public\.crt/);

    const enc = await fresh();
    await issueLeaf(ca, enc, { dns: ['a'] });
    await writeFile(join(enc, 'private.key'), '-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n');
    await expect(readCertificateDir(enc, Date.now())).rejects.toThrow(/is encrypted; svc needs an unencrypted key/);

    const garbage = await fresh();
    await writeFile(join(garbage, 'public.crt'), 'hello');
    await writeFile(join(garbage, 'private.key'), 'hello');
    await expect(readCertificateDir(garbage, Date.now())).rejects.toThrow(/public\.crt holds no PEM certificate/);

    const unreadable = await fresh();
    await mkdir(join(unreadable, 'public.crt'));
    await writeFile(join(unreadable, 'private.key'), 'x');
    await expect(readCertificateDir(unreadable, Date.now())).rejects.toThrow(/cannot read .*public\.crt \(EISDIR\)/);
  });

  it('expired and not-yet-valid certificates are refused with their dates', async () => {
    const dir = await fresh();
    const start = new Date(Date.UTC(2030, 0, 1));
    await issueLeaf(ca, dir, { dns: ['a'], start, end: new Date(start.getTime() + 10 * DAY) });
    await expect(readCertificateDir(dir, start.getTime() - DAY)).rejects.toThrow('is not valid before 2030-01-01T00:00:00.000Z');
    await expect(readCertificateDir(dir, start.getTime() + 11 * DAY)).rejects.toThrow('expired on 2030-01-11T00:00:00.000Z');
    expect((await readCertificateDir(dir, start.getTime() + DAY)).main?.notAfter).toBe(start.getTime() + 10 * DAY);
  });

  it('SNI pairs need a default pair', async () => {
    const dir = await fresh();
    await selfSigned(join(dir, 'site'), { dns: ['site.example'] });
    await expect(readCertificateDir(dir, Date.now())).rejects.toThrow(/has certificates in site\/ but no default public\.crt and private\.key/);
  });
});
