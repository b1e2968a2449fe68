/**
 * `createClusterNode` in one process: three nodes on 127.0.0.1…3 (one port),
 * configured from the same volume argument through `loadConfig`, exactly as
 * `svc server` would be. Checks locality from the bind address, the leader,
 * and the bucket metadata reload signal between peers.
 */
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ClusterNode, createClusterNode } from '../src/cluster/cluster-node.ts';
import { settledEventual } from '../src/util/eventual.ts';
import { systemClock } from '../src/util/clock.ts';
import { loadConfig } from '../src/util/config.ts';
import { silentLogger } from '../src/util/logger.ts';

const base = await mkdtemp(join(tmpdir(), 'svc-cluster-node-'));
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('createClusterNode', () => {
  it('decides locality from the bind address and relays bucket metadata signals', async () => {
    const port = await freePort();
    for (const d of [1, 2]) await mkdir(join(base, `d${d}`), { recursive: true });
    const volume = `http://127.0.0.{1...3}:${port}${base}/d{1...2}`;
    const nodes: ClusterNode[] = [];
    const servers: Server[] = [];
    const seen: string[][] = [[], [], []];
    try {
      for (let k = 1; k <= 3; k++) {
        const { config } = loadConfig({
          args: [volume],
          env: { SVC_ADDRESS: `127.0.0.${k}:${port}`, SVC_ACCESS_KEY: 'ak', SVC_SECRET_KEY: 'sk-cluster-node' },
          cwd: base,
          readFile: () => '',
        });
        const node = await createClusterNode({ config, clock: systemClock, logger: silentLogger, bucketMeta: settledEventual({ forgetBucket: (b: string) => void seen[k - 1]!.push(b) }) });
        const server = createServer(node.handle);
        server.listen(port, `127.0.0.${k}`);
        await once(server, 'listening');
        nodes.push(node);
        servers.push(server);
      }
      const [n1, n2, n3] = nodes as [ClusterNode, ClusterNode, ClusterNode];
      expect(n1.selfId).toBe(`127.0.0.1:${port}`);
      expect(n2.selfId).toBe(`127.0.0.2:${port}`);
      expect(n1.leader).toBe(true);
      expect(n2.leader).toBe(false);
      expect(n2.multiNode).toBe(true);
      expect(n2.pools[0]!.endpoints.filter((ep) => n2.isLocal(ep)).map((ep) => ep.raw)).toEqual([
        `http://127.0.0.2:${port}${base}/d1`,
        `http://127.0.0.2:${port}${base}/d2`,
      ]);
      expect([...n3.localDrives.keys()]).toEqual([`${base}/d1`, `${base}/d2`]);
      expect(n1.locker.quorum).toEqual({ read: 2, write: 2 });

      await n1.notifyBucketMetaChanged('photos');
      expect(seen).toEqual([[], ['photos'], ['photos']]);

      // An unreachable peer does not fail the signal.
      servers[2]!.closeAllConnections();
      await new Promise<void>((r) => servers[2]!.close(() => r()));
      await n2.notifyBucketMetaChanged('logs');
      expect(seen).toEqual([['logs'], ['photos'], ['photos']]);
    } finally {
      for (const n of nodes) await n.close();
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
    }
  });
});
