/**
 * The built-in kinds the in-process API server serves, with the rules a real
 * API server applies to them where the operator, Helm or kubectl could get
 * them wrong:
 *
 * - time fields: `metav1.Time` (RFC 3339; stored at second precision) and
 *   `metav1.MicroTime` (exactly six fractional digits: a Lease sent with
 *   millisecond times is refused with 400, as Kubernetes' decoder does);
 * - update policy: a PUT without `metadata.resourceVersion` is refused where
 *   the kind's registry strategy does not allow unconditional updates
 *   (Leases, CRDs, custom resources);
 * - immutable fields (StatefulSet spec apart from replicas, template,
 *   updateStrategy, persistentVolumeClaimRetentionPolicy, minReadySeconds,
 *   ordinals; Deployment and ReplicaSet selectors; a Service's clusterIP; a
 *   PVC's spec apart from its storage request and a few others).
 */
import { ApiError } from './errors.ts';
import type { Obj, ResourceType } from './store.ts';
import { BUILTIN_LISTS, isObject } from './structured.ts';

const t = (group: string, version: string, kind: string, plural: string, namespaced: boolean, status: boolean, shortNames?: string[]): ResourceType => ({
  group,
  version,
  kind,
  plural,
  singular: kind.toLowerCase(),
  namespaced,
  status,
  ...(shortNames ? { shortNames } : {}),
  ...(BUILTIN_LISTS[`${group}/${kind}`] ? { lists: BUILTIN_LISTS[`${group}/${kind}`] } : {}),
});

const RBAC = 'rbac.authorization.k8s.io';

