/**
 * Spec validation before anything restarts. Admission (the CRD's schema and
 * CEL rules) already refuses most bad specs; this repeats what CEL cannot
 * know (the server's own topology rules, what the cluster actually runs) and
 * what an old API server might not enforce. A spec with issues makes the
 * cluster `Stalled` and touches nothing. Pure.
 */
import { MAX_STATEFULSET_NAME, RESERVED_ENV_PREFIXES, type SvcCluster } from '../crd/svccluster.ts';
import { clusterDomain } from '../topology/names.ts';
import { checkLaunchConfig, launchConfig, poolExpression, sameExpression, volumeList } from '../topology/volumes.ts';
import type { Reason } from './conditions.ts';
import { parseQuantity } from './quantity.ts';

export interface SpecIssue {
  readonly reason: Reason;
  readonly message: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Pools that run now: their expression is in the applied launch configuration. */
export function launchedPoolNames(c: SvcCluster): Set<string> {
  // the scheme aside: a pool stays launched while TLS is switched on or off
  const applied = volumeList(c.status?.launchConfig?.applied?.volumes);
  return new Set((c.status?.pools ?? []).filter((p) => p.expression !== undefined && applied.some((e) => sameExpression(e, p.expression))).map((p) => p.name));
}

/** The pools the cluster should run once every pending change is done. */
export function targetPools(c: SvcCluster) {
  const removed = new Set((c.status?.pools ?? []).filter((p) => p.state === 'Removed').map((p) => p.name));
  const launched = launchedPoolNames(c);
  return c.spec.pools.filter((p) => !removed.has(p.name) && !(p.decommission === true && !launched.has(p.name)));
}

/** The drive claim template of a pool's existing StatefulSet (immutable in Kubernetes). */
export interface ExistingClaim {
  readonly storage?: string | number | undefined;
  readonly storageClassName?: string | undefined;
  /** The credentials Secret the pool's pods mount. */
  readonly credentialsSecret?: string | undefined;
}

export function validateSpec(c: SvcCluster, operatorDomain: string, claimOf?: (pool: string) => ExistingClaim | undefined): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const name = c.metadata.name;
  const domain = clusterDomain(c, operatorDomain);
  if (name.length > 40 || !DNS_LABEL.test(name)) issues.push({ reason: 'SpecInvalid', message: `cluster name "${name}" must be a DNS label of at most 40 characters` });
  const seen = new Set<string>();
  for (const p of c.spec.pools) {
    if (seen.has(p.name)) issues.push({ reason: 'SpecInvalid', message: `pool name "${p.name}" is used twice` });
    seen.add(p.name);
    if (!DNS_LABEL.test(p.name)) issues.push({ reason: 'SpecInvalid', message: `pool name "${p.name}" is not a DNS label` });
    if (name.length + 1 + p.name.length > MAX_STATEFULSET_NAME) {
      issues.push({ reason: 'SpecInvalid', message: `StatefulSet name "${name}-${p.name}" is longer than ${MAX_STATEFULSET_NAME} characters` });
    }
    if (p.servers * p.volumesPerServer < 2) issues.push({ reason: 'SetLayoutUnsupported', message: `pool "${p.name}" has ${p.servers * p.volumesPerServer} drive; a pool needs at least two` });
    const claim = claimOf?.(p.name);
    const current = claim?.storage;
    if (current !== undefined && parseQuantity(p.volumeClaimTemplate.resources.requests.storage) < parseQuantity(current)) {
      issues.push({ reason: 'PvcShrinkUnsupported', message: `pool "${p.name}": drive size ${p.volumeClaimTemplate.resources.requests.storage} is smaller than the existing ${current}; volumes cannot shrink` });
    }
    if (claim?.credentialsSecret !== undefined && claim.credentialsSecret !== c.spec.credentials.secretName) {
      issues.push({
        reason: 'SpecInvalid',
        message: `credentials.secretName is ${c.spec.credentials.secretName} but pool "${p.name}" runs with ${claim.credentialsSecret}: the name is immutable, rotate the root credential by editing the Secret's keys`,
      });
    }
    // CEL refuses this at admission; an API server without CEL would let it through and then refuse every StatefulSet update.
    if (claim && (claim.storageClassName ?? '') !== (p.volumeClaimTemplate.storageClassName ?? '')) {
      issues.push({
        reason: 'SpecInvalid',
        message: `pool "${p.name}": storageClassName ${p.volumeClaimTemplate.storageClassName ?? '(default)'} differs from the existing ${claim.storageClassName ?? '(default)'}; a StatefulSet's volume claim templates are immutable`,
      });
    }
  }
  for (const e of c.spec.env ?? []) {
    if (RESERVED_ENV_PREFIXES.some((prefix) => e.name.startsWith(prefix))) {
      issues.push({ reason: 'SpecInvalid', message: `env ${e.name} is owned by the operator (launch settings must be identical on every node)` });
    }
  }
  if (!c.spec.pools.some((p) => p.decommission !== true)) issues.push({ reason: 'LastActivePool', message: 'every pool is marked decommission: true; at least one must stay active' });

