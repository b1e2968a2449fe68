/**
 * The process kubelet's own contract where the end-to-end tests lean on it: a pod deleted
 * while its start is under way leaves no process behind (the operator can re-apply a
 * StatefulSet just after its SvcCluster is deleted; the collector then deletes the pods the
 * StatefulSet controller has only begun to start).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeApiServer } from '../fake-apiserver/server.ts';
import type { Obj } from '../fake-apiserver/store.ts';
import { NS, startApiWithCrd } from '../harness.ts';
import { ProcessKubelet } from './process-kubelet.ts';

const pod = (name: string, uid: string): Obj =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid },
    spec: { hostname: name, subdomain: 'k-hl', containers: [{ name: 'svc', env: [], volumeMounts: [{ name: 'data0', mountPath: '/data/d0' }] }], volumes: [] },
  }) as unknown as Obj;

describe('process kubelet', () => {
  let api: FakeApiServer;
  let base: string;
  let kubelet: ProcessKubelet;

  beforeAll(async () => {
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
});
