/**
 * `spec.tls` end to end at process level: the real operator process against
 * the in-process API server, pods run as real `svc` processes by the process
 * kubelet (which mounts Secret volumes and refreshes them as the kubelet
 * does), S3 over verified https by each pod's DNS name.
 *
 *   generated: the operator creates the CA and the certificate, the cluster
 *     serves https, internode traffic is TLS; the certificate is renewed
 *     (a short lifetime here) and every pod serves the new one without a
 *     restart;
 *   secretName: a certificate the user made, in their own Secret;
 *   certManager: the operator's Certificate is issued by a stand-in for
 *     cert-manager (which cannot run here), and the pods wait for its Secret.
 *
 * Needs root (mount namespaces), like the other process-level end to end.
 */
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { keepAliveHandler, resolveAllTo } from '../../node/test/helpers/s3-client.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SvcClusterSpec } from '../src/crd/svccluster.ts';
import { getCondition } from '../src/reconcile/conditions.ts';
import { createCa, issueCertificate } from '../src/tls/generated.ts';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import { Clusters, CREDENTIALS, listOf, NS, startApiWithCrd } from './harness.ts';
import { type OperatorProcess, operatorLog, startOperatorProcess } from './operator-process.ts';
import { ProcessKubelet } from './sim/process-kubelet.ts';
import { StatefulSetSimulator } from './sim/statefulset-sim.ts';

const canUnshare = process.getuid?.() === 0;
if (!canUnshare) console.log('skipped: operator TLS end-to-end needs root for mount namespaces');

