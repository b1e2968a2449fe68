/**
 * Composes data movement (decommission and rebalance, `background/movement/`)
 * for one node: the object layer, the records, which pools this node leads
 * (the node of a pool's first endpoint, the same node the admin API forwards
 * that pool's mutations to), the configured concurrency, and the peer
 * notices over internode RPC.
 */
import { movementBroadcaster } from '../cluster/movement-peer.ts';
import type { ClusterNode } from '../cluster/cluster-node.ts';
import { DataMovement } from '../background/movement/data-movement.ts';
import { PoolRecords } from '../object/records/store.ts';
import type { ServerPools } from '../object/server-pools.ts';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import type { Logger } from '../util/logger.ts';

export interface NodeDataMovementOptions {
  readonly config: Config;
  readonly cluster: ClusterNode;
  readonly layer: ServerPools;
  readonly clock: Clock;
  readonly logger: Logger;
}

export function createNodeDataMovement(o: NodeDataMovementOptions): DataMovement {
  const { cluster, config } = o;
  return new DataMovement({
    ctx: { layer: o.layer, records: new PoolRecords(o.layer.sysRecords), clock: o.clock, logger: o.logger, selfId: cluster.selfId },
    pools: cluster.pools.map((p) => ({ id: p.index, cmdline: p.cmdline, ellipsis: p.ellipsis })),
    leads: (i) => {
      const first = cluster.pools[i]?.endpoints[0];
      return first !== undefined && cluster.isLocal(first);
    },
    peers: movementBroadcaster(cluster.peers),
    decommissionBucketConcurrency: config.decommissionBucketConcurrency,
    decommissionEntryConcurrency: config.decommissionEntryConcurrency,
    rebalanceMaxAttempts: config.rebalanceMaxAttempts,
  });
}
