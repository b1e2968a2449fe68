/**
 * The storage-node image (svc-node:<tag>, built by e2e/build-images.sh) run
 * the way the operator's pods run it: the pod template the operator renders
 * (SVC_VOLUMES, credentials as Secret files, probes' paths), its
 * securityContext (uid 10001, read-only root filesystem, no capabilities),
 * drives as volumes, the pod network as one loopback address per pod.
 *
 * - one pod: ready, S3 round trip with the Secret's key (files owned by the
 *   pod's uid, the root filesystem refuses writes), the credentials rotated
 *   by editing the Secret volume, every file of the web console served as
 *   built and every console page rendered in Chromium;
 * - four pods of one pool on the host network: one container killed, every
 *   object still reads and new ones write; restarted, it rejoins.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSecretVolume } from '../node/test/helpers/secret-volume.ts';
import type { SvcCluster } from '../operator/src/crd/svccluster.ts';
import { buildStatefulSet, type KubeObject } from '../operator/src/reconcile/render.ts';
import { podHost } from '../operator/src/topology/names.ts';
import { launchConfig } from '../operator/src/topology/volumes.ts';
import { imagesMissing, NODE_IMAGE, podContainer, type PodRun, podSubnet } from './images.ts';
import { keepAliveHandler } from '../node/test/helpers/s3-client.ts';

const missing = imagesMissing();
if (missing) console.log(`skipped: ${missing}; the storage-node image tests did not run`);

const CHROMIUM = '/usr/bin/chromium';
const NS = 'storage';
const ROOT = { accessKey: 'image-admin', secretKey: 'image-secret-key-0123' };

function cluster(name: string, servers: number, volumes: number): SvcCluster {
  return {
    apiVersion: 'svc.io/v1alpha1',
    kind: 'SvcCluster',
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: { image: NODE_IMAGE, credentials: { secretName: `${name}-root` }, pools: [{ name: 'p0', servers, volumesPerServer: volumes, volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } }] },
  } as SvcCluster;
}

/** The operator's StatefulSet for the cluster's only pool, and every pod's name → address. */
function render(c: SvcCluster, ip: (k: number) => string): { sts: KubeObject; hosts: Record<string, string> } {
  const pool = c.spec.pools[0]!;
  const sts = buildStatefulSet(c, pool, launchConfig(c, c.spec.pools, 'cluster.local'));
  const hosts: Record<string, string> = {};
  for (let k = 0; k < pool.servers; k++) hosts[podHost(c, pool.name, k, 'cluster.local')] = ip(k);
  return { sts, hosts };
}

const s3 = (pod: PodRun, creds = ROOT) =>
  new S3Client({ requestHandler: keepAliveHandler(), endpoint: `http://${pod.ip}:9000`, region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: creds.accessKey, secretAccessKey: creds.secretKey } });
const errorName = (p: Promise<unknown>) => p.then(() => 'ok', (e: { name?: string }) => e.name ?? 'error');

