/**
 * List semantics of Kubernetes objects, as the API server's structured merge
 * (server-side apply) and strategic merge patch see them: a list is atomic
 * (replaced whole), a set (of scalars, merged by value) or a map (items
 * merged by their key fields, e.g. containers by `name`, container ports by
 * `containerPort`+`protocol`). Field paths address list-map items the way
 * `managedFields` does (`k:{"name":"svc"}`), set items as `v:"value"`.
 *
 * Built-in kinds get the list types of the Kubernetes API (the subset the
 * operator, Helm and kubectl write); custom resources get theirs from the
 * CRD schema (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`).
 */
import { ApiError } from './errors.ts';

export type ListType = { readonly kind: 'map'; readonly keys: readonly string[] } | { readonly kind: 'set' } | { readonly kind: 'atomic' };
/** The list type at a field path (field names only, list items skipped). */
export type ListTypes = (fieldPath: readonly string[]) => ListType;

const ATOMIC: ListType = { kind: 'atomic' };
const map = (...keys: string[]): ListType => ({ kind: 'map', keys });
const SET: ListType = { kind: 'set' };

/** Lists inside a PodSpec (relative to the PodSpec). */
const POD_SPEC: Record<string, ListType> = {
  containers: map('name'),
  initContainers: map('name'),
  ephemeralContainers: map('name'),
  'containers.env': map('name'),
  'initContainers.env': map('name'),
  'containers.ports': map('containerPort', 'protocol'),
  'initContainers.ports': map('containerPort', 'protocol'),
  'containers.volumeMounts': map('mountPath'),
  'initContainers.volumeMounts': map('mountPath'),
  'containers.volumeDevices': map('devicePath'),
  volumes: map('name'),
  imagePullSecrets: map('name'),
  hostAliases: map('ip'),
  topologySpreadConstraints: map('topologyKey', 'whenUnsatisfiable'),
  'securityContext.supplementalGroups': ATOMIC,
  tolerations: ATOMIC,
};

const META: Record<string, ListType> = {
  'metadata.finalizers': SET,
  'metadata.ownerReferences': map('uid'),
};

function table(entries: Record<string, ListType>, podSpecAt?: string): ListTypes {
  const all: Record<string, ListType> = { ...META, ...entries };
  if (podSpecAt !== undefined) for (const [k, v] of Object.entries(POD_SPEC)) all[`${podSpecAt}.${k}`] = v;
  return (path) => all[path.join('.')] ?? ATOMIC;
}

const CONDITIONS = { 'status.conditions': map('type') };

/** List types of the built-in kinds, by `group/kind`. */
export const BUILTIN_LISTS: Record<string, ListTypes> = {
  '/Pod': table({ ...CONDITIONS, 'status.containerStatuses': ATOMIC }, 'spec'),
  'apps/StatefulSet': table({ ...CONDITIONS, 'spec.volumeClaimTemplates': ATOMIC }, 'spec.template.spec'),
  'apps/Deployment': table(CONDITIONS, 'spec.template.spec'),
  'apps/ReplicaSet': table(CONDITIONS, 'spec.template.spec'),
  '/Service': table({ 'spec.ports': map('port', 'protocol'), 'spec.clusterIPs': ATOMIC, 'status.conditions': map('type') }),
  'policy/PodDisruptionBudget': table(CONDITIONS),
  '/PersistentVolumeClaim': table({ 'status.conditions': map('type'), 'spec.accessModes': ATOMIC }),
  'apiextensions.k8s.io/CustomResourceDefinition': table({ 'spec.versions': map('name'), ...CONDITIONS }),
  'rbac.authorization.k8s.io/Role': table({ rules: ATOMIC }),
  'rbac.authorization.k8s.io/ClusterRole': table({ rules: ATOMIC }),
  'rbac.authorization.k8s.io/RoleBinding': table({ subjects: ATOMIC }),
  'rbac.authorization.k8s.io/ClusterRoleBinding': table({ subjects: ATOMIC }),
};

export const DEFAULT_LISTS: ListTypes = table({});

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; 'x-kubernetes-list-type'?: string; 'x-kubernetes-list-map-keys'?: string[] };

/** List types from a CRD version's OpenAPI schema. */
export function crdLists(schema: Schema | undefined): ListTypes {
  const found: Record<string, ListType> = { ...META };
  const walk = (s: Schema | undefined, path: string[]) => {
    if (!s) return;
    if (s.type === 'array') {
      const lt = s['x-kubernetes-list-type'];
      if (lt === 'map') found[path.join('.')] = map(...(s['x-kubernetes-list-map-keys'] ?? []));
      else if (lt === 'set') found[path.join('.')] = SET;
      walk(s.items, path);
    }
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, [...path, k]);
  };
  walk(schema, []);
  return (path) => found[path.join('.')] ?? ATOMIC;
}

