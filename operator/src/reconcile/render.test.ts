/**
 * Child builders: golden YAML (an operator upgrade must not churn pod
 * templates by accident: a diff here restarts pods in production) and
 * validation of every rendered object against the Kubernetes schemas.
 */
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { cluster, pool } from '../../test/fixtures.ts';
import { launchConfig } from '../topology/volumes.ts';
import { buildCertificate, buildPdb, buildProbes, buildServiceAccount, buildServices, buildStatefulSet, DEFAULT_RESOURCES, defaultSpread, templateHash, tlsNames } from './render.ts';

const c = cluster([pool('p0', { servers: 4, volumesPerServer: 2 }), pool('p1', { servers: 2, volumesPerServer: 4 })], {
  erasure: { standardParity: 2 },
  env: [{ name: 'SVC_REGION', value: 'eu-west-1' }],
  observability: { otlpEndpoint: 'http://otel:4318' },
  tolerations: [{ key: 'storage', operator: 'Exists', effect: 'NoSchedule' }],
  services: { s3: { type: 'LoadBalancer', annotations: { 'lb.example/internal': 'true' } } },
});
const launch = launchConfig(c, c.spec.pools, 'cluster.local');

function envOf(o: object): Record<string, string> {
  const s = o as { spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } };
  return Object.fromEntries(s.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
}

