/**
 * Internode TLS with real processes: 4 nodes on 127.0.0.1…4 with
 * `https://` endpoints, each with its own certificate (IP SAN 127.0.0.K)
 * from one CA, which every node trusts through `CAs/`. Objects written
 * through node 1 read back through node 3 (shards and locks crossed the
 * internode RPC, which on these ports speaks TLS only). Then node 4 comes
 * back with a certificate from another CA: the others refuse it, name it in
 * their log (`peer_tls_refused`) and in the readiness detail, and keep
 * serving within parity; a certificate from the right CA that does not name
 * the node's address is refused too (host name verification).
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { issueLeaf, makeCa, type TestCa } from './helpers/certs.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';

const supported = canUseMountNamespaces();

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

describe.skipIf(!supported)('4-node cluster over https:// (real processes)', () => {
  let cluster: TestCluster;
  let ca: TestCa;
  let rogueCa: TestCa;
  const certRoot = `/tmp/svc-tls-cluster-${randomBytes(4).toString('hex')}`;
  const certsDir = (k: number) => join(certRoot, `node${k}`);

  /** Node K's certificate directory: a leaf from `issuer` naming `ip`, and `trust` in CAs/. */
  async function certify(k: number, issuer: TestCa, ip: string, trust: TestCa): Promise<void> {
    await rm(certsDir(k), { recursive: true, force: true });
    await issueLeaf(issuer, certsDir(k), { ips: [ip], dns: [`node${k}.svc.test`] });
    await mkdir(join(certsDir(k), 'CAs'), { recursive: true });
    await copyFile(trust.certFile, join(certsDir(k), 'CAs', 'ca.crt'));
  }

  beforeAll(async () => {
    ca = await makeCa(join(certRoot, 'ca'), 'cluster CA');
    rogueCa = await makeCa(join(certRoot, 'rogue-ca'), 'another CA');
    for (let k = 1; k <= 4; k++) await certify(k, ca, `127.0.0.${k}`, ca);
    cluster = await TestCluster.create({ nodes: 4, drivesPerNode: 2, tls: { ca: ca.pem, certsDir } });
    expect(cluster.volume).toMatch(/^https:\/\/127\.0\.0\.\{1\.\.\.4\}:/);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.start(k)));
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 60_000)));
    await cluster.s3(1).send(new CreateBucketCommand({ Bucket: 'tls' }));
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await rm(certRoot, { recursive: true, force: true });
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && cluster) console.log(await cluster.warnings());
  });

  it('serves and replicates over TLS; the internode port speaks nothing else', async () => {
    const body = randomBytes(5 * 1024 * 1024 + 7);
    await cluster.s3(1).send(new PutObjectCommand({ Bucket: 'tls', Key: 'big', Body: body }));
    const back = await cluster.s3(3).send(new GetObjectCommand({ Bucket: 'tls', Key: 'big' }));
    expect(md5(await back.Body!.transformToByteArray())).toBe(md5(body));
    // plain HTTP to a node's port is not answered as HTTP: every peer talked TLS to it
    await expect(request(`http://127.0.0.2:${cluster.port}/health`, { headersTimeout: 3000, bodyTimeout: 3000 })).rejects.toThrow();
    for (let k = 1; k <= 4; k++) expect(await cluster.logs(k)).toContain('"event":"tls_enabled"');
  }, 60_000);

  it('a node presenting a certificate from another CA is refused, named in the log and the readiness detail; the rest keep serving', async () => {
    const peer = `https://127.0.0.4:${cluster.port}`;
    await cluster.stop(4);
    await certify(4, rogueCa, '127.0.0.4', rogueCa);
    await cluster.start(4);
    await waitFor(async () => /"event":"peer_tls_refused"[^\n]*"peer":"https:\/\/127\.0\.0\.4:\d+"/.test(await cluster.logs(1)), 30_000, 'node 1 logs the refusal');
    const line = (await cluster.logs(1)).split('\n').find((l) => l.includes('"event":"peer_tls_refused"') && l.includes(peer))!;
    expect(JSON.parse(line).reason).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/);
    let detail = '';
    await waitFor(
      async () => {
        const r = await cluster.get(1, '/health/ready');
        detail = (JSON.parse(r.body) as { details: { storage: { detail: string } } }).details.storage.detail;
        return detail.includes(`TLS: ${peer} refused:`);
      },
      30_000,
      'readiness detail names the peer',
    );
    expect(detail).toMatch(/6 of 8|drives offline/);
    // the rogue node refuses the others in turn (it trusts only its own CA)
    await waitFor(async () => (await cluster.logs(4)).includes('"event":"peer_tls_refused"'), 30_000, 'node 4 refuses the others');
    // within parity: writes and reads go on through the trusted nodes
    const body = randomBytes(300_000);
    await cluster.s3(2).send(new PutObjectCommand({ Bucket: 'tls', Key: 'during', Body: body }));
    const back = await cluster.s3(1).send(new GetObjectCommand({ Bucket: 'tls', Key: 'during' }));
    expect(md5(await back.Body!.transformToByteArray())).toBe(md5(body));
  }, 120_000);

  it('a certificate from the right CA that does not name the node\'s address is refused (host name verification)', async () => {
    const peer = `https://127.0.0.4:${cluster.port}`;
    await cluster.stop(4);
    await certify(4, ca, '127.0.0.9', ca);
    await cluster.start(4);
    await waitFor(
      async () => (await cluster.logs(1)).split('\n').some((l) => l.includes('"event":"peer_tls_refused"') && l.includes(peer) && l.includes('ERR_TLS_CERT_ALTNAME_INVALID')),
      30_000,
      'node 1 refuses the misnamed certificate',
    );
    // a correct certificate again: node 4 rejoins and the refusal leaves the readiness detail
    await cluster.stop(4);
    await certify(4, ca, '127.0.0.4', ca);
    await cluster.start(4);
    await cluster.waitReady(4, 60_000);
    await waitFor(
      async () => {
        const r = await cluster.get(1, '/health/ready');
        const d = (JSON.parse(r.body) as { details: { storage: { detail: string } } }).details.storage.detail;
        return !d.includes('TLS:') && d.startsWith('1 of 1 erasure sets have read quorum') && !d.includes('offline');
      },
      40_000,
      'node 1 sees every drive again',
    );
  }, 150_000);
});