// ------------------------------------------------------------------ paths

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unesc = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
export const segments = (path: string): string[] => path.split('/').slice(1).map(unesc);

function keyOf(item: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => item[k] !== undefined).map((k) => [k, item[k]]));
}

function keySegment(item: Record<string, unknown>, keys: readonly string[]): string {
  return `k:${JSON.stringify(keyOf(item, keys))}`;
}

function sameKey(item: unknown, key: Record<string, unknown>, keys: readonly string[]): boolean {
  return isObject(item) && JSON.stringify(keyOf(item, keys)) === JSON.stringify(key);
}

/**
 * Leaf paths of a value: objects recurse; list-map items recurse under their
 * key segment (and the item itself is a path, valued by its key, so a
 * manager owns an item it applied); set items are leaves; atomic lists and
 * scalars are leaves.
 */
export function leafPaths(v: unknown, lists: ListTypes, fieldPath: string[] = [], prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (isObject(v)) {
    for (const [k, child] of Object.entries(v)) for (const [p, leaf] of leafPaths(child, lists, [...fieldPath, k], `${prefix}/${esc(k)}`)) out.set(p, leaf);
    if (Object.keys(v).length === 0 && prefix) out.set(prefix, {});
    return out;
  }
  if (Array.isArray(v) && v.length > 0) {
    const lt = lists(fieldPath);
    if (lt.kind === 'map' && v.every(isObject)) {
      for (const item of v as Record<string, unknown>[]) {
        const seg = `${prefix}/${esc(keySegment(item, lt.keys))}`;
        out.set(seg, keyOf(item, lt.keys));
        for (const [p, leaf] of leafPaths(item, lists, fieldPath, seg)) out.set(p, leaf);
      }
      return out;
    }
    if (lt.kind === 'set') {
      for (const item of v) out.set(`${prefix}/${esc(`v:${JSON.stringify(item)}`)}`, item);
      return out;
    }
  }
  out.set(prefix, v);
  return out;
}

