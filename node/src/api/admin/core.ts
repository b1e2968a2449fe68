/**
 * The admin API's core: one `AdminCall` (already authenticated) in, one
 * `AdminReply` out. The order of every request:
 *
 *   route (method + versioned path) → authorize (the route's permission)
 *   → parameters (the one validator, rules 1-3 and 5) → forward a
 *   pool-scoped mutation to the pool's leader when that is another node
 *   → the service (rules 4 and 6, then the worker) → JSON.
 *
 * The same core runs for a request received over HTTP and for one
 * forwarded by a peer, so a forwarded request is validated and authorized
 * again on the leader, and its answer is relayed byte for byte.
 */
import type { AdminServices } from '../../object/admin/services.ts';
import { SvcError } from '../../util/errors.ts';
import type { Logger } from '../../util/logger.ts';
import { parseQuery, splitTarget } from '../s3/headers.ts';
import type { AdminAuthorizer } from './authorize.ts';
import { type IamAdminDeps, matchIamRoute } from './iam.ts';
import { adminErrorReply } from './errors.ts';
import { ADMIN_NODE_HEADER, type AdminCall, type AdminReply } from './reply.ts';
import { type AdminEndpoint, adminSubpath, type EndpointLayout, matchRoute, parseAdminEndpoint } from './routes.ts';

/** Where pool-scoped mutations run (absent in a single-node deployment: everything is local). */
export interface AdminForwarder {
  /** The node leading `pool`, or undefined when this node leads it. */
  leaderOf(pool: number): string | undefined;
  forward(node: string, call: AdminCall, describe: string, why?: string): Promise<AdminReply>;
  /** The node running the heal sequence a client token names, or undefined when it is this one. */
  healOwner?(token: string): string | undefined;
}

export interface AdminCoreOptions {
  readonly services: AdminServices;
  readonly layout: EndpointLayout;
  readonly authorizer: AdminAuthorizer;
  /** The identity routes (`iam.ts`); absent: they answer as unknown routes. */
  readonly iam?: IamAdminDeps;
  readonly forwarder?: AdminForwarder;
  /** This node's id (`host:port`), sent in `x-svc-admin-node`. */
  readonly selfId: string;
  readonly hostId: string;
  readonly logger: Logger;
}

export interface AdminCore {
  /** `forwardedFrom`: the peer that forwarded this call (it is then never forwarded again). */
  execute(call: AdminCall, forwardedFrom?: string): Promise<AdminReply>;
}

function json(value: unknown): { contentType: string; body: Buffer } {
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(value)) };
}

/** The pool whose leader runs a pool-scoped mutation: the (first) target. */
function scopedPool(ep: AdminEndpoint): number | undefined {
  switch (ep.op) {
    case 'DecommissionStart':
      return ep.pools[0];
    case 'DecommissionCancel':
    case 'DecommissionClear':
      return ep.pool;
    default:
      return undefined;
  }
}

