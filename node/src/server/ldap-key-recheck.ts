/**
 * The periodic re-check of LDAP users' access keys (`ldap-key-recheck`):
 * every `everyMs` (`SVC_LDAP_KEY_RECHECK_INTERVAL`, default 5 min) each
 * distinct user that owns an access key is resolved again with the lookup
 * bind (`lookupLdapUser`, the same search as sign-in and key creation). A
 * user the search no longer finds has its enabled keys disabled, never
 * removed, with the reason kept on the key (`svc admin accesskey info`)
 * and logged; a user found has its keys' groups replaced by the ones found
 * now. Nothing is written when nothing changed.
 *
 * A directory that cannot be asked (unreachable, a refused lookup bind, a
 * search error) changes nothing: the round fails, is logged, and the next
 * one tries again, so an LDAP outage never disables keys. With no LDAP
 * provider in force the round does nothing (the keys do not sign then
 * anyway, `iam/resolve.ts`).
 *
 * Every node runs it; the change is one identity-store mutation, applied to
 * the current document under its lock, so a user gone is disabled once
 * however many nodes find it.
 */
import type { LdapUser } from '../api/sts/providers.ts';
import { applyLdapOwnerChecks, type LdapConfig, type LdapOwnerCheck } from '../iam/state.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import type { IamService } from './iam-service.ts';

/** `SVC_LDAP_KEY_RECHECK_INTERVAL`'s default. */
export const LDAP_KEY_RECHECK_MS = 5 * 60_000;

export interface LdapKeyRecheckOptions {
  readonly iam: Pick<IamService, 'doc' | 'open' | 'mutate' | 'loaded'>;
  readonly lookup: (cfg: LdapConfig, bindPassword: string, user: string) => Promise<LdapUser>;
  readonly everyMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** One round: resolve each key owner again, then write what changed (if anything). */
export async function recheckLdapKeys(o: Omit<LdapKeyRecheckOptions, 'everyMs'>, signal?: AbortSignal): Promise<{ disabled: string[]; regrouped: string[] }> {
  const none = { disabled: [], regrouped: [] };
  if (!o.iam.loaded) return none;
  const doc = o.iam.doc();
  const cfg = doc.idp.ldap;
  if (cfg === undefined || cfg.disabled === true) return none;
  const owners = new Map<string, string>();
  for (const k of Object.values(doc.accessKeys)) if (k.ldap !== undefined) owners.set(k.ldap.dn.toLowerCase(), k.ldap.dn);
  if (owners.size === 0) return none;
  const bindPassword = o.iam.open(cfg.lookupBindPassword);
  const checks = new Map<string, LdapOwnerCheck>();
  for (const [key, dn] of owners) {
    if (signal?.aborted) return none;
    try {
      const u = await o.lookup(cfg, bindPassword, dn);
      checks.set(key, { groups: u.groups });
    } catch (err) {
      // only "not found" disables; any other failure ends the round with nothing written
      if (!(err instanceof SvcError && err.code === 'XSvcAdminNoSuchUser')) throw err;
      checks.set(key, { gone: `the LDAP user ${dn} was no longer found by the user search on ${new Date(o.clock.now()).toISOString()}` });
    }
  }
  // nothing to write: no mutation (each would be a new generation on every node, every round)
  if (Object.values(applyLdapOwnerChecks(structuredClone(doc), { now: o.clock.now(), rootAccessKey: '' }, checks)).every((l) => l.length === 0)) return none;
  const changed = await o.iam.mutate('accesskey.ldap-recheck', { accessKey: 'ldap-key-recheck' }, { users: owners.size }, (d, c) => applyLdapOwnerChecks(d, c, checks));
  const after = o.iam.doc();
  for (const ak of changed.disabled) {
    const k = after.accessKeys[ak];
    o.logger.warn({ event: 'ldap_access_key_disabled', accessKeyId: ak, dn: k?.ldap?.dn, reason: k?.disabledReason }, `access key ${ak} disabled: ${k?.disabledReason ?? 'its LDAP user is gone'}`);
  }
  if (changed.regrouped.length > 0) o.logger.info({ event: 'ldap_access_key_groups', accessKeyIds: changed.regrouped }, 'LDAP access keys: group membership refreshed');
  return changed;
}

/** The re-check under the Worker contract: a periodic worker, its first round one period after it starts. */
export function ldapKeyRecheckWorker(o: LdapKeyRecheckOptions): Worker<PeriodicProgress> {
  return periodicWorker({ name: 'ldap-key-recheck', everyMs: o.everyMs, atStart: false, tick: (signal) => recheckLdapKeys(o, signal), clock: o.clock, logger: o.logger });
}