describe('render', () => {
  it('StatefulSets (golden)', async () => {
    const sts = c.spec.pools.map((p) => buildStatefulSet(c, p, launch));
    await expect(stringify(sts, { lineWidth: 0, aliasDuplicateObjects: false })).toMatchFileSnapshot('./__golden__/statefulsets.yaml');
  });

  it('Services, ServiceAccount (golden)', async () => {
    await expect(stringify([...buildServices(c), buildServiceAccount(c)], { lineWidth: 0, aliasDuplicateObjects: false })).toMatchFileSnapshot('./__golden__/services.yaml');
  });

  it('one PodDisruptionBudget per pool, its budget from the pool\'s parity and set layout (golden)', async () => {
    await expect(stringify(c.spec.pools.map((p) => buildPdb(c, p, launch)), { lineWidth: 0, aliasDuplicateObjects: false })).toMatchFileSnapshot('./__golden__/pdbs.yaml');
  });

  it.each([
    // servers × volumes, parity → budget. A set tolerates width − write quorum lost drives; k pods down lose, per set, the drives of its k fullest servers.
    { servers: 4, volumes: 4, parity: undefined, budget: 1, why: 'one set of 16 at EC:4 tolerates 4; a server holds 4' },
    { servers: 8, volumes: 2, parity: undefined, budget: 2, why: 'one set of 16 at EC:4; a server holds 2' },
    { servers: 16, volumes: 1, parity: undefined, budget: 4, why: 'one drive per server' },
    { servers: 6, volumes: 4, parity: undefined, budget: 2, why: 'two sets of 12 at EC:4, each server holds 2 drives of each set' },
    { servers: 4, volumes: 2, parity: undefined, budget: 1, why: 'set of 8 at EC:4: write quorum 5 (parity is half), tolerates 3' },
    { servers: 2, volumes: 2, parity: undefined, budget: 0, why: 'set of 4 at EC:2: write quorum 3; one server down leaves 2' },
    { servers: 4, volumes: 4, parity: 2, budget: 0, why: 'EC:2 on 16: tolerates 2, a server holds 4' },
    { servers: 8, volumes: 2, parity: 6, budget: 3, why: 'EC:6 on 16: tolerates 6, three servers of 2' },
  ])('budget $servers×$volumes EC:$parity → maxUnavailable $budget ($why)', ({ servers, volumes, parity, budget }) => {
    const one = cluster([pool('p0', { servers, volumesPerServer: volumes })], parity === undefined ? {} : { erasure: { standardParity: parity } });
    const pdb = buildPdb(one, one.spec.pools[0]!, launchConfig(one, one.spec.pools, 'cluster.local')) as unknown as { metadata: { name: string }; spec: { maxUnavailable: number; selector: unknown } };
    expect(pdb.metadata.name).toBe('prod-p0');
    expect(pdb.spec.maxUnavailable).toBe(budget);
    expect(pdb.spec.selector).toEqual({ matchLabels: { 'svc.io/cluster': 'prod', 'svc.io/pool': 'p0' } });
  });

  it('defaults: pods of a pool spread over nodes and zones with soft anti-affinity, and request resources; the pool or cluster overrides, an empty value opts out', () => {
    const tmpl = (x: ReturnType<typeof cluster>, i = 0) =>
      (buildStatefulSet(x, x.spec.pools[i]!, launchConfig(x, x.spec.pools, 'cluster.local')) as unknown as { spec: { template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } } }).spec.template.spec;
    const plain = cluster([pool('p0'), pool('p1')]);
    const spec = tmpl(plain, 1);
    expect(spec['affinity']).toEqual(defaultSpread('prod', 'p1').affinity);
    expect(spec['topologySpreadConstraints']).toEqual(defaultSpread('prod', 'p1').topologySpreadConstraints);
    expect(JSON.stringify(spec['topologySpreadConstraints'])).toContain('"svc.io/pool":"p1"');
    expect(spec.containers[0]!['resources']).toEqual(DEFAULT_RESOURCES);
    const custom = { topologySpreadConstraints: [{ maxSkew: 2, topologyKey: 'rack', whenUnsatisfiable: 'DoNotSchedule' as const }], resources: { requests: { cpu: '2' } } };
    const byCluster = tmpl(cluster([pool('p0')], custom));
    expect(byCluster['topologySpreadConstraints']).toEqual(custom.topologySpreadConstraints);
    expect(byCluster['affinity']).toEqual(defaultSpread('prod', 'p0').affinity);
    expect(byCluster.containers[0]!['resources']).toEqual({ requests: { cpu: '2' } });
    const optOut = tmpl(cluster([pool('p0', { affinity: {}, topologySpreadConstraints: [] })]));
    expect(optOut['affinity']).toBeUndefined();
    expect(optOut['topologySpreadConstraints']).toBeUndefined();
  });

  it('every pool template carries the identical literal launch settings; OnDelete; credentials only as files', () => {
    const [a, b] = c.spec.pools.map((p) => buildStatefulSet(c, p, launch));
    const ea = envOf(a!);
    const eb = envOf(b!);
    for (const k of ['SVC_VOLUMES', 'SVC_STORAGE_CLASS_STANDARD']) expect(ea[k]).toBe(eb[k]);
    expect(ea['SVC_VOLUMES']).toBe(launch.volumes);
    expect(ea['SVC_ACCESS_KEY_FILE']).toBe('/run/secrets/svc/accessKey');
    expect(ea['SVC_SECRET_KEY_FILE']).toBe('/run/secrets/svc/secretKey');
    expect(Object.keys(ea).filter((k) => k === 'SVC_ACCESS_KEY' || k === 'SVC_SECRET_KEY')).toEqual([]);
    const spec = (a as unknown as { spec: Record<string, unknown> }).spec;
    expect(spec['updateStrategy']).toEqual({ type: 'OnDelete' });
    expect(spec['podManagementPolicy']).toBe('Parallel');
    expect(spec['persistentVolumeClaimRetentionPolicy']).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
  });

  it('mounts one PVC per drive at exactly the paths the volume expression names', () => {
    const sts = buildStatefulSet(c, c.spec.pools[1]!, launch) as unknown as {
      spec: { volumeClaimTemplates: { metadata: { name: string } }[]; template: { spec: { containers: { volumeMounts: { name: string; mountPath: string }[] }[] } } };
    };
    expect(sts.spec.volumeClaimTemplates.map((v) => v.metadata.name)).toEqual(['data-0', 'data-1', 'data-2', 'data-3']);
    const mounts = sts.spec.template.spec.containers[0]!.volumeMounts.filter((m) => m.name.startsWith('data-'));
    expect(mounts.map((m) => m.mountPath)).toEqual(['/data/d0', '/data/d1', '/data/d2', '/data/d3']);
    expect(launch.volumes).toContain('/data/d{0...3}');
  });

  it('probes: liveness /health, readiness /health/ready, startup sized to SVC_STARTUP_READINESS_MAX_WAIT_SECS', () => {
    const p = buildProbes(cluster([pool('p0')], { startupReadinessMaxWaitSeconds: 300 }));
    expect((p['livenessProbe']!['httpGet'] as { path: string }).path).toBe('/health');
    expect((p['readinessProbe']!['httpGet'] as { path: string }).path).toBe('/health/ready');
    const s = p['startupProbe']!;
    expect((s['httpGet'] as { path: string }).path).toBe('/health');
    expect((s['periodSeconds'] as number) * (s['failureThreshold'] as number)).toBeGreaterThanOrEqual(300 + 60);
    const custom = buildProbes(cluster([pool('p0')], { probes: { readiness: { periodSeconds: 2, failureThreshold: 9 } } }));
    expect(custom['readinessProbe']).toMatchObject({ periodSeconds: 2, failureThreshold: 9 });
  });

  it('the template hash ignores launch settings and (under Coordinated) the image, and moves with resources', () => {
    const p = c.spec.pools[0]!;
    expect(templateHash(cluster([p], { image: 'x:2' }), p)).toBe(templateHash(cluster([p]), p));
    expect(templateHash(cluster([p], { image: 'x:2', restartPolicy: { imageChange: 'Rolling' } }), p)).not.toBe(templateHash(cluster([p], { restartPolicy: { imageChange: 'Rolling' } }), p));
    expect(templateHash(cluster([pool('p0', { resources: { limits: { memory: '4Gi' } } })]), pool('p0', { resources: { limits: { memory: '4Gi' } } }))).not.toBe(
      templateHash(cluster([pool('p0')]), pool('p0')),
    );
  });

  it('never copies the SvcCluster labels onto children (GitOps tracking labels must not leak)', () => {
    const labelled = { ...c, metadata: { ...c.metadata, labels: { 'argocd.argoproj.io/instance': 'x' } } };
    const all = [...buildServices(labelled), buildPdb(labelled, c.spec.pools[0]!, launch), buildStatefulSet(labelled, c.spec.pools[0]!, launch)];
    expect(JSON.stringify(all)).not.toContain('argocd');
  });

  describe('TLS, each mode (golden)', () => {
    const modes = {
      secret: { secretName: 'prod-certs' },
      'cert-manager': { certManager: { issuerRef: { name: 'internal-ca', kind: 'ClusterIssuer' as const }, duration: '2160h', renewBefore: '720h' }, extraNames: ['s3.example.com', '203.0.113.10'] },
      generated: { generated: { duration: '2160h' }, extraNames: ['s3.example.com'] },
    };
    for (const [mode, tls] of Object.entries(modes)) {
      it(mode, async () => {
        const t = cluster([pool('p0', { servers: 2, volumesPerServer: 2 })], { tls });
        const l = launchConfig(t, t.spec.pools, 'cluster.local');
        const objects: object[] = [buildStatefulSet(t, t.spec.pools[0]!, l)];
        if (mode === 'cert-manager') objects.push(buildCertificate(t, 'cluster.local'));
        if (mode === 'generated') objects.push({ generatedCertificate: { secret: 'prod-tls', caSecret: 'prod-tls-ca', names: tlsNames(t, 'cluster.local') } });
        await expect(stringify(objects, { lineWidth: 0, aliasDuplicateObjects: false })).toMatchFileSnapshot(`./__golden__/tls-${mode}.yaml`);
        // https endpoints, HTTPS probes, the Secret's files where svc reads them
        expect(l.volumes).toBe('https://prod-p0-{0...1}.prod-hl.storage.svc.cluster.local:9000/data/d{0...1}');
        const sts = objects[0] as { spec: { template: { spec: { containers: { env: { name: string; value: string }[]; readinessProbe: { httpGet: { scheme: string } }; volumeMounts: { name: string; mountPath: string }[] }[] } } } };
        const ct = sts.spec.template.spec.containers[0]!;
        expect(ct.readinessProbe.httpGet.scheme).toBe('HTTPS');
        expect(ct.env).toContainEqual({ name: 'SVC_CERTS_DIR', value: '/etc/svc/certs' });
        expect(ct.volumeMounts).toContainEqual({ name: 'tls', mountPath: '/etc/svc/certs', readOnly: true });
        new StatefulSet(sts as never).validate();
      });
    }
    it('the certificate names every pod, the Services and the extra names; a plain cluster keeps its template', () => {
      const t = cluster([pool('p0', { servers: 2, volumesPerServer: 2 }), pool('p1', { servers: 1, volumesPerServer: 2 })], { tls: modes['cert-manager'] });
      const n = tlsNames(t, 'cluster.local');
      expect(n.dns).toEqual(
        expect.arrayContaining([
          'prod-p0-0.prod-hl.storage.svc.cluster.local',
          'prod-p0-1.prod-hl.storage.svc.cluster.local',
          'prod-p1-0.prod-hl.storage.svc.cluster.local',
          '*.prod-hl.storage.svc.cluster.local',
          'prod-hl',
          'prod.storage.svc',
          'prod-console.storage.svc.cluster.local',
          's3.example.com',
        ]),
      );
      expect(n.ips).toEqual(['203.0.113.10']);
      // TLS on is a launch change (https endpoints on every node at once), off again the same
      const plain = cluster([pool('p0', { servers: 2, volumesPerServer: 2 })]);
      expect(launchConfig(plain, plain.spec.pools, 'cluster.local').hash).not.toBe(launchConfig(t, [t.spec.pools[0]!], 'cluster.local').hash);
      expect(JSON.stringify(buildStatefulSet(plain, plain.spec.pools[0]!, launchConfig(plain, plain.spec.pools, 'cluster.local')))).not.toMatch(/tls|HTTPS|CERTS/);
    });
  });

  it('every rendered object is valid against the Kubernetes schemas', () => {
    for (const p of c.spec.pools) new StatefulSet(buildStatefulSet(c, p, launch) as never).validate();
    for (const s of buildServices(c)) new Service(s as never).validate();
    for (const p of c.spec.pools) new PodDisruptionBudget(buildPdb(c, p, launch) as never).validate();
    new ServiceAccount(buildServiceAccount(c) as never).validate();
    const broken = buildStatefulSet(c, c.spec.pools[0]!, launch) as unknown as { spec: Record<string, unknown> };
    broken.spec['replicas'] = 'four';
    expect(() => new StatefulSet(broken as never).validate()).toThrow();
  });
});
