/**
 * An in-process Kubernetes API server over `Store`, spoken to by the real
 * `@kubernetes/client-node` (so informers, watches and server-side apply go
 * through real HTTP). Discovery, list/watch with resourceVersions and 410
 * Gone, create/replace/patch (merge, JSON, strategic treated as merge, apply)
 * with 409 on stale writes, status subresources, finalizers, background GC,
 * and CustomResourceDefinitions: creating one serves its resource.
 *
 * Fault injection for tests: latency, scripted failures (500/429/...), and
 * dropping every open watch.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { ApiError, apiVersionOf, jsonPatch, matchesFieldSelector, matchesLabelSelector, mergePatch, type Obj, type ResourceType, Store, type StoredEvent, typeKeyOf } from './store.ts';

const CORE: ResourceType[] = [
  { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', singular: 'namespace', namespaced: false, status: true, shortNames: ['ns'] },
  { group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', namespaced: true, status: true, shortNames: ['po'] },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', singular: 'service', namespaced: true, status: true, shortNames: ['svc'] },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', singular: 'secret', namespaced: true, status: false },
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', namespaced: true, status: false, shortNames: ['cm'] },
  { group: '', version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', singular: 'persistentvolumeclaim', namespaced: true, status: true, shortNames: ['pvc'] },
  { group: '', version: 'v1', kind: 'Event', plural: 'events', singular: 'event', namespaced: true, status: false, shortNames: ['ev'] },
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', singular: 'serviceaccount', namespaced: true, status: false, shortNames: ['sa'] },
  { group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', singular: 'statefulset', namespaced: true, status: true, shortNames: ['sts'] },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', singular: 'poddisruptionbudget', namespaced: true, status: true, shortNames: ['pdb'] },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', singular: 'lease', namespaced: true, status: false },
  { group: 'storage.k8s.io', version: 'v1', kind: 'StorageClass', plural: 'storageclasses', singular: 'storageclass', namespaced: false, status: false, shortNames: ['sc'] },
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    namespaced: false,
    status: true,
    shortNames: ['crd'],
  },
];

export interface Fault {
  /** Matches `METHOD path` (path without query), e.g. /PATCH .*statefulsets/ */
  readonly match: RegExp;
  readonly status: number;
  /** How many requests it fails (default 1). */
  times?: number;
}

interface WatchConn {
  readonly t: ResourceType;
  readonly ns: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  readonly res: ServerResponse;
}

export interface CrdValidator {
  /** Throws ApiError(422) when `obj` violates the CRD's schema or rules. */
  (crd: Obj, obj: Obj, old: Obj | undefined): void;
}

export class FakeApiServer {
  readonly store: Store;
  readonly #server: Server;
  readonly #watches = new Set<WatchConn>();
  readonly #faults: Fault[] = [];
  latencyMs = 0;
  /** Every request, `METHOD path?query` (assert what the client sent). */
  readonly requests: string[] = [];
  /** Optional admission for custom resources (the CRD's schema and CEL rules). */
  crdValidator: CrdValidator | undefined;
  url = '';

