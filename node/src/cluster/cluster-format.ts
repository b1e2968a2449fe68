/**
 * What the nodes of a cluster compare before a fresh format: the digest of
 * the layout-defining settings, served on `/svc/peer/v1/serverInfo`, and the
 * check that every peer answers with the same one. The format quorum itself
 * is `server/start-server.ts` over the `FormatIO` of `cluster-node.ts`, which
 * uses these: a fresh pool is formatted only by the deployment leader and only
 * while every peer agrees; unreachable peers make it wait, never fail.
 */
import { createHash } from 'node:crypto';
import type { PoolLayout } from 'svc-topology';
import type { ClusterPeers } from './peers.ts';
import type { RpcService } from './rpc-server.ts';
import { peerPath } from './rpc-wire.ts';

/** What a node says about itself on `/svc/peer/v1/serverInfo`. */
export interface ServerInfo {
  nodeId: string;
  /** Digest of the layout-defining settings: identical on every node of a cluster. */
  configDigest: string;
}

/**
 * Digest of everything that must be identical on every node (spec, Volume
 * arguments: launch command, endpoint order, pool order, set width and
 * storage-class variables).
 */
export function configDigest(pools: readonly PoolLayout[], storageClass: { standard?: string | undefined; rrs?: string | undefined }): string {
  const doc = {
    pools: pools.map((p) => ({ cmdline: p.cmdline, endpoints: p.endpoints.map((e) => e.raw), setDriveCount: p.setDriveCount })),
    standard: storageClass.standard ?? '',
    rrs: storageClass.rrs ?? '',
  };
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex');
}

export function serverInfoService(info: ServerInfo): RpcService {
  return { serverInfo: { kind: 'unary', handle: async () => info } };
}

/** Asks every peer for its `ServerInfo`; returns why a fresh format must wait, or undefined when all agree. */
export async function peersDisagree(peers: ClusterPeers, digest: string): Promise<string | undefined> {
  const answers = await Promise.all(
    [...peers.peers.entries()].map(async ([hp, p]) => {
      try {
        const info = (await p.rpcCall(peerPath('serverInfo'), undefined, { control: true, timeoutMs: 5_000 })) as ServerInfo;
        return info.configDigest === digest ? undefined : `${hp} runs with different volume arguments or storage-class settings`;
      } catch (err) {
        return `${hp} unreachable (${err instanceof Error ? err.message : String(err)})`;
      }
    }),
  );
  const problems = answers.filter((a): a is string => a !== undefined);
  return problems.length > 0 ? problems.join('; ') : undefined;
}
