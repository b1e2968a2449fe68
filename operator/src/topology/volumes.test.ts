/**
 * Volume expressions: rendered by the operator, parsed back by the server's
 * own ellipsis and layout code (round trip), and the server's rules applied
 * to what the operator would launch.
 */
import fc from 'fast-check';
import { buildPoolLayouts, expandEllipsis } from 'svc-topology';
import { describe, expect, it } from 'vitest';
import { cluster, pool } from '../../test/fixtures.ts';
import { podHost } from './names.ts';
import { checkLaunchConfig, launchConfig, poolExpression, renderVolumes } from './volumes.ts';

describe('volume expressions', () => {
  it('renders host and drive ranges with an explicit port, literal for single values', () => {
    const c = cluster([pool('p0', { servers: 4, volumesPerServer: 4 })]);
    expect(poolExpression(c, pool('p0', { servers: 4, volumesPerServer: 4 }), 'cluster.local')).toBe('http://prod-p0-{0...3}.prod-hl.storage.svc.cluster.local:9000/data/d{0...3}');
    expect(poolExpression(c, pool('p1', { servers: 1, volumesPerServer: 4 }), 'cluster.local')).toBe('http://prod-p1-0.prod-hl.storage.svc.cluster.local:9000/data/d{0...3}');
    expect(poolExpression(c, pool('p2', { servers: 4, volumesPerServer: 1 }), 'k8s.example')).toBe('http://prod-p2-{0...3}.prod-hl.storage.svc.k8s.example:9000/data/d0');
  });

  it('round trip: the server expands every rendered pool to exactly servers x volumes endpoints, pod hosts and mount paths', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32 }), fc.integer({ min: 1, max: 16 }), (servers, volumes) => {
        fc.pre(servers * volumes >= 2);
        const c = cluster([pool('p0', { servers, volumesPerServer: volumes })]);
        const expr = poolExpression(c, c.spec.pools[0]!, 'cluster.local');
        const endpoints = expandEllipsis(expr);
        expect(endpoints).toHaveLength(servers * volumes);
        const want = new Set<string>();
        for (let s = 0; s < servers; s++) for (let d = 0; d < volumes; d++) want.add(`http://${podHost(c, 'p0', s, 'cluster.local')}:9000/data/d${d}`);
        expect(new Set(endpoints)).toEqual(want);
      }),
      { numRuns: 200 },
    );
  });

  it('the server lays out every rendered multi-pool configuration it can, in order, with the expressions as pool identities', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ servers: fc.integer({ min: 1, max: 16 }), volumes: fc.integer({ min: 1, max: 8 }) }), { minLength: 1, maxLength: 4 }),
        (shapes) => {
          const pools = shapes.map((s, i) => pool(`p${i}`, { servers: s.servers, volumesPerServer: s.volumes }));
          fc.pre(pools.every((p) => p.servers * p.volumesPerServer >= 2));
          const c = cluster(pools);
          const volumes = renderVolumes(c, pools, 'cluster.local');
          const check = checkLaunchConfig(launchConfig(c, pools, 'cluster.local'));
          if ('issue' in check) {
            // Refused exactly when the server refuses it.
            expect(() => buildPoolLayouts(volumes.split(' '), { storageClass: { standard: { kind: 'auto' }, rrs: { kind: 'auto' } }, cwd: '/' })).toThrow();
          } else {
            expect(check.layouts.map((l) => l.cmdline)).toEqual(volumes.split(' '));
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the launch hash moves with launch settings only', () => {
    const c = cluster([pool('p0')]);
    const base = launchConfig(c, c.spec.pools, 'cluster.local');
    expect(launchConfig(c, c.spec.pools, 'cluster.local').hash).toBe(base.hash);
    expect(launchConfig(cluster([pool('p0')], { erasure: { standardParity: 2 } }), c.spec.pools, 'cluster.local').hash).not.toBe(base.hash);
    expect(launchConfig(cluster([pool('p0')], { image: 'other:2' }), c.spec.pools, 'cluster.local').hash).not.toBe(base.hash);
    expect(launchConfig(cluster([pool('p0')], { image: 'other:2', restartPolicy: { imageChange: 'Rolling' } }), c.spec.pools, 'cluster.local').hash).toBe(
      launchConfig(cluster([pool('p0')], { restartPolicy: { imageChange: 'Rolling' } }), c.spec.pools, 'cluster.local').hash,
    );
    expect(launchConfig(cluster([pool('p0', { resources: { requests: { cpu: '1' } } })]), c.spec.pools, 'cluster.local').hash).toBe(base.hash);
  });
});
