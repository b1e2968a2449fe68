/**
 * The data-movement notice between nodes (peer RPC `movementNotice`, the
 * authenticated internode channel): "the decommission or rebalance records
 * changed, apply them now", or "start / stop your part of rebalance <id>".
 * A node answers once it applied the notice, so the sender knows which
 * nodes hold the new admission fence (and names the others).
 *
 * The records stay the source of truth: a node that misses a notice applies
 * the same records at its next poll.
 */
import { SvcError } from '../util/errors.ts';
import type { ClusterPeers } from './peers.ts';
import type { RpcService } from './rpc-server.ts';

export const MOVEMENT_NOTICE_METHOD = 'movementNotice';

/** Structurally `background/movement/context.ts`'s `MovementNotice` (the cluster layer does not import the object layer). */
export type MovementNoticeWire = { kind: 'state' } | { kind: 'rebalance-start'; id: string } | { kind: 'rebalance-stop'; id: string };

export function decodeMovementNotice(args: unknown): MovementNoticeWire {
  const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  if (a['kind'] === 'state') return { kind: 'state' };
  if ((a['kind'] === 'rebalance-start' || a['kind'] === 'rebalance-stop') && typeof a['id'] === 'string' && a['id'] !== '') return { kind: a['kind'], id: a['id'] };
  throw new SvcError('InvalidRequest', 'movement notice: unknown kind or missing id');
}

/**
 * The method this node serves. `handler()` returns the node's data movement
 * once its object layer is up; before that a notice is refused (the sender
 * counts this node as not acknowledging; it applies the records at start-up).
 */
export function movementPeerService(handler: () => ((n: MovementNoticeWire) => Promise<void>) | undefined): RpcService {
  return {
    [MOVEMENT_NOTICE_METHOD]: {
      kind: 'unary',
      handle: async (args) => {
        const h = handler();
        if (h === undefined) throw new SvcError('ServiceUnavailable', 'this node has not started its object layer yet');
        await h(decodeMovementNotice(args));
        return { ok: true };
      },
    },
  };
}

/** The sending side: every peer at once; a failure per peer, never a throw. */
export function movementBroadcaster(peers: ClusterPeers): { broadcast(n: MovementNoticeWire, timeoutMs: number): Promise<{ peer: string; error?: string }[]> } {
  return {
    async broadcast(n, timeoutMs) {
      const rs = await peers.broadcast(MOVEMENT_NOTICE_METHOD, n, timeoutMs);
      return rs.map((r) => (r.error === undefined ? { peer: r.peer } : { peer: r.peer, error: r.error.message }));
    },
  };
}
