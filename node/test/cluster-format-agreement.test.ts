/**
 * Format quorum on a fresh 4-node cluster: a node never formats while its
 * peers disagree on the layout. Node 4 runs with another storage class; the
 * cluster stays unformatted and degraded until node 4 is restarted with the
 * same settings, and then formats exactly once (one deployment id).
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';

const supported = canUseMountNamespaces();

describe.skipIf(!supported)('4-node cluster: fresh format needs every peer to agree (real processes)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await TestCluster.create({ nodes: 4, drivesPerNode: 2 });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  const formatFiles = () => [1, 2, 3, 4].flatMap((k) => [1, 2].map((d) => join(cluster.nodeDir(k), `d${d}`, '.svc.sys', 'format.json')));
  const exists = (p: string) =>
    access(p).then(
      () => true,
      () => false,
    );

  it('stays unformatted while one node disagrees, formats once when it agrees', async () => {
    await Promise.all([cluster.start(1), cluster.start(2), cluster.start(3), cluster.start(4, { SVC_STORAGE_CLASS_STANDARD: 'EC:3' })]);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitLive(k)));
    await new Promise((r) => setTimeout(r, 4_000));
    for (const k of [1, 2, 3, 4]) expect((await cluster.get(k, '/health/ready')).status).toBe(503);
    for (const f of formatFiles()) expect(await exists(f)).toBe(false);
    expect(await cluster.logs(1)).toMatch(/"event":"format_waiting_for_peers"/);

    await cluster.stop(4);
    await cluster.start(4);
    await Promise.all([1, 2, 3, 4].map((k) => cluster.waitReady(k, 40_000)));
    const ids = new Set<string>();
    for (const f of formatFiles()) ids.add((JSON.parse(await readFile(f, 'utf8')) as { id: string }).id);
    expect(ids.size).toBe(1);
  }, 90_000);
});
