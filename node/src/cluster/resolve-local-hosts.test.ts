/** Locality with a specific bind address: endpoint names that resolve to exactly that address are this node. */
import { describe, expect, it } from 'vitest';
import { buildPoolLayouts, parseParity } from 'svc-topology';
import { silentLogger } from '../util/logger.ts';
import { resolveLocalHosts } from './cluster-node.ts';

const layouts = (arg: string) =>
  buildPoolLayouts([arg], { storageClass: { standard: parseParity('S', undefined), rrs: parseParity('R', undefined) }, cwd: '/' });

describe('resolveLocalHosts', () => {
  it('a name resolving to the bind address is local; the same name is remote for another bind address', async () => {
    const pools = layouts('http://localhost:9000/mnt/d{1...4}');
    expect([...(await resolveLocalHosts(pools, '127.0.0.1', 9000, silentLogger))].sort()).toEqual(['127.0.0.1', 'localhost']);
    expect([...(await resolveLocalHosts(pools, '127.0.0.2', 9000, silentLogger))]).toEqual(['127.0.0.2']);
  });

  it('IP endpoints are compared, never looked up', async () => {
    const pools = layouts('http://127.0.0.{1...2}:9000/mnt/d{1...2}');
    expect([...(await resolveLocalHosts(pools, '127.0.0.2', 9000, silentLogger))]).toEqual(['127.0.0.2']);
  });
});
