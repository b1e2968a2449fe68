/**
 * The process kubelet's own contract where the end-to-end tests lean on it: a pod deleted
 * while its start is under way leaves no process behind (the operator can re-apply a
 * StatefulSet just after its SvcCluster is deleted; the collector then deletes the pods the
 * StatefulSet controller has only begun to start); a stop gives svc the pod's
 * terminationGracePeriodSeconds to drain; a container that exits, or hangs past its liveness
 * probe, is restarted and the pod's status counts it, as the kubelet's does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj } from '../fake-apiserver/store.ts';
import { CREDENTIALS, NS, startApiWithCrd } from '../harness.ts';
import { ProcessKubelet } from './process-kubelet.ts';
import { StatefulSetSimulator } from './statefulset-sim.ts';
import { keepAliveHandler } from '../../../node/test/helpers/s3-client.ts';

const canUnshare = process.getuid?.() === 0;

/** The svc container of these pods: one drive, the test's root key. */
const container = (env: Record<string, string> = {}) => ({
  name: 'svc',
  image: 'svc-node:test',
  env: Object.entries({ SVC_VOLUMES: '/data/d0', SVC_ACCESS_KEY: CREDENTIALS.accessKey, SVC_SECRET_KEY: CREDENTIALS.secretKey, ...env }).map(([name, value]) => ({ name, value })),
  volumeMounts: [{ name: 'data0', mountPath: '/data/d0' }],
});

const pod = (name: string, uid: string, spec: Record<string, unknown> = {}, env: Record<string, string> = {}): Obj =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid },
    spec: { hostname: name, subdomain: 'k-hl', containers: [container(env)], volumes: [], ...spec },
  }) as unknown as Obj;

