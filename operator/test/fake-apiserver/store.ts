/**
 * In-memory object store with the Kubernetes semantics the operator relies
 * on: resourceVersions, optimistic concurrency (409 on a stale write),
 * `metadata.generation` that moves only with spec changes, the status
 * subresource, server-side apply with field managers, finalizers and
 * background owner-reference garbage collection, and an event log that
 * watches replay from (410 Gone below the compaction mark).
 *
 * Kept honest by `kube-contract.ts`, which runs the same cases here and
 * against a real k3s API server (e2e/, where Docker exists).
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from './errors.ts';
import { applyMerge, DEFAULT_LISTS, deletePath, getPath, isObject, leafPaths, leafValue, type ListTypes } from './structured.ts';

export { ApiError };

export type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
    managedFields?: unknown;
    [k: string]: unknown;
  };
  [k: string]: unknown;
};

export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  /** Has a `/status` subresource: the main resource ignores status, `/status` ignores everything else. */
  readonly status: boolean;
  readonly shortNames?: string[];
  /** List semantics for server-side apply and strategic merge patch (default: every list atomic). */
  readonly lists?: ListTypes;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoredEvent {
  readonly rv: number;
  readonly type: WatchEventType;
  readonly typeKey: string;
  readonly object: Obj;
}

export const apiVersionOf = (t: ResourceType): string => (t.group ? `${t.group}/${t.version}` : t.version);
export const typeKeyOf = (t: ResourceType): string => `${t.group}/${t.plural}`;

const clone = <T>(v: T): T => structuredClone(v);

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? clone(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** RFC 6902 JSON patch (add, remove, replace, test, copy, move). */
export function jsonPatch(target: unknown, ops: { op: string; path: string; value?: unknown; from?: string }[]): unknown {
  let doc = clone(target);
  const parse = (p: string) => p.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const locate = (segs: string[]): [Record<string, unknown> | unknown[], string] => {
    let cur: unknown = doc;
    for (const s of segs.slice(0, -1)) {
      cur = Array.isArray(cur) ? cur[Number(s)] : (cur as Record<string, unknown>)?.[s];
      if (cur === undefined || cur === null) throw new ApiError(422, 'Invalid', `json patch path not found: /${segs.join('/')}`);
    }
    return [cur as Record<string, unknown>, segs[segs.length - 1]!];
  };
  const read = (p: string) => getPath(doc, p);
  for (const op of ops) {
    const segs = parse(op.path);
    if (segs.length === 0) {
      if (op.op === 'test') {
        if (JSON.stringify(doc) !== JSON.stringify(op.value)) throw new ApiError(422, 'Invalid', 'json patch test failed');
        continue;
      }
      doc = clone(op.value);
      continue;
    }
    const [parent, key] = locate(segs);
    const put = (value: unknown, insert: boolean) => {
      if (Array.isArray(parent)) {
        const i = key === '-' ? parent.length : Number(key);
        if (insert) parent.splice(i, 0, value);
        else parent[i] = value;
      } else parent[key] = value;
    };
    switch (op.op) {
      case 'add':
        put(clone(op.value), true);
        break;
      case 'replace':
        if ((Array.isArray(parent) ? parent[Number(key)] : parent[key]) === undefined) throw new ApiError(422, 'Invalid', `json patch replace of missing ${op.path}`);
        put(clone(op.value), false);
        break;
      case 'remove':
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else {
          if (!(key in parent)) throw new ApiError(422, 'Invalid', `json patch remove of missing ${op.path}`);
          delete parent[key];
        }
        break;
      case 'test':
        if (JSON.stringify(Array.isArray(parent) ? parent[Number(key)] : parent[key]) !== JSON.stringify(op.value)) {
          throw new ApiError(422, 'Invalid', `json patch test failed at ${op.path}`);
        }
        break;
      case 'copy':
      case 'move': {
        const from = op.from ?? '';
        const v = clone(read(from.replace(/~1/g, '/').replace(/~0/g, '~')));
        if (op.op === 'move') doc = jsonPatch(doc, [{ op: 'remove', path: from }]);
        doc = jsonPatch(doc, [{ op: 'add', path: op.path, value: v }]);
        break;
      }
      default:
        throw new ApiError(422, 'Invalid', `unsupported json patch op ${op.op}`);
    }
  }
  return doc;
}

/** The non-metadata, non-status part: what `generation` tracks. */
function specPart(o: Obj): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return JSON.stringify(rest);
}