async function waitReady(pod: PodRun, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const ok = await fetch(`http://${pod.ip}:9000/health/ready`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.status === 200, () => false);
    if (ok) return;
    if (Date.now() > end) {
      const logs = await pod.container.logs();
      let text = '';
      for await (const chunk of logs) text += String(chunk);
      throw new Error(`${pod.name} not ready within ${ms} ms:\n${text.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(missing !== undefined)('storage-node image', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-node-image-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  describe('one pod as the operator renders it', () => {
    const c = cluster('img', 1, 4);
    const ip = podSubnet();
    let pod: PodRun;
    let client: S3Client;

    beforeAll(async () => {
      const { sts, hosts } = render(c, ip);
      pod = await podContainer({ sts, ordinal: 0, ip: ip(0), hosts, secrets: { 'img-root': ROOT }, base });
      await waitReady(pod);
      client = s3(pod);
    }, 180_000);

    afterAll(async () => {
      client?.destroy();
      await pod?.container.stop();
    });

    it('runs as uid 10001 on a read-only root filesystem, drives owned by that uid; the S3 round trip uses the Secret key', async () => {
      const inspect = await pod.container.exec(['node', '-e', 'process.stdout.write(JSON.stringify({uid: process.getuid(), gid: process.getgid()}))']);
      expect(JSON.parse(inspect.stdout)).toEqual({ uid: 10001, gid: 10001 });
      const write = await pod.container.exec(['node', '-e', "require('fs').writeFileSync('/opt/svc/x', 'x')"]);
      expect(write.exitCode).not.toBe(0);
      expect(write.output).toContain('EROFS');
      await client.send(new CreateBucketCommand({ Bucket: 'image' }));
      const body = randomBytes(300 * 1024);
      await client.send(new PutObjectCommand({ Bucket: 'image', Key: 'a/b.bin', Body: body }));
      const got = Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: 'image', Key: 'a/b.bin' }))).Body!.transformToByteArray());
      expect(got.equals(body)).toBe(true);
      expect(statSync(pod.dirs['data-0']!).uid).toBe(10001);
      expect(statSync(join(pod.dirs['data-0']!, 'image')).uid).toBe(10001);
      // The image's built-in default credential is not a way in.
      expect(await errorName(s3(pod, { accessKey: 'svcadmin', secretKey: 'svcadmin' }).send(new GetObjectCommand({ Bucket: 'image', Key: 'a/b.bin' })))).toBe('InvalidAccessKeyId');
    });

    it('editing the credentials Secret rotates the key in the running container', async () => {
      const next = { accessKey: 'image-admin-2', secretKey: 'image-secret-key-4567' };
      await writeSecretVolume(pod.dirs['credentials']!, next, 0o644);
      const end = Date.now() + 20_000;
      while ((await errorName(s3(pod, next).send(new GetObjectCommand({ Bucket: 'image', Key: 'a/b.bin' })))) !== 'ok') {
        if (Date.now() > end) throw new Error('the rotated key was not taken within 20 s');
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(await errorName(client.send(new GetObjectCommand({ Bucket: 'image', Key: 'a/b.bin' })))).toBe('InvalidAccessKeyId');
      client.destroy();
      client = s3(pod, next);
    });

    it('serves every file of the web console as built', async () => {
      const m = await pod.container.exec(['cat', '/opt/svc/node/build/console/manifest.json']);
      expect(m.exitCode).toBe(0);
      const manifest = JSON.parse(m.stdout) as { files: { path: string; type: string; sha256: string }[] };
      expect(manifest.files.length).toBeGreaterThan(10);
      const root = `http://${pod.ip}:9001/svc/console/`;
      for (const f of manifest.files) {
        const r = await fetch(`${root}${f.path === 'index.html' ? '' : f.path}`);
        expect(r.status, f.path).toBe(200);
        expect(r.headers.get('content-type'), f.path).toBe(f.type);
        expect(createHash('sha256').update(Buffer.from(await r.arrayBuffer())).digest('hex'), f.path).toBe(f.sha256);
      }
    });

    it.skipIf(!existsSync(CHROMIUM) && process.env['SVC_E2E_REQUIRE_IMAGES'] !== '1')('renders every console page in Chromium after signing in', async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        const root = `http://${pod.ip}:9001/svc/console/`;
        await page.goto(root);
        await page.locator('#access-key').fill('image-admin-2');
        await page.locator('#secret-key').fill('image-secret-key-4567');
        await page.keyboard.press('Enter');
        await page.locator('#nav-overview').waitFor();
        const pages: [string, string][] = [
          ['#/', 'Overview'],
          ['#/pools', 'Pools'],
          ['#/healing', 'Healing'],
          ['#/buckets', 'Buckets'],
          ['#/buckets/image?prefix=a%2F', 'image/a/'],
          ['#/buckets/image/object?key=a%2Fb.bin', 'b.bin'],
        ];
        for (const [hash, heading] of pages) {
          await page.goto(`${root}${hash}`);
          await page.locator('main h1', { hasText: heading }).waitFor({ timeout: 15_000 });
          expect(await page.locator('main .error-box').count(), hash).toBe(0);
        }
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    }, 90_000);
  });

  describe('four pods of one pool on the host network', () => {
    const c = cluster('quad', 4, 2);
    const ip = podSubnet();
    const pods: PodRun[] = [];
    let rendered: ReturnType<typeof render>;
    const keys: string[] = [];

    beforeAll(async () => {
      rendered = render(c, ip);
      pods.push(...(await Promise.all([0, 1, 2, 3].map((k) => podContainer({ sts: rendered.sts, ordinal: k, ip: ip(k), hosts: rendered.hosts, secrets: { 'quad-root': ROOT }, base })))));
      await Promise.all(pods.map((p) => waitReady(p, 120_000)));
    }, 300_000);

    afterAll(async () => {
      await Promise.all(pods.map((p) => p.container.stop().catch(() => undefined)));
    });

    it('forms one cluster: a write through one pod reads back through every other', async () => {
      await s3(pods[0]!).send(new CreateBucketCommand({ Bucket: 'quad' }));
      for (let i = 0; i < 12; i++) {
        const key = `k${i}`;
        await s3(pods[i % 4]!).send(new PutObjectCommand({ Bucket: 'quad', Key: key, Body: `value ${i} ${'x'.repeat(i * 5000)}` }));
        keys.push(key);
      }
      for (const p of pods) for (const [i, key] of keys.entries()) expect(await (await s3(p).send(new GetObjectCommand({ Bucket: 'quad', Key: key }))).Body!.transformToString()).toBe(`value ${i} ${'x'.repeat(i * 5000)}`);
    }, 120_000);

    it('one container killed: every object still reads and new ones write; restarted, it rejoins', async () => {
      const victim = pods[2]!;
      await victim.container.stop({ timeout: 0 });
      for (const p of [pods[0]!, pods[1]!, pods[3]!]) {
        for (const [i, key] of keys.entries()) expect(await (await s3(p).send(new GetObjectCommand({ Bucket: 'quad', Key: key }))).Body!.transformToString()).toBe(`value ${i} ${'x'.repeat(i * 5000)}`);
      }
      await s3(pods[3]!).send(new PutObjectCommand({ Bucket: 'quad', Key: 'while-down', Body: 'written with a pod down' }));
      const back = await podContainer({ sts: rendered.sts, ordinal: 2, ip: ip(2), hosts: rendered.hosts, secrets: { 'quad-root': ROOT }, base });
      pods[2] = back;
      await waitReady(back, 120_000);
      expect(await (await s3(back).send(new GetObjectCommand({ Bucket: 'quad', Key: 'while-down' }))).Body!.transformToString()).toBe('written with a pod down');
    }, 240_000);
  });
});