  private constructor(store: Store) {
    this.store = store;
    for (const t of CORE) store.register(t);
    this.#server = createServer((req, res) => void this.#handle(req, res));
    store.onEvent((e) => this.#fanOut(e));
  }

  static async start(opts: { now?: () => Date } = {}): Promise<FakeApiServer> {
    const s = new FakeApiServer(new Store(opts.now));
    s.#server.listen(0, '127.0.0.1');
    await once(s.#server, 'listening');
    s.url = `http://127.0.0.1:${(s.#server.address() as AddressInfo).port}`;
    return s;
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'fake' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** A kubeconfig file body pointing at this server (for child processes). */
  kubeConfigYaml(): string {
    return [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: fake, cluster: {server: "${this.url}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: fake, user: {}}]',
      'contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]',
      'current-context: fake',
      '',
    ].join('\n');
  }

  failNext(match: RegExp, status: number, times = 1): void {
    this.#faults.push({ match, status, times });
  }

  /** Ends every open watch (clients must re-watch from their resourceVersion). */
  dropWatches(): void {
    for (const w of this.#watches) w.res.destroy();
    this.#watches.clear();
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  // ------------------------------------------------------------ routing

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    try {
      const body = await readBody(req);
      if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
      const fault = this.#faults.find((f) => f.match.test(`${req.method} ${url.pathname}`));
      if (fault) {
        fault.times = (fault.times ?? 1) - 1;
        if (fault.times <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1);
        throw new ApiError(fault.status, fault.status === 429 ? 'TooManyRequests' : 'InternalError', `injected fault ${fault.status}`);
      }
      await this.#route(req, res, url, body);
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, 'InternalError', (err as Error).message);
      if (!res.headersSent) sendJson(res, e.code, status(e));
      else res.end();
    }
  }

  async #route(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '');
    const segs = path.split('/').filter(Boolean);
    if (path === '/api') return sendJson(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (path === '/apis') return sendJson(res, 200, this.#groupList());
    if (path === '/version') return sendJson(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.0-fake' });
    let group = '';
    let version: string;
    let rest: string[];
    if (segs[0] === 'api') {
      version = segs[1] ?? '';
      rest = segs.slice(2);
    } else if (segs[0] === 'apis') {
      group = segs[1] ?? '';
      version = segs[2] ?? '';
      rest = segs.slice(3);
    } else throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    if (rest.length === 0) return sendJson(res, 200, this.#resourceList(group, version));
    let ns: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      ns = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, sub] = rest;
    const t = this.store.find(group, version, plural ?? '');
    if (!t) throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    if (sub !== undefined && sub !== 'status') throw new ApiError(404, 'NotFound', `subresource ${sub} is not served`);
    if (sub === 'status' && !t.status) throw new ApiError(404, 'NotFound', `${t.plural} has no status subresource`);
    const q = url.searchParams;
    const manager = q.get('fieldManager') ?? userAgentManager(req);
    const dryRun = q.get('dryRun') === 'All';
    switch (req.method) {
      case 'GET':
        if (name === undefined) {
          if (q.get('watch') === 'true' || q.get('watch') === '1') return this.#watch(res, t, ns, q);
          return this.#list(res, t, ns, q);
        }
        return sendJson(res, 200, this.store.get(t, ns, name));
      case 'POST': {
        if (name !== undefined) throw new ApiError(405, 'MethodNotAllowed', 'POST to a named resource');
        const obj = parseJson(body) as Obj;
        if (dryRun) return sendJson(res, 201, obj);
        this.#admit(t, obj, undefined);
        const created = this.store.create(t, ns ?? obj?.metadata?.namespace, obj, manager);
        this.#afterWrite(t, created);
        return sendJson(res, 201, created);
      }
      case 'PUT': {
        const obj = parseJson(body) as Obj;
        if (name === undefined || obj?.metadata?.name !== name) throw new ApiError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
        const old = this.store.get(t, ns, name);
        this.#admit(t, sub === 'status' ? { ...old, status: obj['status'] } : { ...obj, status: old['status'] }, old);
        const updated = this.store.update(t, ns, obj, { subresource: sub === 'status' ? 'status' : undefined, manager, requireRv: t.kind === 'Lease' ? false : false });
        this.#afterWrite(t, updated);
        return sendJson(res, 200, updated);
      }
      case 'PATCH': {
        if (name === undefined) throw new ApiError(405, 'MethodNotAllowed', 'PATCH needs a name');
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        let result: Obj;
        if (type === 'application/apply-patch+yaml' || type === 'application/apply-patch+cbor') {
          const cfg = parseYaml(body) as Obj;
          if (cfg?.metadata?.name !== name) throw new ApiError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
          const old = this.store.tryGet(t, ns, name);
          if (q.get('fieldManager') === null) throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
          if (dryRun) return sendJson(res, 200, cfg);
          this.#admit(t, old ? (mergePatch(old, cfg) as Obj) : cfg, old);
          result = this.store.apply(t, ns, cfg, manager, q.get('force') === 'true', sub === 'status' ? 'status' : undefined);
        } else {
          const cur = this.store.get(t, ns, name);
          const patch = parseJson(body);
          let next: Obj;
          if (type === 'application/json-patch+json') next = jsonPatch(cur, patch as never) as Obj;
          else if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') next = mergePatch(cur, patch) as Obj;
          else throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got ${type})`);
          // A patch carries a resourceVersion only when the client sent one (optimistic lock).
          const sentRv = (patch as Obj)?.metadata?.resourceVersion;
          if (!sentRv && !(type === 'application/json-patch+json' && JSON.stringify(patch).includes('resourceVersion'))) next.metadata.resourceVersion = cur.metadata.resourceVersion;
          if (dryRun) return sendJson(res, 200, next);
          this.#admit(t, next, cur);
          result = this.store.update(t, ns, next, { subresource: sub === 'status' ? 'status' : undefined, manager });
        }
        this.#afterWrite(t, result);
        return sendJson(res, 200, result);
      }
      case 'DELETE': {
        if (name === undefined) throw new ApiError(405, 'MethodNotAllowed', 'collection delete is not served');
        const opts = body ? (parseJson(body) as { propagationPolicy?: string; preconditions?: { uid?: string } }) : {};
        const gone = this.store.delete(t, ns, name, { propagationPolicy: q.get('propagationPolicy') ?? opts.propagationPolicy, preconditionUid: opts.preconditions?.uid });
        if (t.kind === 'CustomResourceDefinition' && !gone.metadata.deletionTimestamp) this.#unregisterCrd(gone);
        return sendJson(res, 200, gone);
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', `${req.method} is not allowed`);
    }
  }

  #admit(t: ResourceType, obj: Obj, old: Obj | undefined): void {
    if (!this.crdValidator || t.group === '' || CORE.includes(t)) return;
    const crd = this.store.list(this.store.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!).find((c) => {
      const spec = c['spec'] as { group: string; names: { plural: string } };
      return spec.group === t.group && spec.names.plural === t.plural;
    });
    if (crd) this.crdValidator(crd, obj, old);
  }

  /** CRDs: serve the resource and report it Established, like the apiextensions controller. */
  #afterWrite(t: ResourceType, obj: Obj): void {
    if (t.kind !== 'CustomResourceDefinition') return;
    const spec = obj['spec'] as {
      group: string;
      scope: string;
      names: { kind: string; plural: string; singular?: string; shortNames?: string[] };
      versions: { name: string; served: boolean; storage: boolean; subresources?: { status?: unknown } }[];
    };
    for (const v of spec.versions.filter((x) => x.served)) {
      this.store.register({
        group: spec.group,
        version: v.name,
        kind: spec.names.kind,
        plural: spec.names.plural,
        singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
        namespaced: spec.scope === 'Namespaced',
        status: v.subresources?.status !== undefined,
        ...(spec.names.shortNames ? { shortNames: spec.names.shortNames } : {}),
      });
    }
    const st = obj['status'] as { conditions?: { type: string }[] } | undefined;
    if (!st?.conditions?.some((c) => c.type === 'Established')) {
      const now = this.store.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const next = structuredClone(obj);
      next['status'] = {
        conditions: [
          { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found', lastTransitionTime: now },
          { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted', lastTransitionTime: now },
        ],
        acceptedNames: spec.names,
        storedVersions: spec.versions.filter((v) => v.storage).map((v) => v.name),
      };
      next.metadata.resourceVersion = obj.metadata.resourceVersion;
      this.store.update(t, undefined, next, { subresource: 'status', manager: 'apiextensions-controller' });
    }
  }

  #unregisterCrd(crd: Obj): void {
    const spec = crd['spec'] as { group: string; names: { kind: string; plural: string }; versions: { name: string }[] };
    for (const v of spec.versions) {
      const t = this.store.find(spec.group, v.name, spec.names.plural);
      if (!t) continue;
      for (const o of this.store.list(t)) this.store.delete(t, o.metadata.namespace, o.metadata.name);
      this.store.unregister(t);
    }
  }

  #list(res: ServerResponse, t: ResourceType, ns: string | undefined, q: URLSearchParams): void {
    const items = this.store
      .list(t, ns)
      .filter((o) => matchesLabelSelector(o.metadata.labels, q.get('labelSelector') ?? undefined) && matchesFieldSelector(o, q.get('fieldSelector') ?? undefined));
    sendJson(res, 200, { kind: `${t.kind}List`, apiVersion: apiVersionOf(t), metadata: { resourceVersion: String(this.store.resourceVersion) }, items });
  }

  #watch(res: ServerResponse, t: ResourceType, ns: string | undefined, q: URLSearchParams): void {
    const rvParam = q.get('resourceVersion');
    const conn: WatchConn = { t, ns, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined, res };
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);
    if (rvParam && rvParam !== '0' && Number(rvParam) < this.store.compactedRv) {
      write('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${rvParam} (${this.store.compactedRv})`, reason: 'Expired', code: 410 });
      res.end();
      return;
    }
    if (!rvParam || rvParam === '0') {
      for (const o of this.store.list(t, ns)) if (this.#matches(conn, o)) write('ADDED', o);
    } else {
      for (const e of this.store.eventsSince(Number(rvParam), typeKeyOf(t))) if (this.#matches(conn, e.object)) write(e.type, e.object);
    }
    this.#watches.add(conn);
    const timeout = Number(q.get('timeoutSeconds') ?? 0);
    const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
    res.on('close', () => {
      if (timer) clearTimeout(timer);
      this.#watches.delete(conn);
    });
  }

  #matches(w: WatchConn, o: Obj): boolean {
    if (w.t.namespaced && w.ns !== undefined && o.metadata.namespace !== w.ns) return false;
    return matchesLabelSelector(o.metadata.labels, w.labelSelector) && matchesFieldSelector(o, w.fieldSelector);
  }

  #fanOut(e: StoredEvent): void {
    for (const w of this.#watches) {
      if (typeKeyOf(w.t) !== e.typeKey || !this.#matches(w, e.object)) continue;
      w.res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    }
  }

  #groupList(): unknown {
    const groups = new Map<string, Set<string>>();
    for (const t of this.store.types.values()) {
      if (!t.group) continue;
      const g = groups.get(t.group) ?? new Set<string>();
      g.add(t.version);
      groups.set(t.group, g);
    }
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, versions]) => {
        const vs = [...versions].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
        return { name, versions: vs, preferredVersion: vs[0] };
      }),
    };
  }

  #resourceList(group: string, version: string): unknown {
    const types = [...this.store.types.values()].filter((t) => t.group === group && t.version === version);
    if (types.length === 0) throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${group}/${version})`);
    const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    const resources = types.flatMap((t) => {
      const main = { name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs, ...(t.shortNames ? { shortNames: t.shortNames } : {}) };
      return t.status ? [main, { name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }] : [main];
    });
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }
}

function status(e: ApiError): unknown {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: e.message, reason: e.reason, code: e.code };
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    throw new ApiError(400, 'BadRequest', 'request body is not valid JSON');
  }
}

function userAgentManager(req: IncomingMessage): string {
  return String(req.headers['user-agent'] ?? 'unknown').split('/')[0] ?? 'unknown';
}
