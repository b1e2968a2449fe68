/**
 * `spec.iam`: users and policies declared from Secrets and ConfigMaps
 * (GitOps-friendly: the documents live in the repository as ConfigMaps,
 * the secrets in Secrets), kept in the cluster through the admin API's
 * identity routes.
 *
 * - Policies come first (a user's policies must exist), then users (their
 *   secret set, their policies replaced by the declared list), then what the
 *   operator created earlier and no longer finds declared is removed (users,
 *   then policies). Users and policies made by hand (`svc admin`, `mc`) are
 *   never touched.
 * - Applied when the declaration changes (an HMAC of it, keyed with the root
 *   secret so the status reveals nothing about the users' secrets) and again
 *   every `RESYNC_MS`, so an identity changed by hand comes back.
 * - A missing Secret, ConfigMap or key stops the sync with
 *   `IdentitySynced=False` (`IdentitySourceMissing`) and changes nothing;
 *   an admin refusal (a malformed policy document, a canned policy name)
 *   is `IdentityApplyFailed` with the server's message.
 */
import { createHmac } from 'node:crypto';
import type { IdentityApi } from '../admin/iam-client.ts';
import type { SvcClusterSpec, SvcClusterStatus } from '../crd/svccluster.ts';

/** Re-applied this often even when nothing changed (drift made by hand comes back). */
export const IDENTITY_RESYNC_MS = 10 * 60_000;

export interface DesiredIdentity {
  readonly policies: readonly { readonly name: string; readonly document: string }[];
  readonly users: readonly { readonly accessKey: string; readonly secretKey: string; readonly policies: readonly string[] }[];
}

export interface IdentitySources {
  configMap(name: string): Promise<Record<string, string> | undefined>;
  secret(name: string): Promise<Record<string, string> | undefined>;
}

/** What `spec.iam` declares, read from its Secrets and ConfigMaps; a problem names what is missing. */
export async function desiredIdentity(spec: SvcClusterSpec, src: IdentitySources): Promise<{ desired: DesiredIdentity } | { problem: string }> {
  const policies: { name: string; document: string }[] = [];
  for (const p of spec.iam?.policies ?? []) {
    const cm = await src.configMap(p.configMap.name);
    if (cm === undefined) return { problem: `ConfigMap ${p.configMap.name} (policy ${p.name}) not found` };
    const doc = cm[p.configMap.key];
    if (doc === undefined || doc.trim() === '') return { problem: `ConfigMap ${p.configMap.name} has no key ${p.configMap.key} (policy ${p.name})` };
    policies.push({ name: p.name, document: doc });
  }
  const users: { accessKey: string; secretKey: string; policies: string[] }[] = [];
  for (const u of spec.iam?.users ?? []) {
    const s = await src.secret(u.secretName);
    if (s === undefined) return { problem: `Secret ${u.secretName} (a user) not found` };
    if (!s['accessKey'] || !s['secretKey']) return { problem: `Secret ${u.secretName} needs the keys accessKey and secretKey` };
    users.push({ accessKey: s['accessKey'], secretKey: s['secretKey'], policies: [...(u.policies ?? [])] });
  }
  const dup = users.map((u) => u.accessKey).find((a, i, all) => all.indexOf(a) !== i);
  if (dup !== undefined) return { problem: `two Secrets declare the user ${dup}` };
  return { desired: { policies, users } };
}

/** HMAC of the declaration keyed with the root secret: changes with any secret, reveals none. */
export function identityHash(d: DesiredIdentity, rootSecret: string): string {
  return createHmac('sha256', rootSecret).update(JSON.stringify(d)).digest('hex');
}

export type IdentityStatus = NonNullable<SvcClusterStatus['identity']>;

/** True when the declaration must be applied now. */
export function identityDue(prev: IdentityStatus | undefined, hash: string, now: Date): boolean {
  if (prev?.appliedHash !== hash || prev.appliedAt === undefined) return true;
  return now.getTime() - Date.parse(prev.appliedAt) >= IDENTITY_RESYNC_MS;
}

/** Applies the declaration; returns the new status (what the operator now manages). Throws the admin error that stopped it. */
export async function applyIdentity(api: IdentityApi, d: DesiredIdentity, prev: IdentityStatus | undefined, hash: string, now: Date): Promise<IdentityStatus> {
  for (const p of d.policies) await api.putPolicy(p.name, p.document);
  for (const u of d.users) {
    await api.addUser(u.accessKey, u.secretKey);
    await api.setUserPolicies(u.accessKey, u.policies);
  }
  const users = d.users.map((u) => u.accessKey);
  const policies = d.policies.map((p) => p.name);
  for (const gone of (prev?.users ?? []).filter((u) => !users.includes(u))) {
    await api.removeUser(gone).catch((err: unknown) => {
      if (!(err instanceof Error && 'status' in err && (err as { status: number }).status === 404)) throw err;
    });
  }
  for (const gone of (prev?.policies ?? []).filter((p) => !policies.includes(p))) {
    await api.removePolicy(gone).catch((err: unknown) => {
      if (!(err instanceof Error && 'status' in err && (err as { status: number }).status === 404)) throw err;
    });
  }
  return { appliedHash: hash, appliedAt: now.toISOString(), users: users.sort(), policies: policies.sort() };
}
