/**
 * Builds a target from its settings (`util/notify-config.ts`): one module
 * per protocol, each over its ecosystem's client library. Clients connect
 * on first use and reconnect after a failure, so building never waits on
 * the network.
 */
import type { ClientTrust } from '../../tls/trust.ts';
import type { TargetSpec } from '../../util/notify-config.ts';
import { SvcError } from '../../util/errors.ts';
import type { Target } from './target.ts';
import { WebhookTarget } from './webhook.ts';

export interface TargetDeps {
  /** What https webhooks (and TLS brokers) are verified against: the node's CA set plus the system roots. */
  trust: ClientTrust;
}

export async function createTarget(spec: TargetSpec, deps: TargetDeps): Promise<Target> {
  const s = spec.settings;
  switch (spec.type) {
    case 'webhook':
      return new WebhookTarget({ id: spec.id, endpoint: s.endpoint!, ...(s.auth_token ? { authToken: s.auth_token } : {}), trust: deps.trust });
    default:
      throw new SvcError('XSvcNotifyTargetInvalid', `${spec.type} targets are not available in this build`);
  }
}
