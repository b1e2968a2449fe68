import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from '../../test/helpers/certs.ts';
import { createListener, type Listener } from '../server/listener.ts';
import { systemClock } from '../util/clock.ts';
import { type TlsCertificatesMessage, tlsCertificates } from '../util/diagnostics.ts';
import { createLogger } from '../util/logger.ts';
import { CertificateStore } from './cert-store.ts';

let root: string;
let ca: TestCa;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-certstore-'));
  ca = await makeCa(join(root, 'ca'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger('debug', { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) }) };
}

/** Connects, returns the socket once the handshake is done (the server's certificate verified against `ca`). */
function handshake(port: number, servername?: string): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, ca: ca.pem, ...(servername ? { servername } : { checkServerIdentity: () => undefined }) }, () => resolve(s));
    s.once('error', reject);
  });
}

async function serve(store: CertificateStore): Promise<{ server: Listener; port: number }> {
  const server = createListener({ name: 's3', handler: (_req, res) => res.end('ok'), tls: store });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

async function get(sock: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('\r\n\r\nok')) {
        sock.off('data', onData);
        resolve(out);
      }
    };
    sock.on('data', onData);
    sock.once('error', reject);
    sock.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  });
}

async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('CertificateStore', () => {
  it('a missing directory: no store, unless it was named explicitly', async () => {
    const { logger } = capture();
    expect(await CertificateStore.open({ dir: join(root, 'none'), explicit: false, clock: systemClock, logger })).toBeUndefined();
    await expect(CertificateStore.open({ dir: join(root, 'none'), explicit: true, clock: systemClock, logger })).rejects.toThrow(`TLS: the certificate directory ${join(root, 'none')} does not exist`);
  });

  it('serves the default pair and SNI pairs; a reload swaps them for new connections only; a half-written update is not applied', async () => {
    const dir = join(root, 'serve');
    const first = await issueLeaf(ca, dir, { dns: ['node1.test'], ips: ['127.0.0.1'] });
    await issueLeaf(ca, join(dir, 'site'), { dns: ['s3.example.test'] });
    const { lines, logger } = capture();
    const store = (await CertificateStore.open({ dir, explicit: true, clock: systemClock, logger, watch: false }))!;
    expect(store.serving).toBe(true);
    const { server, port } = await serve(store);
    try {
      const before = await handshake(port);
      const oldFp = before.getPeerX509Certificate()!.fingerprint256;
      expect(store.isOwnCertificate(oldFp)).toBe(true);
      const sni = await handshake(port, 's3.example.test');
      expect(sni.getPeerX509Certificate()!.subjectAltName).toBe('DNS:s3.example.test');
      sni.destroy();
      // an unknown name gets the default pair
      const unknown = await new Promise<TLSSocket>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: ca.pem, servername: 'other.test', checkServerIdentity: () => undefined }, () => resolve(s));
        s.once('error', reject);
      });
      expect(unknown.getPeerX509Certificate()!.fingerprint256).toBe(oldFp);
      unknown.destroy();
      expect(await get(before)).toMatch(/^HTTP\/1\.1 200/);

      // half-written: a new certificate whose key is not there yet
      const staging = join(root, 'staging');
      await issueLeaf(ca, staging, { dns: ['node1.test'], ips: ['127.0.0.1'] });
      await copyFile(join(staging, 'public.crt'), first.certFile);
      expect(await store.reload()).toBe(false);
      expect(lines.some((l) => l.event === 'tls_reload_failed' && /does not match/.test(String(l.err)))).toBe(true);
      const still = await handshake(port);
      expect(still.getPeerX509Certificate()!.fingerprint256).toBe(oldFp);
      still.destroy();

      const version = store.trust.version;
      await copyFile(join(staging, 'private.key'), first.keyFile);
      expect(await store.reload()).toBe(true);
      expect(store.trust.version).toBe(version + 1);
      expect(lines.some((l) => l.event === 'tls_certificates_reloaded')).toBe(true);
      const after = await handshake(port);
      const newFp = after.getPeerX509Certificate()!.fingerprint256;
      expect(newFp).not.toBe(oldFp);
      after.destroy();
      // the connection made before the rotation still works, on its old certificate
      expect(await get(before)).toMatch(/^HTTP\/1\.1 200/);
      before.destroy();
      // nothing changed: no reload
      expect(await store.reload()).toBe(false);
    } finally {
      store.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('follows file changes by itself (fs.watch), including a Kubernetes-style ..data swap', async () => {
    const dir = join(root, 'watched');
    // Kubernetes Secret volume layout: visible names are symlinks through ..data
    const v1 = join(dir, '..v1');
    await issueLeaf(ca, v1, { dns: ['w.test'] });
    const { symlink, rename } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await symlink('..v1', join(dir, '..data'));
    await symlink('..data/public.crt', join(dir, 'public.crt'));
    await symlink('..data/private.key', join(dir, 'private.key'));
    const { logger } = capture();
    const store = (await CertificateStore.open({ dir, explicit: true, clock: systemClock, logger, pollMs: 600_000 }))!;
    try {
      const oldFp = store.current.main!.fingerprint;
      await issueLeaf(ca, join(dir, '..v2'), { dns: ['w.test'] });
      await symlink('..v2', join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      await until(() => store.current.main!.fingerprint !== oldFp);
    } finally {
      store.close();
    }
  });

  it('warns about a certificate close to its end (log and the svc:tls:certificates channel)', async () => {
    const dir = join(root, 'expiring');
    const end = Date.now() + 10 * 86_400_000;
    await issueLeaf(ca, dir, { dns: ['e.test'], end: new Date(end) });
    await mkdir(join(dir, 'CAs'));
    await writeFile(join(dir, 'CAs', 'ca.crt'), ca.pem);
    const seen: TlsCertificatesMessage[] = [];
    const onMsg = (m: unknown) => seen.push(m as TlsCertificatesMessage);
    subscribe(tlsCertificates.name, onMsg);
    const { lines, logger } = capture();
    const store = (await CertificateStore.open({ dir, explicit: true, clock: systemClock, logger, watch: false }))!;
    try {
      const warn = lines.find((l) => l.event === 'tls_certificate_expiring');
      expect(warn).toMatchObject({ level: 'warn', kind: 'server', daysLeft: 9, file: join(dir, 'public.crt') });
      expect(seen.at(-1)!.certificates.map((c) => c.kind)).toEqual(['server', 'ca']);
      expect(Math.abs(seen.at(-1)!.certificates[0]!.notAfter - end)).toBeLessThan(2000);
      // the CA set for this node's clients: the defaults, the CA, and the node's own leaf
      const ca2 = store.trust.connectOptions().ca as string[];
      expect(ca2).toContain(store.current.cas[0]!.pem);
      expect(ca2).toContain(store.current.main!.leaf.toString());
      expect(ca2.length).toBeGreaterThan(100);
    } finally {
      store.close();
      unsubscribe(tlsCertificates.name, onMsg);
    }
  });
});