const IGNORED_APPLY_PATHS = /^\/(apiVersion|kind|metadata\/(name|namespace|resourceVersion|uid|generation|creationTimestamp|managedFields))(\/|$)/;

interface ManagerState {
  /** Paths this manager owns (leaf paths of what it applied or changed). */
  paths: Set<string>;
  /** Paths from its last apply (removed when a later apply omits them). */
  applied: Set<string>;
}

export type Listener = (e: StoredEvent) => void;

export class Store {
  readonly types = new Map<string, ResourceType>();
  readonly #objects = new Map<string, Obj>();
  readonly #managers = new Map<string, Map<string, ManagerState>>();
  readonly #log: StoredEvent[] = [];
  readonly #listeners = new Set<Listener>();
  #rv = 1;
  /** Watches from below this resourceVersion get 410 Gone. */
  compactedRv = 0;
  /** Watch events kept (all kinds); the oldest quarter goes when there are more. */
  historyLimit = 20_000;
  readonly now: () => Date;

  constructor(now: () => Date = () => new Date()) {
    this.now = now;
  }

  register(t: ResourceType): void {
    this.types.set(typeKeyOf(t), t);
  }

  unregister(t: ResourceType): void {
    this.types.delete(typeKeyOf(t));
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    const t = this.types.get(`${group}/${plural}`);
    return t && t.version === version ? t : undefined;
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    for (const t of this.types.values()) if (apiVersionOf(t) === apiVersion && t.kind === kind) return t;
    return undefined;
  }

  get resourceVersion(): number {
    return this.#rv;
  }

  /** Forget history: watches that start before now get 410 Gone. */
  compact(): void {
    this.compactedRv = this.#rv;
    this.#log.splice(0, this.#log.length);
  }

  onEvent(l: Listener): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  eventsSince(rv: number, typeKey: string): StoredEvent[] {
    return this.#log.filter((e) => e.rv > rv && e.typeKey === typeKey);
  }