export const BUILTIN_TYPES: ResourceType[] = [
  t('', 'v1', 'Namespace', 'namespaces', false, true, ['ns']),
  t('', 'v1', 'Pod', 'pods', true, true, ['po']),
  t('', 'v1', 'Service', 'services', true, true, ['svc']),
  t('', 'v1', 'Secret', 'secrets', true, false),
  t('', 'v1', 'ConfigMap', 'configmaps', true, false, ['cm']),
  t('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true, true, ['pvc']),
  t('', 'v1', 'Event', 'events', true, false, ['ev']),
  t('', 'v1', 'ServiceAccount', 'serviceaccounts', true, false, ['sa']),
  t('apps', 'v1', 'StatefulSet', 'statefulsets', true, true, ['sts']),
  t('apps', 'v1', 'Deployment', 'deployments', true, true, ['deploy']),
  t('apps', 'v1', 'ReplicaSet', 'replicasets', true, true, ['rs']),
  t('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true, true, ['pdb']),
  t('coordination.k8s.io', 'v1', 'Lease', 'leases', true, false),
  t('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false, false, ['sc']),
  t(RBAC, 'v1', 'Role', 'roles', true, false),
  t(RBAC, 'v1', 'ClusterRole', 'clusterroles', false, false),
  t(RBAC, 'v1', 'RoleBinding', 'rolebindings', true, false),
  t(RBAC, 'v1', 'ClusterRoleBinding', 'clusterrolebindings', false, false),
  t('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', false, true, ['crd', 'crds']),
];

export const isBuiltin = (rt: ResourceType): boolean => BUILTIN_TYPES.some((b) => b.group === rt.group && b.kind === rt.kind);

/** Field paths (dot separated, `[]` for every list item) of time fields, by `group/kind`. */
const TIMES: Record<string, { time?: string[]; micro?: string[] }> = {
  'coordination.k8s.io/Lease': { micro: ['spec.acquireTime', 'spec.renewTime'] },
  '/Event': { time: ['firstTimestamp', 'lastTimestamp'], micro: ['eventTime', 'series.lastObservedTime'] },
  '/Pod': { time: ['status.conditions[].lastTransitionTime', 'status.conditions[].lastProbeTime', 'status.startTime', 'status.containerStatuses[].state.running.startedAt'] },
  'apps/Deployment': { time: ['status.conditions[].lastTransitionTime', 'status.conditions[].lastUpdateTime'] },
  'apps/ReplicaSet': { time: ['status.conditions[].lastTransitionTime'] },
  'apps/StatefulSet': { time: ['status.conditions[].lastTransitionTime'] },
  'apiextensions.k8s.io/CustomResourceDefinition': { time: ['status.conditions[].lastTransitionTime'] },
};
const META_TIMES = ['metadata.creationTimestamp', 'metadata.deletionTimestamp'];

const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

function valuesAt(o: unknown, path: string): { set(v: string): void; value: unknown }[] {
  const out: { set(v: string): void; value: unknown }[] = [];
  const walk = (cur: unknown, segs: string[]) => {
    if (segs.length === 0) return;
    const [seg, ...rest] = segs as [string, ...string[]];
    const list = seg.endsWith('[]');
    const name = list ? seg.slice(0, -2) : seg;
    if (!isObject(cur) || cur[name] === undefined || cur[name] === null) return;
    if (list) {
      if (Array.isArray(cur[name])) for (const item of cur[name] as unknown[]) walk(item, rest);
      return;
    }
    if (rest.length === 0) {
      const parent = cur;
      out.push({ value: cur[name], set: (v) => (parent[name] = v) });
    } else walk(cur[name], rest);
  };
  walk(o, path.split('.'));
  return out;
}

const cannotHandle = (rt: ResourceType, detail: string) =>
  new ApiError(400, 'BadRequest', `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: ${detail}`);

/**
 * Decodes the object's time fields as Kubernetes does: MicroTime must carry
 * exactly six fractional digits, Time any RFC 3339 value; Time is stored at
 * second precision (what a real server sends back).
 */
export function checkTimes(rt: ResourceType, o: Obj): void {
  const rules = TIMES[`${rt.group}/${rt.kind}`] ?? {};
  for (const path of rules.micro ?? []) {
    for (const f of valuesAt(o, path)) {
      const v = f.value;
      if (typeof v !== 'string') throw cannotHandle(rt, `json: cannot unmarshal ${typeof v} into Go struct field ${path} of type string`);
      const m = TIME.exec(v);
      const frac = m?.[7];
      if (!m || frac === undefined || frac.length !== 7) {
        const rest = m ? v.slice(19) : v;
        throw cannotHandle(rt, `parsing time "${v}" as "${MICRO_LAYOUT}": cannot parse "${rest}" as "${m ? '.000000' : '2006'}"`);
      }
    }
  }
  for (const path of [...META_TIMES, ...(rules.time ?? [])]) {
    for (const f of valuesAt(o, path)) {
      const v = f.value;
      if (typeof v !== 'string' || !TIME.test(v) || Number.isNaN(Date.parse(v))) throw cannotHandle(rt, `parsing time "${String(v)}" as "2006-01-02T15:04:05Z07:00": cannot parse`);
      f.set(new Date(Date.parse(v)).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    }
  }
}

/** Kinds whose registry strategy allows a PUT without resourceVersion. */
export function allowsUnconditionalUpdate(rt: ResourceType): boolean {
  if (!isBuiltin(rt)) return false;
  return !['coordination.k8s.io/Lease', 'apiextensions.k8s.io/CustomResourceDefinition'].includes(`${rt.group}/${rt.kind}`);
}

const STS_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];
const PVC_MUTABLE = ['resources', 'volumeAttributesClassName'];

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Refuses changes of immutable fields with the API server's 422. */
export function checkImmutable(rt: ResourceType, next: Obj, old: Obj): void {
  const invalid = (field: string, message: string) =>
    new ApiError(422, 'Invalid', `${rt.kind} "${old.metadata.name}" is invalid: ${field}: ${message}`, { name: old.metadata.name, kind: rt.plural, causes: [{ reason: 'FieldValueForbidden', message, field }] });
  const ns = next['spec'] as Record<string, unknown> | undefined;
  const os = old['spec'] as Record<string, unknown> | undefined;
  switch (`${rt.group}/${rt.kind}`) {
    case 'apps/StatefulSet': {
      const strip = (s: Record<string, unknown> | undefined) => Object.fromEntries(Object.entries(s ?? {}).filter(([k]) => !STS_MUTABLE.includes(k)));
      if (!same(strip(ns), strip(os))) {
        throw invalid(
          'spec',
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        );
      }
      return;
    }
    case 'apps/Deployment':
    case 'apps/ReplicaSet':
      if (!same(ns?.['selector'], os?.['selector'])) throw invalid('spec.selector', `Invalid value: ${JSON.stringify(ns?.['selector'])}: field is immutable`);
      return;
    case '/Service':
      if (os?.['clusterIP'] !== undefined && !same(ns?.['clusterIP'], os['clusterIP'])) throw invalid('spec.clusterIP', `Invalid value: "${String(ns?.['clusterIP'])}": field is immutable`);
      return;
    case '/PersistentVolumeClaim': {
      const strip = (s: Record<string, unknown> | undefined) => Object.fromEntries(Object.entries(s ?? {}).filter(([k]) => !PVC_MUTABLE.includes(k) && k !== 'volumeName'));
      if (!same(strip(ns), strip(os))) throw invalid('spec', 'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims');
      return;
    }
    case '/Secret':
    case '/ConfigMap':
      if (old['immutable'] === true && (!same(next['data'], old['data']) || !same(next['stringData'], undefined))) throw invalid('data', 'Forbidden: field is immutable when `immutable` is set');
      return;
    default:
  }
}