  // What the cluster runs must stay what the spec describes.
  const statusPools = c.status?.pools ?? [];
  const launched = launchedPoolNames(c);
  const specByName = new Map(c.spec.pools.map((p) => [p.name, p]));
  for (const sp of statusPools) {
    const p = specByName.get(sp.name);
    if (!p) {
      // A pool not launched yet counts once pools/list listed it (its index is recorded): the server formed with it.
      const listed = sp.state !== 'Removed' && sp.index !== undefined;
      if (launched.has(sp.name) || listed || sp.state === 'Draining' || sp.state === 'Drained' || sp.state === 'Detaching') {
        issues.push({
          reason: 'PoolRemovedWithoutDecommission',
          message: `pool "${sp.name}" was removed from spec.pools while it holds data; restore it and set decommission: true to drain it first`,
        });
      }
      continue;
    }
    if (sp.state === 'Removed' && p.decommission !== true) {
      issues.push({ reason: 'SpecInvalid', message: `pool "${sp.name}" was removed; a removed pool's name is not reused: delete the entry or choose a new name` });
    }
    if (launched.has(sp.name) && sp.expression !== undefined && !sameExpression(sp.expression, poolExpression(c, p, domain))) {
      issues.push({
        reason: 'SpecInvalid',
        message: `pool "${sp.name}" runs as ${sp.expression} but the spec now renders ${poolExpression(c, p, domain)}: servers, volumesPerServer, clusterDomain and names of a running pool cannot change`,
      });
    }
  }
  // The set width is persisted in every drive's format: once the cluster ran with one, it stays.
  const applied = c.status?.launchConfig?.applied;
  if (applied && (applied.setDriveCount ?? null) !== (c.spec.erasure?.setDriveCount ?? null)) {
    issues.push({
      reason: 'SpecInvalid',
      message: `erasure.setDriveCount is ${c.spec.erasure?.setDriveCount ?? '(automatic)'} but the cluster runs with ${applied.setDriveCount ?? '(automatic)'}: the set width is written in every drive's format and cannot change`,
    });
  }
  // Order: pools that run keep their relative order.
  const runningOrder = volumeList(c.status?.launchConfig?.applied?.volumes);
  const specOrder = c.spec.pools.map((p) => poolExpression(c, p, domain)).filter((e) => runningOrder.includes(e));
  const keptOrder = runningOrder.filter((e) => specOrder.includes(e));
  if (specOrder.join(' ') !== keptOrder.join(' ')) issues.push({ reason: 'SpecInvalid', message: 'spec.pools changed the order of running pools; pools keep their order and new pools go at the end' });

  // The server's own start-up rules, on what every node will run next.
  const target = targetPools(c);
  if (target.length > 0 && issues.length === 0) {
    const check = checkLaunchConfig(launchConfig(c, target, domain));
    if ('issue' in check) issues.push(check.issue);
  }
  return issues;
}