const pool = (name: string, volumesPerServer = 2) => ({ name, servers: 2, volumesPerServer, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe.skipIf(!canUnshare)('operator spec.tls end to end (real svc pods)', () => {
  let api: FakeApiServer;
  let base: string;
  let kubelet: ProcessKubelet;
  let sim: StatefulSetSimulator;
  let clusters: Clusters;
  let operator: OperatorProcess | undefined;

  const host = (cluster: string, pod: string) => `${pod}.${cluster}-hl.${NS}.svc.cluster.local`;
  const secretData = (name: string): Record<string, string> | undefined => {
    const s = api.store.tryGet(api.store.find('', 'v1', 'secrets')!, NS, name);
    return s ? Object.fromEntries(Object.entries((s['data'] ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])) : undefined;
  };

  /** An S3 client for a pod by its DNS name (resolved to the pod's address), verifying against `ca`. */
  const s3 = (cluster: string, pod: string, ca: string) =>
    new S3Client({
      endpoint: `https://${host(cluster, pod)}:9000`,
      region: 'us-east-1',
      forcePathStyle: true,
      maxAttempts: 1,
      credentials: { accessKeyId: CREDENTIALS.accessKey, secretAccessKey: CREDENTIALS.secretKey },
      requestHandler: keepAliveHandler({
        agent: {
          ca,
          // the pod's DNS name resolves to its address (the cluster DNS of this test)
          lookup: resolveAllTo(() => kubelet.ipOf(pod)),
        },
      }),
    });

  /** The certificate a pod serves now (a new connection, SNI = its DNS name). */
  const served = (cluster: string, pod: string) =>
    new Promise<string>((resolve, reject) => {
      const sock = connect({ host: kubelet.ipOf(pod), port: 9000, servername: host(cluster, pod), rejectUnauthorized: false }, () => {
        resolve(sock.getPeerX509Certificate()!.fingerprint256);
        sock.destroy();
      });
      sock.once('error', reject);
    });

  const readyPods = () =>
    listOf(api, '', 'v1', 'pods')
      .filter((p) => (p['status'] as { conditions?: { type: string; status: string }[] })?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((p) => p.metadata.name);
  /** Every pod in the API and every container the kubelet runs, with exits, restarts and log tails. */
  async function podsNow(): Promise<string> {
    const pods = listOf(api, '', 'v1', 'pods').map((p) => `${p.metadata.name} (uid ${p.metadata.uid}): ${JSON.stringify(p['status'])}`);
    const described = await Promise.all(kubelet.running().map((n) => kubelet.describe(n)));
    return `pods in the API:\n${pods.join('\n')}\ncontainers the kubelet runs: ${kubelet.running().join(', ') || 'none'}\n${described.join('\n')}`;
  }
  async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await Promise.resolve(probe()).catch(() => undefined);
      if (v) return v;
      if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms\n${await podsNow()}\n${(await operatorLog(base)).slice(-2500)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Objects through one pod, back through the other, over verified TLS. */
  async function roundTrip(cluster: string, ca: string): Promise<void> {
    const a = s3(cluster, `${cluster}-p0-0`, ca);
    const b = s3(cluster, `${cluster}-p0-1`, ca);
    try {
      await a.send(new CreateBucketCommand({ Bucket: 'tls' })).catch((err: { name?: string }) => {
        if (err.name !== 'BucketAlreadyOwnedByYou') throw err;
      });
      const body = randomBytes(300_000);
      const key = `k-${randomBytes(4).toString('hex')}`;
      await a.send(new PutObjectCommand({ Bucket: 'tls', Key: key, Body: body }));
      const got = await b.send(new GetObjectCommand({ Bucket: 'tls', Key: key }));
      expect(sha(await got.Body!.transformToByteArray())).toBe(sha(body));
    } finally {
      a.destroy();
      b.destroy();
    }
  }

  async function create(name: string, tls: SvcClusterSpec['tls'], volumesPerServer = 2): Promise<void> {
    await clusters.create(name, { image: 'svc-node:e2e', credentials: { secretName: 'prod-root' }, pools: [pool('p0', volumesPerServer)], startupReadinessMaxWaitSeconds: 60, tls });
  }

  async function remove(name: string): Promise<void> {
    await clusters.delete(name);
    await until(`${name}'s pods gone`, () => !kubelet.running().some((p) => p.startsWith(`${name}-`)), 60_000);
  }

  beforeAll(async () => {
    if (!existsSync('/data')) mkdirSync('/data');
    base = await mkdtemp(join(tmpdir(), 'svc-operator-tls-'));
    api = await startApiWithCrd();
    kubelet = new ProcessKubelet(api, base);
    sim = new StatefulSetSimulator(api, kubelet, { probeMs: 300 });
    clusters = new Clusters(api);
    operator = await startOperatorProcess(api, kubelet, base);
  }, 120_000);

  // A failed step prints what every pod's container did (exits, restarts, the log's last lines):
  // the pods' folder is removed with the test's temp dir.
  beforeEach((ctx) => {
    ctx.onTestFailed(async () => {
      console.error(await podsNow());
    });
  });

  afterAll(async () => {
    await operator?.kill();
    await sim?.stop();
    await kubelet?.stopAll();
    await api?.close();
    if (base) await rm(base, { recursive: true, force: true });
  }, 60_000);

  it('generated: the operator\'s CA, a cluster serving https (internode too), renewal picked up by every pod without a restart', async () => {
    // a one-hour certificate renewed 30 s after it was issued: renewals come quickly here
    await create('gen', { generated: { duration: '1h', renewBefore: '59m30s' }, extraNames: ['s3.gen.example'] });
    const ready = await clusters.waitReady('gen', 180_000);
    expect(getCondition(ready.status!.conditions, 'TlsReady')).toMatchObject({ status: 'True', reason: 'AsExpected' });
    expect(ready.status!.endpoints!.s3).toBe(`https://gen.${NS}.svc.cluster.local:9000`);
    expect(ready.status!.launchConfig!.applied!.volumes).toMatch(/^https:\/\/gen-p0-\{0\.\.\.1\}\.gen-hl\./);
    const caSecret = secretData('gen-tls-ca')!;
    const first = secretData('gen-tls')!;
    expect(first['ca.crt']).toBe(caSecret['ca.crt']);
    const cert = new X509Certificate(first['tls.crt']!);
    expect(cert.checkIssued(new X509Certificate(caSecret['ca.crt']!))).toBe(true);
    expect(cert.subjectAltName).toContain(`DNS:${host('gen', 'gen-p0-1')}`);
    expect(cert.subjectAltName).toContain('DNS:s3.gen.example');
    await roundTrip('gen', caSecret['ca.crt']!);
    // the pods talk TLS only (the internode RPC went over it for the round trip)
    await expect(fetch(`http://${kubelet.ipOf('gen-p0-0')}:9000/health`, { signal: AbortSignal.timeout(3000) })).rejects.toThrow();

    // renewal: a new certificate in the Secret, then on every pod's new connections, same processes
    const pids = ['gen-p0-0', 'gen-p0-1'].map((p) => kubelet.pid(p));
    const uids = listOf(api, '', 'v1', 'pods').filter((p) => p.metadata.name.startsWith('gen-')).map((p) => p.metadata.uid);
    const renewed = await until('the certificate renewed', () => {
      const now = secretData('gen-tls')?.['tls.crt'];
      return now !== undefined && now !== first['tls.crt'] ? now : undefined;
    });
    const fp = new X509Certificate(renewed).fingerprint256;
    for (const pod of ['gen-p0-0', 'gen-p0-1']) {
      // every renewal since is a certificate of the same CA; the pod serves one issued after the first
      await until(`${pod} serves a renewed certificate`, async () => (await served('gen', pod)) !== cert.fingerprint256, 60_000);
    }
    expect(fp).not.toBe(cert.fingerprint256);
    expect(['gen-p0-0', 'gen-p0-1'].map((p) => kubelet.pid(p))).toEqual(pids);
    expect(listOf(api, '', 'v1', 'pods').filter((p) => p.metadata.name.startsWith('gen-')).map((p) => p.metadata.uid)).toEqual(uids);
    const events = listOf(api, '', 'v1', 'events').map((e) => e['reason']);
    expect(events).toContain('CertificateAuthorityCreated');
    expect(events).toContain('CertificateIssued');
    expect(events).toContain('CertificateRenewed');
    // still one cluster, still serving, with the same CA
    await roundTrip('gen', caSecret['ca.crt']!);
    expect(getCondition((await clusters.get('gen')).status!.conditions, 'Ready')?.status).toBe('True');
    await remove('gen');
  }, 420_000);

  it('secretName: the user\'s own kubernetes.io/tls Secret (a missing one is reported, pods wait for it)', async () => {
    await create('byo', { secretName: 'byo-certs' }, 1);
    await clusters.waitFor('byo', 'TlsSecretMissing', (c) => getCondition(c.status?.conditions, 'TlsReady')?.reason === 'TlsSecretMissing', 60_000);
    expect(readyPods().filter((p) => p.startsWith('byo-'))).toEqual([]);
    const ca = await createCa('byo-user', new Date());
    const leaf = await issueCertificate(ca, 'byo', { dns: [`*.byo-hl.${NS}.svc.cluster.local`], ips: [] }, new Date(), 24 * 3_600_000);
    await api.store.create(api.store.find('', 'v1', 'secrets')!, NS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'byo-certs', namespace: NS },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(leaf.cert), 'tls.key': b64(leaf.key), 'ca.crt': b64(ca.cert) },
    } as never);
    const c = await clusters.waitReady('byo', 180_000);
    expect(getCondition(c.status!.conditions, 'TlsReady')).toMatchObject({ status: 'True' });
    await roundTrip('byo', ca.cert);
    await remove('byo');
  }, 300_000);

  it('certManager: the operator\'s Certificate, issued by a stand-in for cert-manager; CertManagerCrdMissing without it', async () => {
    await create('cm', { certManager: { issuerRef: { name: 'test-ca', kind: 'ClusterIssuer' } } }, 1);
    await clusters.waitFor('cm', 'CertManagerCrdMissing', (c) => getCondition(c.status?.conditions, 'TlsReady')?.reason === 'CertManagerCrdMissing', 60_000);
    // "install cert-manager": its Certificate kind, and an issuer that signs what it is asked for
    const res = await fetch(`${api.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'certificates.cert-manager.io' },
        spec: {
          group: 'cert-manager.io',
          scope: 'Namespaced',
          names: { kind: 'Certificate', plural: 'certificates', singular: 'certificate' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      }),
    });
    expect(res.status).toBe(201);
    const issuerCa = await createCa('cluster-issuer', new Date());
    const certificate = await until('the operator applies its Certificate', () => api.store.tryGet(api.store.find('cert-manager.io', 'v1', 'certificates')!, NS, 'cm-tls'), 60_000);
    const spec = certificate['spec'] as { secretName: string; issuerRef: { name: string; kind: string }; dnsNames: string[]; ipAddresses?: string[] };
    expect(spec).toMatchObject({ secretName: 'cm-tls', issuerRef: { name: 'test-ca', kind: 'ClusterIssuer' } });
    expect(spec.dnsNames).toContain(host('cm', 'cm-p0-1'));
    await clusters.waitFor('cm', 'CertificateNotReady', (c) => getCondition(c.status?.conditions, 'TlsReady')?.reason === 'CertificateNotReady', 60_000);
    // the issuer at work: the Secret cert-manager would write
    const leaf = await issueCertificate(issuerCa, 'cm', { dns: spec.dnsNames, ips: spec.ipAddresses ?? [] }, new Date(), 24 * 3_600_000);
    await api.store.create(api.store.find('', 'v1', 'secrets')!, NS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: spec.secretName, namespace: NS },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(leaf.cert), 'tls.key': b64(leaf.key), 'ca.crt': b64(issuerCa.cert) },
    } as never);
    const c = await clusters.waitReady('cm', 180_000);
    expect(getCondition(c.status!.conditions, 'TlsReady')).toMatchObject({ status: 'True' });
    await roundTrip('cm', issuerCa.cert);
    await remove('cm');
  }, 300_000);
});