describe('process kubelet', () => {
  let api: FakeApiServer;
  let base: string;
  let kubelet: ProcessKubelet;

  beforeAll(async () => {
    if (canUnshare && !existsSync('/data')) mkdirSync('/data');
    base = await mkdtemp(join(tmpdir(), 'svc-kubelet-'));
    api = await startApiWithCrd();
    kubelet = new ProcessKubelet(api, base);
  });

  afterAll(async () => {
    await kubelet?.stopAll();
    await api?.close();
    if (base) await rm(base, { recursive: true, force: true });
  });

  it('a pod deleted while it starts is cancelled: no process, nothing left running', async () => {
    const p = pod('k-0', 'uid-1');
    const starting = kubelet.start(p);
    await kubelet.stop(p);
    await expect(starting).rejects.toMatchObject({ reason: 'Deleted' });
    expect(kubelet.running()).toEqual([]);
    expect(kubelet.pid('k-0')).toBeUndefined();
  });

  it.skipIf(!canUnshare)(
    "a stop is SIGTERM, then SIGKILL only after the pod's terminationGracePeriodSeconds (default 30 s): svc's drain of a request in flight gets it",
    async () => {
      /** Starts the pod, holds a PUT in flight (its body stops after 1 MiB of 2), stops the pod; how the stop went. */
      const stopMidRequest = async (p: Obj) => {
        await kubelet.start(p);
        const s3 = new S3Client({ requestHandler: keepAliveHandler(), endpoint: kubelet.url(p.metadata.name), region: 'us-east-1', forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: CREDENTIALS.accessKey, secretAccessKey: CREDENTIALS.secretKey } });
        await s3.send(new CreateBucketCommand({ Bucket: 'drain' }));
        let sent = 0;
        const body = new Readable({
          read() {
            if (sent++ === 0) this.push(Buffer.alloc(1024 * 1024, 1));
            // then nothing more: the request stays in flight
          },
        });
        const put = s3.send(new PutObjectCommand({ Bucket: 'drain', Key: 'held', Body: body, ContentLength: 2 * 1024 * 1024 })).catch((err: Error) => err);
        await new Promise((r) => setTimeout(r, 1_000));
        const pid = kubelet.pid(p.metadata.name)!;
        const began = Date.now();
        await kubelet.stop(p);
        const ms = Date.now() - began;
        body.destroy();
        await put;
        s3.destroy();
        return { ms, pid, exit: kubelet.exits.find((e) => e.pod === p.metadata.name && e.pid === pid) };
      };
      const [short, defaulted] = await Promise.all([
        // a 2 s grace period under a 60 s drain: killed at 2 s (the kubelet used to wait 15 s)
        stopMidRequest(pod('g-0', 'uid-g0', { terminationGracePeriodSeconds: 2 }, { SVC_SHUTDOWN_TIMEOUT: '60s' })),
        // no grace period set (30 s) and an 18 s drain: svc drains and exits by itself (it used to be SIGKILLed at 15 s)
        stopMidRequest(pod('g-1', 'uid-g1', {}, { SVC_SHUTDOWN_TIMEOUT: '18s' })),
      ]);
      expect(short.exit).toMatchObject({ signal: 'SIGKILL' });
      expect(short.ms).toBeGreaterThanOrEqual(2_000);
      expect(short.ms).toBeLessThan(15_000);
      expect(defaulted.exit).toMatchObject({ code: 0, signal: null });
      expect(defaulted.ms).toBeGreaterThanOrEqual(18_000);
      expect(kubelet.running()).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!canUnshare)('a container that exits before it is live is restarted with a growing back-off and reported in CrashLoopBackOff; a stop meanwhile ends the start', async () => {
    // an invalid setting: svc refuses to start
    const p = pod('c-0', 'uid-c0', {}, { SVC_SHUTDOWN_TIMEOUT: 'soon' });
    const starting = kubelet.start(p);
    await expect.poll(() => kubelet.container(p)?.restartCount ?? 0, { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    await expect.poll(() => kubelet.container(p)?.waiting, { timeout: 30_000, interval: 50 }).toBe('CrashLoopBackOff');
    expect(kubelet.container(p)!.lastTerminated).toMatchObject({ exitCode: expect.any(Number), reason: 'Error' });
    expect(kubelet.container(p)!.lastTerminated!.exitCode).not.toBe(0);
    expect(kubelet.exits.filter((e) => e.pod === 'c-0').length).toBeGreaterThanOrEqual(2);
    expect(kubelet.exits.find((e) => e.pod === 'c-0')!.logTail).toContain('SVC_SHUTDOWN_TIMEOUT');
    await kubelet.stop(p);
    await starting;
    expect(kubelet.running()).not.toContain('c-0');
  }, 120_000);

  it.skipIf(!canUnshare)('readiness as the kubelet probes it: one slow answer does not make a ready pod unready, failureThreshold failures over that many periods do', async () => {
    const p = pod('rp-0', 'uid-rp0');
    (p['spec'] as { containers: Record<string, unknown>[] }).containers[0]!['readinessProbe'] = { httpGet: { path: '/health/ready', port: 9000 }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 };
    await kubelet.start(p);
    try {
      await expect.poll(() => kubelet.ready(p), { timeout: 60_000, interval: 200 }).toBe(true);
      const pid = kubelet.pid('rp-0')!;
      // the node stops answering (a stall, as a loaded machine makes them): the first probe times out
      process.kill(pid, 'SIGSTOP');
      const stalled = Date.now();
      expect(await kubelet.ready(p)).toBe(true);
      // (each probe waits out its 1 s timeout)
      let probes = 1;
      for (;;) {
        probes++;
        if (!(await kubelet.ready(p))) break;
      }
      expect(probes).toBeGreaterThanOrEqual(3);
      expect(Date.now() - stalled).toBeGreaterThanOrEqual(2_000);
      // answering again: ready at the first success
      process.kill(pid, 'SIGCONT');
      await expect.poll(() => kubelet.ready(p), { timeout: 30_000, interval: 200 }).toBe(true);
    } finally {
      const running = kubelet.pid('rp-0');
      if (running !== undefined) process.kill(running, 'SIGCONT');
      await kubelet.stop(p);
    }
  }, 120_000);

  it.skipIf(!canUnshare)('liveness as the kubelet probes it: passing probes leave the container alone; a hung one is killed after failureThreshold failures and restarted in its pod', async () => {
    const p = pod('lv-0', 'uid-lv0', { terminationGracePeriodSeconds: 2 });
    (p['spec'] as { containers: Record<string, unknown>[] }).containers[0]!['livenessProbe'] = { httpGet: { path: '/health', port: 9000 }, periodSeconds: 1, failureThreshold: 3, timeoutSeconds: 1 };
    await kubelet.start(p);
    const pid = kubelet.pid('lv-0')!;
    try {
      // a healthy container over several periods: probed, never killed
      await new Promise((r) => setTimeout(r, 4_000));
      expect(kubelet.pid('lv-0')).toBe(pid);
      expect(kubelet.livenessKills.filter((k) => k.pod === 'lv-0')).toEqual([]);
      // it hangs: three failed probes (a second apart, each waiting out its 1 s timeout), then
      // SIGTERM, which a stopped process cannot act on, then SIGKILL after the 2 s grace period
      process.kill(pid, 'SIGSTOP');
      const hung = Date.now();
      await expect.poll(() => kubelet.livenessKills.find((k) => k.pod === 'lv-0' && k.pid === pid), { timeout: 30_000, interval: 100 }).toBeDefined();
      expect(kubelet.livenessKills.find((k) => k.pod === 'lv-0')!.at - hung).toBeGreaterThanOrEqual(3_000);
      await expect.poll(() => kubelet.exits.find((e) => e.pod === 'lv-0' && e.pid === pid), { timeout: 30_000, interval: 100 }).toMatchObject({ signal: 'SIGKILL' });
      // started again in the same pod, and live
      await expect.poll(() => kubelet.pid('lv-0') !== undefined && kubelet.pid('lv-0') !== pid, { timeout: 30_000, interval: 100 }).toBe(true);
      expect(kubelet.container(p)!.restartCount).toBe(1);
      await expect.poll(() => fetch(`${kubelet.url('lv-0')}/health`).then((r) => r.status, () => 0), { timeout: 60_000, interval: 200 }).toBe(200);
    } finally {
      // (the hung process, if the kubelet has not killed it)
      if (kubelet.exits.every((e) => e.pid !== pid)) process.kill(pid, 'SIGCONT');
      await kubelet.stop(p);
    }
  }, 120_000);

  it.skipIf(!canUnshare)("a container that exits is started again in its pod; the pod's status counts the restart and says how the last run ended", async () => {
    const sim = new StatefulSetSimulator(api, kubelet, { probeMs: 200 });
    const seen: { restartCount?: number; waiting?: string; signal?: number }[] = [];
    const off = api.store.onEvent((e) => {
      if (e.typeKey !== '/pods' || e.object.metadata.name !== 'r-0') return;
      const cs = (e.object['status'] as { containerStatuses?: { restartCount: number; state: { waiting?: { reason: string } }; lastState: { terminated?: { signal?: number } } }[] } | undefined)?.containerStatuses?.[0];
      if (cs) seen.push({ restartCount: cs.restartCount, waiting: cs.state.waiting?.reason, signal: cs.lastState.terminated?.signal });
    });
    try {
      const sts = api.store.find('apps', 'v1', 'statefulsets')!;
      api.store.create(sts, NS, {
        metadata: { name: 'r' },
        spec: {
          replicas: 1,
          serviceName: 'r-hl',
          selector: { matchLabels: { app: 'r' } },
          template: { metadata: { labels: { app: 'r' } }, spec: { containers: [container()] } },
        },
      });
      const podOf = () => api.store.tryGet(api.store.find('', 'v1', 'pods')!, NS, 'r-0');
      const ready = () => (podOf()?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      await expect.poll(ready, { timeout: 60_000, interval: 200 }).toBe(true);
      const uid = podOf()!.metadata.uid;
      const pid = kubelet.pid('r-0')!;
      // the container crashes (not a stop the kubelet asked for)
      process.kill(pid, 'SIGKILL');
      await expect.poll(() => kubelet.pid('r-0') !== undefined && kubelet.pid('r-0') !== pid, { timeout: 30_000, interval: 100 }).toBe(true);
      await expect.poll(ready, { timeout: 60_000, interval: 200 }).toBe(true);
      const status = podOf()!['status'] as { containerStatuses: { restartCount: number; lastState: { terminated?: { exitCode: number; signal?: number; reason: string } } }[] };
      expect(podOf()!.metadata.uid).toBe(uid);
      expect(status.containerStatuses[0]!.restartCount).toBe(1);
      // SIGKILL reached the shell that execs svc: 128 + 9
      expect(status.containerStatuses[0]!.lastState.terminated).toMatchObject({ exitCode: 137, signal: 9, reason: 'Error' });
      // while the restart waited out its back-off the pod said so
      expect(seen).toContainEqual({ restartCount: 0, waiting: 'CrashLoopBackOff', signal: 9 });
    } finally {
      off();
      await sim.stop();
    }
  }, 120_000);
});