export function createAdminCore(o: AdminCoreOptions): AdminCore {
  const { services: s } = o;

  const run = async (ep: AdminEndpoint, call: AdminCall): Promise<unknown> => {
    switch (ep.op) {
      case 'PoolsList':
        return s.pools.list();
      case 'PoolsStatus':
        return s.pools.status(ep.pool);
      case 'DecommissionStatus':
        return s.pools.decommissionStatus(ep.pool);
      case 'DecommissionStart':
        await s.pools.startDecommission(ep.pools);
        return undefined;
      case 'DecommissionCancel':
        await s.pools.cancelDecommission(ep.pool);
        return undefined;
      case 'DecommissionClear':
        await s.pools.clearDecommission(ep.pool);
        return undefined;
      case 'RebalanceStart':
        return s.rebalance.start();
      case 'RebalanceStatus':
        return s.rebalance.status();
      case 'RebalanceStop':
        await s.rebalance.stop();
        return undefined;
      case 'Heal': {
        const h = ep.heal;
        return s.heal.heal(h.kind === 'start' ? { ...h, clientAddress: call.clientAddress } : h);
      }
      case 'BackgroundHealStatus':
        return s.backgroundHeal.status();
      case 'ReplacementRecovery':
        return s.replacement.status();
      case 'ClusterSnapshot':
        return s.cluster.snapshot();
      case 'RuntimeCapabilities':
        return s.cluster.capabilities();
      case 'ServerInfo':
        return s.cluster.info();
      case 'BucketGovernance':
        return s.governance.buckets(ep.bucket);
      case 'KmsStatus':
        return s.governance.kms();
      case 'GetBucketQuota':
        return s.quota.get(ep.bucket);
      case 'SetBucketQuota':
        await s.quota.set(ep.bucket, ep.quota);
        return undefined;
      case 'NotifyTargets':
        return s.notify.targets();
      case 'MetricsHistory':
        return s.cluster.history(ep.minutes);
      case 'BackgroundJobs':
        return s.cluster.jobs();
      case 'NotifyTargetSet':
        await s.notify.set(ep.type, ep.id, ep.settings);
        return undefined;
      case 'NotifyTargetRemove':
        await s.notify.remove(ep.type, ep.id);
        return undefined;
      case 'RemoteTargetSet':
        return s.replication.setTarget(ep.bucket, ep.body, o.authorizer.resolve?.(call)?.secretKey, ep.update);
      case 'RemoteTargetList':
        return s.replication.listTargets(ep.bucket);
      case 'RemoteTargetRemove':
        await s.replication.removeTarget(ep.bucket, ep.arn);
        return undefined;
      case 'ReplicationStatus':
        return s.replication.status(ep.bucket);
      case 'ReplicationResyncStart':
        return s.replication.resyncStart(ep.bucket, ep.arn);
      case 'ReplicationResyncStatus':
        return s.replication.resyncStatus(ep.bucket);
      case 'ReplicationResyncCancel':
        return s.replication.resyncCancel(ep.bucket, ep.arn);
    }
  };

  return {
    async execute(call, forwardedFrom) {
      const { path, query } = splitTarget(call.url);
      const headers = { [ADMIN_NODE_HEADER]: o.selfId, 'x-amz-request-id': call.requestId };
      try {
        const sub = adminSubpath(path);
        if (sub === undefined) throw new SvcError('XSvcAdminNoSuchRoute', `${path} is not an admin API path`);
        const iamRoute = o.iam === undefined ? undefined : matchIamRoute(call.method, sub);
        if (iamRoute !== undefined) {
          if ('allowed' in iamRoute) throw new SvcError('MethodNotAllowed', `${sub} takes ${iamRoute.allowed.join(' or ')}, not ${call.method}`);
          const who = o.authorizer.resolve?.(call);
          if (who === undefined) throw new SvcError('AccessDenied', 'the credential no longer resolves to an identity');
          const reply = await iamRoute.handler(
            { method: call.method, query: new Map(parseQuery(query)), body: call.body, principal: who.principal, secretKey: who.secretKey, requestId: call.requestId, clientAddress: call.clientAddress },
            o.iam!,
          );
          return { status: reply.status, headers: { ...reply.headers, ...headers }, ...(reply.contentType !== undefined ? { contentType: reply.contentType } : {}), body: reply.body };
        }
        const { route } = matchRoute(call.method, sub);
        if (!o.authorizer.allowed(call, route.action)) {
          throw new SvcError('AccessDenied', `access denied: the credential lacks the ${route.action} permission`);
        }
        const ep = parseAdminEndpoint(call.method, sub, parseQuery(query), call.body, o.layout);
        // A heal status or stop runs on the node that runs the sequence (its token names it).
        const token = ep.op === 'Heal' && ep.heal.kind !== 'start' ? ep.heal.clientToken : undefined;
        const owner = token === undefined ? undefined : o.forwarder?.healOwner?.(token);
        if (owner !== undefined) {
          if (forwardedFrom !== undefined) throw new SvcError('XSvcHealInvalidClientToken', `client token "${token}" names ${owner}, not this node`);
          o.logger.info({ event: 'admin_forward', op: ep.op, node: owner, requestId: call.requestId }, 'forwarding a heal status or stop to the node running the heal');
          return await o.forwarder!.forward(owner, call, `heal sequence ${token}`, 'heal sequences run on the node that started them; bring it back and ask again, or start a new heal');
        }
        const pool = route.poolScoped ? scopedPool(ep) : undefined;
        const leader = pool === undefined ? undefined : o.forwarder?.leaderOf(pool);
        if (pool !== undefined && leader !== undefined) {
          const describe = `pool ${pool} (${o.layout.cmdlines[pool]})`;
          if (forwardedFrom !== undefined) {
            throw new SvcError('InternalError', `${forwardedFrom} forwarded a request for ${describe}, but this node does not lead it (it is led by ${leader}); check that every node runs the same volume arguments`);
          }
          o.logger.info({ event: 'admin_forward', op: ep.op, pool, leader, requestId: call.requestId }, 'forwarding a pool mutation to the pool leader');
          return await o.forwarder!.forward(leader, call, describe);
        }
        const result = await run(ep, call);
        if (ep.route.method !== 'GET' && ep.op !== 'Heal' && ep.op !== 'BackgroundHealStatus') {
          o.logger.info({ event: 'admin_mutation', op: ep.op, principal: call.principal, forwardedFrom, requestId: call.requestId }, 'admin mutation applied');
        }
        // madmin's RemoveRemoteTarget expects 204.
        if (ep.op === 'RemoteTargetRemove') return { status: 204, headers, body: Buffer.alloc(0) };
        return result === undefined ? { status: 200, headers, body: Buffer.alloc(0) } : { status: 200, headers, ...json(result) };
      } catch (err) {
        if (!(err instanceof SvcError) || err.code === 'InternalError') {
          o.logger.error({ event: 'admin_request_failed', url: call.url, requestId: call.requestId, err }, 'admin request failed');
        }
        const reply = adminErrorReply(err, path, call.requestId, o.hostId);
        return { ...reply, headers: { ...reply.headers, ...headers } };
      }
    },
  };
}
