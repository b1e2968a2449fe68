/** Fixtures for the operator's pure tests: clusters, observations, admin snapshots. */
import type { AdminPoolStatus, DecommissionInfo, RebalanceStatus } from '../src/admin/types.ts';
import type { PoolSpec, SvcCluster, SvcClusterSpec } from '../src/crd/svccluster.ts';
import type { Observation, PlanContext, PodObs } from '../src/reconcile/observation.ts';
import { templateHash } from '../src/reconcile/render.ts';
import { podName, statefulSetName } from '../src/topology/names.ts';
import { poolExpression } from '../src/topology/volumes.ts';

export const NOW = new Date('2026-01-01T00:00:00.000Z');
export const DOMAIN = 'cluster.local';

export function ctx(over: Partial<PlanContext> = {}): PlanContext {
  let n = 0;
  return { clusterDomain: DOMAIN, pollMs: 10_000, idleMs: 300_000, stalledMs: 60_000, newId: () => `op-${++n}`, ...over };
}

export function pool(name: string, over: Partial<PoolSpec> = {}): PoolSpec {
  return { name, servers: 4, volumesPerServer: 2, volumeClaimTemplate: { resources: { requests: { storage: '10Gi' } } }, ...over };
}

export function cluster(pools: PoolSpec[], over: Partial<SvcClusterSpec> = {}, generation = 1): SvcCluster {
  return {
    apiVersion: 'svc.io/v1alpha1',
    kind: 'SvcCluster',
    metadata: { name: 'prod', namespace: 'storage', uid: 'uid-prod', generation },
    spec: { image: 'svc-node:1.0.0', credentials: { secretName: 'prod-root' }, pools, ...over },
  };
}

export function expr(c: SvcCluster, name: string): string {
  const p = c.spec.pools.find((x) => x.name === name)!;
  return poolExpression(c, p, DOMAIN);
}

/** Pods of `poolName`, all on `hash`, by default running and ready with the current template. */
export function podsFor(c: SvcCluster, poolName: string, hash: string, over: Partial<PodObs> = {}): PodObs[] {
  const p = c.spec.pools.find((x) => x.name === poolName)!;
  const out: PodObs[] = [];
  for (let i = 0; i < p.servers; i++) {
    out.push({
      name: podName(c.metadata.name, poolName, i),
      pool: poolName,
      ordinal: i,
      launchHash: hash,
      templateHash: templateHash(c, p),
      running: true,
      ready: true,
      terminating: false,
      url: `http://${podName(c.metadata.name, poolName, i)}:9000`,
      ...over,
    });
  }
  return out;
}

export function stsFor(c: SvcCluster, poolName: string, hash?: string) {
  const p = c.spec.pools.find((x) => x.name === poolName)!;
  return { name: statefulSetName(c.metadata.name, poolName), pool: poolName, replicas: p.servers, readyReplicas: p.servers, launchHash: hash, storage: p.volumeClaimTemplate.resources.requests.storage };
}

export function adminPool(id: number, cmdline: string, info: DecommissionInfo = {}): AdminPoolStatus {
  return {
    id,
    cmdline,
    lastUpdate: NOW.toISOString(),
    decommissionInfo: { startTime: '0001-01-01T00:00:00Z', complete: false, failed: false, canceled: false, totalSize: 1000, currentSize: 500, ...info },
  };
}

export function rebalance(status: string, over: Partial<RebalanceStatus> = {}): RebalanceStatus {
  return { id: 'rb-1', pools: [{ id: 0, status, progress: { bytes: 10 } }, { id: 1, status, progress: { bytes: 5 } }], ...over };
}

export function observation(over: Partial<Observation> = {}): Observation {
  return { now: NOW, statefulSets: [], pods: [], pvcs: [], ...over };
}

export function later(ms: number): Date {
  return new Date(NOW.getTime() + ms);
}