/** Resolves a path made by `leafPaths` (list-map item paths give the item). */
export function getPath(v: unknown, path: string): unknown {
  let cur = v;
  for (const seg of segments(path)) {
    if (Array.isArray(cur)) {
      if (seg.startsWith('k:')) {
        const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
        const keys = Object.keys(key);
        cur = cur.find((x) => sameKey(x, key, keys));
      } else if (seg.startsWith('v:')) {
        const want = seg.slice(2);
        cur = cur.find((x) => JSON.stringify(x) === want);
      } else return undefined;
      continue;
    }
    if (!isObject(cur)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** The value a leaf path compares by (list-map items by their key, everything else itself). */
export function leafValue(v: unknown, path: string): unknown {
  const got = getPath(v, path);
  const last = segments(path).pop() ?? '';
  if (last.startsWith('k:') && isObject(got)) return keyOf(got, Object.keys(JSON.parse(last.slice(2)) as object));
  return got;
}

/** Removes what a path names; objects and lists the removal left empty go too. */
export function deletePath(v: Record<string, unknown>, path: string): void {
  const segs = segments(path);
  const chain: unknown[] = [v];
  let cur: unknown = v;
  for (const seg of segs.slice(0, -1)) {
    cur = stepInto(cur, seg);
    if (cur === undefined) return;
    chain.push(cur);
  }
  removeChild(cur, segs[segs.length - 1]!);
  for (let i = chain.length - 1; i > 0; i--) {
    const node = chain[i];
    const empty = Array.isArray(node) ? node.length === 0 : isObject(node) && Object.keys(node).length === 0;
    if (!empty) break;
    removeChild(chain[i - 1], segs[i - 1]!);
  }
}

function stepInto(cur: unknown, seg: string): unknown {
  if (Array.isArray(cur)) {
    if (seg.startsWith('k:')) {
      const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      return cur.find((x) => sameKey(x, key, Object.keys(key)));
    }
    if (seg.startsWith('v:')) return undefined;
    return undefined;
  }
  return isObject(cur) ? cur[seg] : undefined;
}

function removeChild(parent: unknown, seg: string): void {
  if (Array.isArray(parent)) {
    let i = -1;
    if (seg.startsWith('k:')) {
      const key = JSON.parse(seg.slice(2)) as Record<string, unknown>;
      i = parent.findIndex((x) => sameKey(x, key, Object.keys(key)));
    } else if (seg.startsWith('v:')) i = parent.findIndex((x) => JSON.stringify(x) === seg.slice(2));
    if (i >= 0) parent.splice(i, 1);
  } else if (isObject(parent)) delete parent[seg];
}

// ------------------------------------------------------------------ merges

/** Server-side apply's merge of an applied configuration into the live object. */
export function applyMerge(target: unknown, cfg: unknown, lists: ListTypes, fieldPath: string[] = []): unknown {
  if (isObject(cfg) && isObject(target)) {
    const out = structuredClone(target);
    for (const [k, v] of Object.entries(cfg)) out[k] = applyMerge(out[k], v, lists, [...fieldPath, k]);
    return out;
  }
  if (Array.isArray(cfg) && Array.isArray(target)) {
    const lt = lists(fieldPath);
    if (lt.kind === 'map' && cfg.every(isObject) && target.every(isObject)) {
      const out = structuredClone(target) as Record<string, unknown>[];
      for (const item of cfg as Record<string, unknown>[]) {
        const key = keyOf(item, lt.keys);
        const i = out.findIndex((x) => sameKey(x, key, lt.keys));
        if (i >= 0) out[i] = applyMerge(out[i], item, lists, fieldPath) as Record<string, unknown>;
        else out.push(structuredClone(item));
      }
      return out;
    }
    if (lt.kind === 'set') return [...target, ...cfg.filter((x) => !target.some((y) => JSON.stringify(y) === JSON.stringify(x)))];
  }
  return structuredClone(cfg);
}

/**
 * Strategic merge patch (built-in kinds only): objects merge, `null` deletes,
 * list maps merge by their (first) key with `$patch: delete` items removing,
 * sets merge by value, atomic lists replace; `$patch: replace` replaces an
 * object; `$setElementOrder`/`$retainKeys` directives are accepted.
 */
export function strategicMerge(target: unknown, patch: unknown, lists: ListTypes, fieldPath: string[] = []): unknown {
  if (isObject(patch)) {
    if (patch['$patch'] === 'replace') {
      const { $patch: _p, ...rest } = patch;
      return structuredClone(rest);
    }
    if (patch['$patch'] === 'delete') return undefined;
    const out: Record<string, unknown> = isObject(target) ? structuredClone(target) : {};
    for (const [k, v] of Object.entries(patch)) {
      if (k.startsWith('$setElementOrder/') || k === '$retainKeys' || k === '$patch') continue;
      if (k.startsWith('$deleteFromPrimitiveList/')) {
        const field = k.slice('$deleteFromPrimitiveList/'.length);
        if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = (out[field] as unknown[]).filter((x) => !v.some((d) => JSON.stringify(d) === JSON.stringify(x)));
        continue;
      }
      if (k.startsWith('$')) throw new ApiError(400, 'BadRequest', `unknown patch directive ${k}`);
      if (v === null) delete out[k];
      else {
        const merged = strategicMerge(out[k], v, lists, [...fieldPath, k]);
        if (merged === undefined) delete out[k];
        else out[k] = merged;
      }
    }
    return out;
  }
  if (Array.isArray(patch)) {
    const lt = lists(fieldPath);
    if (lt.kind === 'map' && Array.isArray(target)) {
      const mergeKey = lt.keys[0]!;
      const out = structuredClone(target) as Record<string, unknown>[];
      for (const item of patch) {
        if (!isObject(item)) throw new ApiError(400, 'BadRequest', `strategic merge patch: list ${fieldPath.join('.')} needs objects`);
        if (item[mergeKey] === undefined) throw new ApiError(400, 'BadRequest', `strategic merge patch: map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
        const i = out.findIndex((x) => isObject(x) && JSON.stringify(x[mergeKey]) === JSON.stringify(item[mergeKey]));
        if (item['$patch'] === 'delete') {
          if (i >= 0) out.splice(i, 1);
        } else if (i >= 0) out[i] = strategicMerge(out[i], item, lists, fieldPath) as Record<string, unknown>;
        else out.push(strategicMerge(undefined, item, lists, fieldPath) as Record<string, unknown>);
      }
      return out;
    }
    if (lt.kind === 'set' && Array.isArray(target)) return [...target, ...patch.filter((x) => !target.some((y) => JSON.stringify(y) === JSON.stringify(x)))];
    return structuredClone(patch);
  }
  return structuredClone(patch);
}
