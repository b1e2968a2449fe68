/**
 * The CRD: generated files match the TypeScript schema (drift), the schema is
 * structural, and the CEL rules admit and refuse what they should, evaluated
 * with a real CEL implementation.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { crdAdmission } from '../../test/crd-admission.ts';
import { checkLaunchConfig, launchConfig } from '../topology/volumes.ts';
import { buildCrd, chartCrdFile, crdYaml } from './crd.ts';
import type { SvcCluster } from './svccluster.ts';
import { GENERATED_FILES } from './generated-files.ts';

const crd = buildCrd() as { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> }; additionalPrinterColumns: { name: string }[] }[] } };
const admit = crdAdmission(crd as never);

function cluster(spec: Record<string, unknown> = {}, name = 'prod') {
  return {
    apiVersion: 'svc.io/v1alpha1',
    kind: 'SvcCluster',
    metadata: { name, namespace: 'storage' },
    spec: {
      image: 'svc-node:1.0.0',
      credentials: { secretName: 'prod-root' },
      pools: [{ name: 'p0', servers: 4, volumesPerServer: 4, volumeClaimTemplate: { resources: { requests: { storage: '1Ti' } } } }],
      ...spec,
    },
  };
}
const pool = (name: string, over: Record<string, unknown> = {}) => ({ name, servers: 4, volumesPerServer: 4, volumeClaimTemplate: { resources: { requests: { storage: '1Ti' } } }, ...over });
const messages = (obj: unknown, old?: unknown) => admit(obj, old).map((v) => v.message);

describe('SvcCluster CRD', () => {
  it('the committed crds/ file and the chart crds/ copy are exactly what the schema renders (run `npm run -w operator generate`)', () => {
    expect(readFileSync(GENERATED_FILES.crd, 'utf8')).toBe(crdYaml());
    expect(readFileSync(GENERATED_FILES.chartCrd, 'utf8')).toBe(chartCrdFile());
  });

  it('is a structural schema: every node typed, no const / patternProperties / defaults', () => {
    const problems: string[] = [];
    const walk = (s: Record<string, unknown>, path: string) => {
      if (!s['type'] && !s['x-kubernetes-int-or-string'] && !s['x-kubernetes-preserve-unknown-fields']) problems.push(`${path}: no type`);
      for (const k of ['const', 'patternProperties', 'default', '$ref', '$id']) if (k in s) problems.push(`${path}: ${k}`);
      for (const [k, v] of Object.entries((s['properties'] as Record<string, Record<string, unknown>>) ?? {})) walk(v, `${path}.${k}`);
      if (s['items']) walk(s['items'] as Record<string, unknown>, `${path}[]`);
      if (typeof s['additionalProperties'] === 'object') walk(s['additionalProperties'] as Record<string, unknown>, `${path}{}`);
    };
    walk(crd.spec.versions[0]!.schema.openAPIV3Schema, '');
    expect(problems).toEqual([]);
    expect(JSON.stringify(crd)).not.toContain('x-kubernetes-preserve-unknown-fields');
  });

  it('has printer columns for kubectl get', () => {
    expect(crd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name)).toEqual(['Phase', 'Ready', 'Pools', 'Operation', 'Reason', 'Age']);
    const parsed = parse(readFileSync(GENERATED_FILES.crd, 'utf8')) as typeof crd;
    expect(parsed.spec.versions[0]!.additionalPrinterColumns).toHaveLength(6);
  });

  it('admits a minimal valid cluster and a full one', () => {
    expect(admit(cluster())).toEqual([]);
    expect(
      admit(
        cluster({
          erasure: { setDriveCount: 8, standardParity: 4, reducedParity: 2 },
          pools: [pool('p0', { servers: 4, volumesPerServer: 4, decommission: false, tolerations: [{ key: 'storage', operator: 'Exists', effect: 'NoSchedule' }] }), pool('p1', { servers: 8, volumesPerServer: 2 })],
          rebalance: { onExpansion: 'Manual', requestId: 'r1' },
          restartPolicy: { imageChange: 'Rolling', readyTimeoutSeconds: 900 },
          services: { s3: { type: 'LoadBalancer', annotations: { a: 'b' } }, console: { enabled: false } },
          env: [{ name: 'SVC_REGION', value: 'eu-west-1' }],
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } }] } },
          storage: { pvcRetention: 'Delete' },
        }),
      ),
    ).toEqual([]);
  });

  it('refuses unknown fields, bad names and out-of-range numbers (schema)', () => {
    expect(admit(cluster({ typo: 1 })).length).toBeGreaterThan(0);
    expect(admit(cluster({ pools: [pool('Bad_Name')] })).length).toBeGreaterThan(0);
    expect(admit(cluster({ pools: [pool('p0', { servers: 0 })] })).length).toBeGreaterThan(0);
    expect(admit(cluster({ erasure: { setDriveCount: 17 } })).length).toBeGreaterThan(0);
    expect(admit(cluster({ pools: [pool('p0'), pool('p0')] })).map((v) => v.message).join()).toMatch(/Duplicate/);
  });

  it('CEL: a pool needs two drives; at least one pool stays active', () => {
    expect(messages(cluster({ pools: [pool('p0', { servers: 1, volumesPerServer: 1 })] }))).toContain('a pool needs at least two drives (servers x volumesPerServer >= 2)');
    expect(messages(cluster({ pools: [pool('p0', { decommission: true })] }))).toContain('at least one pool must stay active (decommission: false)');
  });

  it('CEL: parity must fit half the narrowest pool', () => {
    expect(messages(cluster({ erasure: { standardParity: 3 }, pools: [pool('p0'), pool('p1', { servers: 2, volumesPerServer: 2 })] }))).toContain(
      'standardParity exceeds half the erasure set width of the narrowest pool',
    );
    expect(messages(cluster({ erasure: { standardParity: 2 }, pools: [pool('p0'), pool('p1', { servers: 2, volumesPerServer: 2 })] }))).toEqual([]);
    expect(messages(cluster({ erasure: { setDriveCount: 4, reducedParity: 3 } }))).toContain('reducedParity exceeds half the erasure set width of the narrowest pool');
    expect(messages(cluster({ erasure: { standardParity: 1, reducedParity: 2 } }))).toContain('standardParity must be at least reducedParity when both are non-zero');
    expect(messages(cluster({ erasure: { standardParity: 2, reducedParity: 0 } }))).toEqual([]);
  });

  it('CEL: reserved env names are refused', () => {
    for (const name of ['SVC_VOLUMES', 'SVC_STORAGE_CLASS_STANDARD', 'SVC_ACCESS_KEY_FILE', 'SVC_SECRET_KEY', 'COMPAT_VOLUMES', 'SVC_ERASURE_SET_DRIVE_COUNT']) {
      expect(messages(cluster({ env: [{ name, value: 'x' }] })).join()).toMatch(/env must not set names the operator owns/);
    }
  });

  it('CEL: derived names stay within DNS limits', () => {
    expect(messages(cluster({ pools: [pool('a'.repeat(40))] }, 'b'.repeat(20))).join()).toMatch(/at most 52 characters/);
    expect(messages(cluster({}, 'c'.repeat(41)))).toContain('the cluster name must be at most 40 characters (Service names derive from it)');
  });

  it('CEL transition rules: pool geometry and storage class immutable, set width immutable, order append-only', () => {
    const old = cluster({ pools: [pool('p0'), pool('p1')] });
    expect(messages(cluster({ pools: [pool('p0', { servers: 8 }), pool('p1')] }), old)).toContain(
      'servers and volumesPerServer of a pool are immutable: add a new pool to grow the cluster',
    );
    expect(messages(cluster({ pools: [pool('p0', { volumeClaimTemplate: { storageClassName: 'fast', resources: { requests: { storage: '1Ti' } } } }), pool('p1')] }), old)).toContain(
      'volumeClaimTemplate.storageClassName of a pool is immutable',
    );
    expect(messages(cluster({ pools: [pool('p1'), pool('p0')] }), old)).toContain('pools keep their order: append new pools at the end');
    expect(messages(cluster({ pools: [pool('p0'), pool('p1'), pool('p2')] }), old)).toEqual([]);
    expect(messages(cluster({ pools: [pool('p1')] }), old)).toEqual([]);
    expect(messages(cluster({ pools: [pool('p0'), pool('p1')], erasure: { setDriveCount: 8 } }), old)).toContain('erasure.setDriveCount is immutable: it is persisted in every drive format');
    // A new pool has no old self: its geometry is free.
    expect(messages(cluster({ pools: [pool('p0'), pool('p1'), pool('p9', { servers: 2 })] }), old)).toEqual([]);
  });

  it('refuses at admission what every node would refuse at start-up: 1x17 drives, setDriveCount 6 on 16 drives, parity above half the chosen set', () => {
    expect(messages(cluster({ pools: [pool('p0', { servers: 1, volumesPerServer: 17 })] })).join()).toMatch(/cannot be split into symmetric erasure sets/);
    expect(messages(cluster({ erasure: { setDriveCount: 6 } })).join()).toMatch(/setDriveCount does not divide/);
    // 6 servers x 4 drives: sets of 12 (the widest symmetric width), so EC:6 fits and EC:7 does not.
    expect(messages(cluster({ pools: [pool('p0', { servers: 6, volumesPerServer: 4 })], erasure: { standardParity: 6 } }))).toEqual([]);
    expect(messages(cluster({ pools: [pool('p0', { servers: 6, volumesPerServer: 4 })], erasure: { standardParity: 7 } })).join()).toMatch(/standardParity exceeds/);
  });

  it('credentials.secretName is immutable (rotate by editing the Secret)', () => {
    const old = cluster();
    expect(messages(cluster({ credentials: { secretName: 'other' } }), old).join()).toMatch(/credentials.secretName is immutable/);
    expect(messages(cluster(), old)).toEqual([]);
  });

  it('the CEL topology rules equal the server\'s own start-up checks (the svc-topology package) on every layout of a grid', () => {
    const grid: { servers: number; volumes: number; sdc?: number; parity?: number }[] = [];
    for (const servers of [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16]) for (const volumes of [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17]) if (servers * volumes >= 2) grid.push({ servers, volumes });
    const extra: { servers: number; volumes: number; sdc?: number; parity?: number }[] = [];
    for (const g of grid.filter((_, i) => i % 3 === 0)) {
      for (const sdc of [2, 4, 6, 8, 12, 16]) extra.push({ ...g, sdc });
      for (const parity of [1, 3, 4, 6, 8]) extra.push({ ...g, parity });
    }
    const disagreements: string[] = [];
    for (const g of [...grid, ...extra]) {
      const c = cluster({ pools: [pool('p0', { servers: g.servers, volumesPerServer: g.volumes })], erasure: { ...(g.sdc !== undefined ? { setDriveCount: g.sdc } : {}), ...(g.parity !== undefined ? { standardParity: g.parity } : {}) } }) as unknown as SvcCluster;
      const server = checkLaunchConfig(launchConfig(c, c.spec.pools, 'cluster.local'));
      const celOk = admit(c).length === 0;
      if (celOk !== !('issue' in server)) disagreements.push(`${JSON.stringify(g)}: CEL ${celOk ? 'admits' : 'refuses'}, server ${'issue' in server ? `refuses (${server.issue.message})` : 'starts'}`);
    }
    expect(disagreements).toEqual([]);
  });
});