  #key(t: ResourceType, ns: string | undefined, name: string): string {
    return `${typeKeyOf(t)}|${t.namespaced ? (ns ?? '') : ''}|${name}`;
  }

  #emit(t: ResourceType, type: WatchEventType, obj: Obj): void {
    const e: StoredEvent = { rv: Number(obj.metadata.resourceVersion), type, typeKey: typeKeyOf(t), object: clone(obj) };
    this.#log.push(e);
    // Bounded history (etcd compacts too): a watch that starts below what is
    // kept gets 410 Gone and must re-list.
    if (this.#log.length > this.historyLimit) {
      const dropped = this.#log.splice(0, this.#log.length - Math.floor(this.historyLimit * 0.75));
      this.compactedRv = Math.max(this.compactedRv, dropped[dropped.length - 1]!.rv);
    }
    for (const l of this.#listeners) l(e);
  }

  get(t: ResourceType, ns: string | undefined, name: string): Obj {
    const o = this.#objects.get(this.#key(t, ns, name));
    if (!o) throw new ApiError(404, 'NotFound', `${t.plural}${t.group ? `.${t.group}` : ''} "${name}" not found`);
    return clone(o);
  }

  tryGet(t: ResourceType, ns: string | undefined, name: string): Obj | undefined {
    const o = this.#objects.get(this.#key(t, ns, name));
    return o ? clone(o) : undefined;
  }

  list(t: ResourceType, ns?: string): Obj[] {
    const out: Obj[] = [];
    for (const o of this.#objects.values()) {
      if (`${o.apiVersion}` !== apiVersionOf(t) || o.kind !== t.kind) continue;
      if (t.namespaced && ns !== undefined && o.metadata.namespace !== ns) continue;
      out.push(clone(o));
    }
    return out.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  }

  #nextRv(): string {
    this.#rv += 1;
    return String(this.#rv);
  }

  #track(key: string, manager: string, paths: Iterable<string>, takeFromOthers: boolean): void {
    let m = this.#managers.get(key);
    if (!m) this.#managers.set(key, (m = new Map()));
    const mine = m.get(manager) ?? { paths: new Set(), applied: new Set() };
    for (const p of paths) {
      mine.paths.add(p);
      if (takeFromOthers) for (const [other, st] of m) if (other !== manager) st.paths.delete(p);
    }
    m.set(manager, mine);
  }

  create(t: ResourceType, ns: string | undefined, body: Obj, manager = 'unknown'): Obj {
    if (!body?.metadata?.name) throw new ApiError(422, 'Invalid', 'metadata.name: Required value');
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(body.metadata.name) || body.metadata.name.length > 253) {
      throw new ApiError(422, 'Invalid', `metadata.name: Invalid value: "${body.metadata.name}"`);
    }
    const key = this.#key(t, ns, body.metadata.name);
    if (this.#objects.has(key)) throw new ApiError(409, 'AlreadyExists', `${t.plural} "${body.metadata.name}" already exists`);
    const o = clone(body);
    o.apiVersion = apiVersionOf(t);
    o.kind = t.kind;
    if (t.namespaced) o.metadata.namespace = ns;
    else delete o.metadata.namespace;
    o.metadata.uid = randomUUID();
    o.metadata.creationTimestamp = this.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
    o.metadata.generation = 1;
    delete o.metadata.deletionTimestamp;
    delete o.metadata.managedFields;
    if (t.status && o['status'] === undefined) o['status'] = {};
    o.metadata.resourceVersion = this.#nextRv();
    this.#objects.set(key, o);
    this.#track(key, manager, [...leafPaths(o, t.lists ?? DEFAULT_LISTS).keys()].filter((p) => !IGNORED_APPLY_PATHS.test(p)), true);
    this.#emit(t, 'ADDED', o);
    this.#collectIfOrphaned(t, o);
    return clone(o);
  }

  /**
   * Replaces an object (PUT, or the result of a patch). `subresource` 'status'
   * changes only status; the main resource never changes status when the
   * type has a status subresource. A given resourceVersion must match.
   */
  update(t: ResourceType, ns: string | undefined, body: Obj, opts: { subresource?: 'status' | undefined; manager?: string | undefined; requireRv?: boolean } = {}): Obj {
    const key = this.#key(t, ns, body.metadata?.name);
    const cur = this.#objects.get(key);
    if (!cur) throw new ApiError(404, 'NotFound', `${t.plural} "${body.metadata?.name}" not found`);
    const rv = body.metadata.resourceVersion;
    if (opts.requireRv && !rv) throw new ApiError(422, 'Invalid', 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
    if (rv && rv !== cur.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${t.plural} "${cur.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    let next: Obj;
    if (opts.subresource === 'status') {
      next = clone(cur);
      next['status'] = clone(body['status']);
    } else {
      next = clone(body);
      next.apiVersion = cur.apiVersion;
      next.kind = cur.kind;
      next.metadata = {
        ...clone(body.metadata),
        name: cur.metadata.name,
        uid: cur.metadata.uid,
        creationTimestamp: cur.metadata.creationTimestamp,
        generation: cur.metadata.generation,
      };
      if (t.namespaced) next.metadata.namespace = cur.metadata.namespace;
      else delete next.metadata.namespace;
      if (cur.metadata.deletionTimestamp) next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
      else delete next.metadata.deletionTimestamp;
      delete next.metadata.managedFields;
      if (t.status) next['status'] = clone(cur['status']);
      if (specPart(next) !== specPart(cur)) next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    }
    if (cur.metadata.deletionTimestamp) {
      const added = (next.metadata.finalizers ?? []).filter((f) => !(cur.metadata.finalizers ?? []).includes(f));
      if (added.length) throw new ApiError(422, 'Forbidden', `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`);
    }
    if (JSON.stringify(next) === JSON.stringify(cur)) return clone(cur);
    const changed = [...leafPaths(next, t.lists ?? DEFAULT_LISTS)].filter(([p, v]) => JSON.stringify(leafValue(cur, p)) !== JSON.stringify(v)).map(([p]) => p);
    this.#track(key, opts.manager ?? 'unknown', changed.filter((p) => !IGNORED_APPLY_PATHS.test(p)), true);
    next.metadata.resourceVersion = this.#nextRv();
    this.#objects.set(key, next);
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      this.#remove(t, key, next, 'Background');
    } else this.#emit(t, 'MODIFIED', next);
    return clone(next);
  }

  /**
   * Server-side apply: upsert `cfg` as `manager`. Fields this manager applied
   * before and omits now are removed; fields another manager owns with a
   * different value conflict (409) unless `force`.
   */
  apply(t: ResourceType, ns: string | undefined, cfg: Obj, manager: string, force: boolean, subresource?: 'status'): Obj {
    if (!manager) throw new ApiError(422, 'Invalid', 'fieldManager is required for apply patch');
    const name = cfg?.metadata?.name;
    if (!name) throw new ApiError(422, 'Invalid', 'metadata.name: Required value');
    if (cfg.apiVersion !== apiVersionOf(t) || cfg.kind !== t.kind) throw new ApiError(400, 'BadRequest', `apply: apiVersion/kind must be ${apiVersionOf(t)}/${t.kind}`);
    const key = this.#key(t, ns, name);
    let cur = this.#objects.get(key);
    const scoped = (paths: Iterable<string>) =>
      [...paths].filter((p) => !IGNORED_APPLY_PATHS.test(p) && (subresource === 'status' ? p.startsWith('/status') : !(t.status && p.startsWith('/status'))));
    const lists = t.lists ?? DEFAULT_LISTS;
    const newPaths = new Set(scoped(leafPaths(cfg, lists).keys()));
    if (!cur) {
      if (subresource === 'status') throw new ApiError(404, 'NotFound', `${t.plural} "${name}" not found`);
      const body = clone(cfg);
      if (t.status) delete body['status'];
      cur = this.create(t, ns, body, manager);
      const st = this.#managers.get(key)!.get(manager)!;
      st.applied = newPaths;
      st.paths = new Set(newPaths);
      for (const [other, s] of this.#managers.get(key)!) if (other !== manager) for (const p of newPaths) s.paths.delete(p);
      return cur;
    }
    if (cfg.metadata.resourceVersion && cfg.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${t.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const managers = this.#managers.get(key) ?? new Map<string, ManagerState>();
    const conflicts: string[] = [];
    for (const p of newPaths) {
      if (JSON.stringify(leafValue(cur, p)) === JSON.stringify(leafValue(cfg, p))) continue;
      for (const [other, st] of managers) if (other !== manager && st.paths.has(p)) conflicts.push(`conflict with "${other}": ${p.slice(1).replace(/\//g, '.')}`);
    }
    if (conflicts.length && !force) throw new ApiError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${conflicts.join('; ')}`);
    const mine = managers.get(manager);
    let next = clone(cur) as Record<string, unknown>;
    for (const p of mine?.applied ?? []) {
      // Still applied, or an ancestor/descendant of something applied now (an atomic value replaced whole);
      // a list-map item applied again does not keep fields inside it that this apply omits.
      const lastSeg = (x: string) => x.slice(x.lastIndexOf('/') + 1);
      if (newPaths.has(p) || [...newPaths].some((n) => n.startsWith(`${p}/`) || (p.startsWith(`${n}/`) && !lastSeg(n).startsWith('k:')))) continue;
      const ownedByOther = [...managers].some(([other, st]) => other !== manager && [...st.paths].some((q) => q === p || q.startsWith(`${p}/`)));
      if (!ownedByOther) deletePath(next, p);
    }
    const part = clone(cfg) as Record<string, unknown>;
    if (subresource === 'status') next = { ...next, status: applyMerge(next['status'], part['status'] ?? {}, lists, ['status']) };
    else {
      if (t.status) delete part['status'];
      next = applyMerge(next, part, lists) as Record<string, unknown>;
    }
    const body = next as Obj;
    body.metadata.resourceVersion = cur.metadata.resourceVersion;
    const updated = this.update(t, ns, body, { subresource, manager });
    const st = this.#managers.get(key)?.get(manager) ?? { paths: new Set<string>(), applied: new Set<string>() };
    st.applied = newPaths;
    for (const p of newPaths) st.paths.add(p);
    for (const [other, s] of this.#managers.get(key) ?? []) if (other !== manager) for (const p of newPaths) s.paths.delete(p);
    this.#managers.get(key)?.set(manager, st);
    return updated;
  }

  /** Managers and the fields they own (what `managedFields` would show). */
  managersOf(t: ResourceType, ns: string | undefined, name: string): Record<string, string[]> {
    const m = this.#managers.get(this.#key(t, ns, name));
    return Object.fromEntries([...(m ?? [])].map(([k, v]) => [k, [...v.paths].sort()]));
  }

  delete(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    opts: { propagationPolicy?: string | undefined; preconditionUid?: string | undefined; gracePeriodSeconds?: number | undefined } = {},
  ): Obj {
    const key = this.#key(t, ns, name);
    const cur = this.#objects.get(key);
    if (!cur) throw new ApiError(404, 'NotFound', `${t.plural} "${name}" not found`);
    if (opts.preconditionUid && opts.preconditionUid !== cur.metadata.uid) throw new ApiError(409, 'Conflict', 'Precondition failed: UID in precondition does not match the object');
    if (opts.gracePeriodSeconds !== undefined && (!Number.isInteger(opts.gracePeriodSeconds) || opts.gracePeriodSeconds < 0)) {
      throw new ApiError(422, 'Invalid', `DeleteOptions.gracePeriodSeconds: Invalid value: ${opts.gracePeriodSeconds}: must be greater than or equal to 0`);
    }
    const graceful = this.#graceful(t, key, cur, opts.gracePeriodSeconds);
    if (graceful) return graceful;
    if ((cur.metadata.finalizers ?? []).length > 0) {
      if (cur.metadata.deletionTimestamp) return clone(cur);
      return this.#markDeleting(t, key, cur, 0);
    }
    return this.#remove(t, key, cur, opts.propagationPolicy ?? 'Background');
  }

  /**
   * Graceful deletion, as the API server does it for a pod bound to a node
   * (`spec.nodeName`): the pod stays, with `deletionTimestamp` (now plus the
   * grace period) and `deletionGracePeriodSeconds`, until its kubelet has
   * stopped the containers and deletes it again with a grace period of 0.
   * The period is the request's `gracePeriodSeconds`, else the pod's
   * `terminationGracePeriodSeconds` (default 30); a later delete may only
   * shorten it. An unbound pod (no kubelet to wait for), one that has
   * finished (Succeeded, Failed) and a delete with grace 0 go at once.
   * Returns undefined when the delete is not graceful.
   */
  #graceful(t: ResourceType, key: string, cur: Obj, requested: number | undefined): Obj | undefined {
    if (t.group !== '' || t.plural !== 'pods') return undefined;
    const spec = (cur['spec'] ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
    if (!spec.nodeName) return undefined;
    // A pod whose containers all ended has nothing left to stop.
    const phase = (cur['status'] as { phase?: string } | undefined)?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return undefined;
    const grace = requested ?? spec.terminationGracePeriodSeconds ?? 30;
    if (grace === 0) return undefined;
    const was = cur.metadata.deletionGracePeriodSeconds;
    if (cur.metadata.deletionTimestamp && was !== undefined && was <= grace) return clone(cur);
    return this.#markDeleting(t, key, cur, grace);
  }

  /** An object that stays while it is being deleted: `deletionTimestamp` (now plus `grace` seconds), a new generation, MODIFIED. */
  #markDeleting(t: ResourceType, key: string, cur: Obj, grace: number): Obj {
    const next = clone(cur);
    next.metadata.deletionTimestamp = new Date(this.now().getTime() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    next.metadata.deletionGracePeriodSeconds = grace;
    next.metadata.generation = (cur.metadata.generation ?? 1) + 1;
    next.metadata.resourceVersion = this.#nextRv();
    this.#objects.set(key, next);
    this.#emit(t, 'MODIFIED', next);
    return clone(next);
  }

  #remove(t: ResourceType, key: string, cur: Obj, policy: string): Obj {
    this.#objects.delete(key);
    this.#managers.delete(key);
    const gone = clone(cur);
    gone.metadata.resourceVersion = this.#nextRv();
    this.#emit(t, 'DELETED', gone);
    // Background garbage collection of dependents (or orphaning them).
    const uid = cur.metadata.uid;
    setImmediate(() => this.#collect(uid!, policy));
    return gone;
  }

  #collect(uid: string, policy: string): void {
    let retry = false;
    for (const [, o] of [...this.#objects]) {
      const refs = o.metadata.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === uid)) continue;
      const t = this.byKind(String(o.apiVersion), String(o.kind));
      if (!t) continue;
      const remaining = refs.filter((r) => r.uid !== uid);
      try {
        if (policy === 'Orphan' || remaining.some((r) => this.#uidExists(r.uid))) {
          const next = clone(o);
          next.metadata.ownerReferences = remaining;
          if (remaining.length === 0) delete next.metadata.ownerReferences;
          this.update(t, o.metadata.namespace, next, { manager: 'garbage-collector' });
        } else this.delete(t, o.metadata.namespace, o.metadata.name, { propagationPolicy: 'Background' });
      } catch {
        // Raced with another writer: as the real collector, try that owner's dependents again
        // shortly (those already handled no longer reference it).
        retry = true;
      }
    }
    if (retry) setTimeout(() => this.#collect(uid, policy), 100).unref();
  }

  /**
   * The garbage collector also deletes a dependent whose owners are all gone
   * when it appears (e.g. a child applied by a controller that read its owner
   * just before the owner was deleted): an owner reference to a missing uid
   * does not keep an object alive.
   */
  #collectIfOrphaned(t: ResourceType, o: Obj): void {
    const refs = o.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    setImmediate(() => {
      if (refs.some((r) => this.#uidExists(r.uid))) return;
      const cur = this.#objects.get(this.#key(t, o.metadata.namespace, o.metadata.name));
      if (!cur || cur.metadata.uid !== o.metadata.uid) return;
      try {
        this.delete(t, o.metadata.namespace, o.metadata.name, { propagationPolicy: 'Background' });
      } catch {
        // gone meanwhile
      }
    });
  }

  #uidExists(uid: string): boolean {
    for (const o of this.#objects.values()) if (o.metadata.uid === uid) return true;
    return false;
  }
}

/** `a=b,c!=d,e,!f,g in (x,y),h notin (z)` */
export function matchesLabelSelector(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  const parts = selector.match(/([^,(]+(\([^)]*\))?)/g) ?? [];
  for (const raw of parts) {
    const p = raw.trim();
    if (!p) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([^!=\s]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(p))) {
      const values = m[3]!.split(',').map((s) => s.trim());
      const has = m[1]! in l && values.includes(l[m[1]!]!);
      if (m[2] === 'in' ? !has : has) return false;
    } else if ((m = /^([^!=]+)!=(.*)$/.exec(p))) {
      if (l[m[1]!.trim()] === m[2]!.trim()) return false;
    } else if ((m = /^([^!=]+)==?(.*)$/.exec(p))) {
      if (l[m[1]!.trim()] !== m[2]!.trim()) return false;
    } else if (p.startsWith('!')) {
      if (p.slice(1) in l) return false;
    } else if (!(p in l)) return false;
  }
  return true;
}

export function matchesFieldSelector(o: Obj, selector: string | undefined): boolean {
  if (!selector) return true;
  for (const part of selector.split(',')) {
    const m = /^([^!=]+)(!=|==|=)(.*)$/.exec(part.trim());
    if (!m) continue;
    const v = String(getPath(o, `/${m[1]!.split('.').join('/')}`) ?? '');
    if ((m[2] === '!=') === (v === m[3])) return false;
  }
  return true;
}
