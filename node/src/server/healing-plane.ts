/**
 * Healing on a node, composed: `registerHealing` over the object layer (its
 * jobs on the node's supervisor), with
 * the cluster's answers to "which node am I" (heal tokens, usage records)
 * and "which sets do I scan" (each set is scanned by the first of its
 * drives' nodes that is online, so exactly one node scans it while any
 * runs). The admin plane's worker ports are on the returned `Healing`.
 */
import type { ClusterNode } from '../cluster/cluster-node.ts';
import { type Healing, registerHealing } from '../background/healing.ts';
import type { Supervisor } from '../background/supervisor.ts';
import type { ServerPools } from '../object/server-pools.ts';
import { endpointHostPort } from 'svc-topology';
import type { Clock } from '../util/clock.ts';
import type { Config } from '../util/config.ts';
import type { Logger } from '../util/logger.ts';

export function registerNodeHealing(o: {
  cluster: ClusterNode;
  layer: ServerPools;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The node's supervisor: healing's jobs run from its next start. */
  jobs: Supervisor;
}): Healing {
  const { cluster, layer } = o;
  const nodes = cluster.peers.nodes;
  const nodeIndex = Math.max(0, nodes.indexOf(cluster.selfId));
  const byRaw = new Map(cluster.pools.flatMap((p) => p.endpoints).map((ep) => [ep.raw, ep] as const));
  const nodeOf = (endpoint: string): string => {
    const ep = byRaw.get(endpoint);
    return (ep && endpointHostPort(ep)) ?? cluster.selfId;
  };
  const online = (node: string) => node === cluster.selfId || (cluster.peers.peers.get(node)?.isOnline() ?? false);
  const scans = (pool: number, set: number): boolean => {
    const drives = layer.pools.list[pool]?.sets[set]?.drives ?? [];
    const first = drives.map((d) => nodeOf(d.endpoint)).find(online);
    return first === cluster.selfId;
  };
  return registerHealing(o.jobs, { layer, clock: o.clock, logger: o.logger, config: o.config.heal, node: cluster.selfId, nodeIndex, scans });
}
