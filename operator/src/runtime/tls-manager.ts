/**
 * `spec.tls` at reconcile time, before the planner runs (docs/tls.md,
 * "Kubernetes operator"):
 *
 * - `secretName`: the user's Secret must exist with `tls.crt` and `tls.key`;
 * - `certManager`: the operator applies the Certificate `<cluster>-tls`
 *   (`buildCertificate`) and waits for cert-manager's Secret;
 * - `generated`: the operator keeps the CA Secret `<cluster>-tls-ca` and
 *   (re)issues `<cluster>-tls` when it is missing, names differ (a pool was
 *   added) or its end is within `renewBefore`.
 *
 * The result feeds the planner (`TlsReady`, requeue at the renewal time)
 * and the admin client: the CA the operator verifies its pods with
 * (`ca.crt`, else the served certificate itself).
 */
import type { SvcCluster } from '../crd/svccluster.ts';
import type { TlsObs } from '../reconcile/observation.ts';
import { buildCertificate, type KubeObject, ownerReference, tlsNames } from '../reconcile/render.ts';
import { certificateName, clusterLabels, tlsCaSecretName, tlsSecretName } from '../topology/names.ts';
import { createCa, generatedTiming, issueCertificate, renewalReason, renewalTime } from '../tls/generated.ts';

/** The Kubernetes calls this needs (the operator's `Kube` has them). */
export interface TlsKube {
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  apply(obj: KubeObject): Promise<void>;
}

export interface TlsOutcome {
  readonly obs: TlsObs | undefined;
  readonly events: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
}

function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown };
  return typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
}

function secret(c: SvcCluster, name: string, type: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: c.metadata.namespace ?? 'default', labels: clusterLabels(c.metadata.name), ownerReferences: [ownerReference(c)] },
    type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/** The served pair is there: what the operator trusts for its admin calls. */
function served(data: Record<string, string>, message: string, renewAtMs?: number): TlsObs {
  return { ready: true, reason: 'AsExpected', message, ca: data['ca.crt'] || data['tls.crt']!, ...(renewAtMs !== undefined ? { renewAtMs } : {}) };
}

export async function reconcileTls(c: SvcCluster, kube: TlsKube, domain: string, now: Date): Promise<TlsOutcome> {
  const tls = c.spec.tls;
  if (!tls) return { obs: undefined, events: [] };
  const ns = c.metadata.namespace ?? 'default';
  const name = tlsSecretName(c);
  const events: TlsOutcome['events'] = [];

  if (tls.secretName !== undefined) {
    const data = await kube.readSecret(ns, name);
    if (!data) return { obs: { ready: false, reason: 'TlsSecretMissing', message: `Secret ${ns}/${name} (spec.tls.secretName) not found` }, events };
    if (!data['tls.crt'] || !data['tls.key']) return { obs: { ready: false, reason: 'TlsSecretMissing', message: `Secret ${ns}/${name} needs the keys tls.crt and tls.key` }, events };
    return { obs: served(data, `serving the certificate of Secret ${name}`), events };
  }

  if (tls.certManager !== undefined) {
    try {
      await kube.apply(buildCertificate(c, domain));
    } catch (err) {
      const code = statusOf(err);
      if (code === 404) {
        return { obs: { ready: false, reason: 'CertManagerCrdMissing', message: 'cert-manager is not installed (no Certificate kind in cert-manager.io/v1): install it, or use spec.tls.secretName or spec.tls.generated' }, events };
      }
      throw err;
    }
    const data = await kube.readSecret(ns, name);
    if (!data?.['tls.crt'] || !data['tls.key']) {
      return { obs: { ready: false, reason: 'CertificateNotReady', message: `waiting for cert-manager to issue Certificate ${certificateName(c.metadata.name)} into Secret ${name}` }, events };
    }
    return { obs: served(data, `serving the certificate cert-manager issued into Secret ${name}`), events };
  }

  // generated
  const { lifetimeMs, renewBeforeMs } = generatedTiming(tls.generated);
  const caName = tlsCaSecretName(c.metadata.name);
  let caData = await kube.readSecret(ns, caName);
  if (!caData?.['ca.crt'] || !caData['ca.key']) {
    const ca = await createCa(c.metadata.name, now);
    await kube.apply(secret(c, caName, 'Opaque', { 'ca.crt': ca.cert, 'ca.key': ca.key }));
    caData = { 'ca.crt': ca.cert, 'ca.key': ca.key };
    events.push({ type: 'Normal', reason: 'CertificateAuthorityCreated', message: `created the cluster CA in Secret ${caName}` });
  }
  const ca = { cert: caData['ca.crt']!, key: caData['ca.key']! };
  const names = tlsNames(c, domain);
  const current = await kube.readSecret(ns, name);
  const why = renewalReason(current?.['tls.crt'], current?.['tls.key'], ca, names, now, renewBeforeMs);
  if (why === undefined) return { obs: served(current!, `serving the operator-issued certificate in Secret ${name}`, renewalTime(current!['tls.crt']!, renewBeforeMs)), events };
  const issued = await issueCertificate(ca, c.metadata.name, names, now, lifetimeMs);
  const data = { 'tls.crt': issued.cert, 'tls.key': issued.key, 'ca.crt': ca.cert };
  await kube.apply(secret(c, name, 'kubernetes.io/tls', data));
  events.push({
    type: 'Normal',
    reason: current?.['tls.crt'] ? 'CertificateRenewed' : 'CertificateIssued',
    message: `${current?.['tls.crt'] ? 'renewed' : 'issued'} the cluster certificate in Secret ${name} (${why}); pods pick the new files up without a restart`,
  });
  return { obs: served(data, `serving the operator-issued certificate in Secret ${name}`, renewalTime(issued.cert, renewBeforeMs)), events };
}
