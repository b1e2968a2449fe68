/**
 * An in-process Kubernetes API server over `Store`, spoken to by the real
 * `@kubernetes/client-node`, `helm` and `kubectl` (so informers, watches and
 * server-side apply go through real HTTP). Discovery, list/watch with
 * resourceVersions and 410 Gone (also once the bounded watch history was
 * trimmed past a watcher), create/replace/patch (JSON merge, JSON patch,
 * strategic merge with the built-in kinds' list semantics, apply) with 409
 * on stale writes, status subresources, finalizers, background GC,
 * CustomResourceDefinitions (creating one serves its resource), and server
 * side printing (Tables with the CRD's printer columns).
 *
 * Strict where Kubernetes is strict (`builtins.ts`): time formats per field
 * (a Lease with millisecond MicroTimes is refused), PUT without
 * resourceVersion where the kind requires it, immutable fields, strategic
 * merge patch refused for custom resources. `enableRbac()` turns on bearer
 * token authentication and RBAC authorization from the stored roles
 * (`rbac.ts`).
 *
 * Fault injection for tests: latency, scripted failures (500/429/...), and
 * dropping every open watch.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { decodeProtobuf } from './protobuf.ts';
import { allowsUnconditionalUpdate, BUILTIN_TYPES, checkImmutable, checkTimes, isBuiltin } from './builtins.ts';
import { Rbac, type RequestAttributes, serviceAccountUser, type UserInfo } from './rbac.ts';
import { ApiError, apiVersionOf, jsonPatch, matchesFieldSelector, matchesLabelSelector, mergePatch, type Obj, type ResourceType, Store, type StoredEvent, typeKeyOf } from './store.ts';
import { crdLists, strategicMerge, DEFAULT_LISTS } from './structured.ts';
import { type PrinterColumn, toTable, wantsTable } from './table.ts';

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
  /** RBAC, once `enableRbac()` was called (until then every request is an administrator's). */
  rbac: Rbac | undefined;
  readonly #tokens = new Map<string, UserInfo>();
  static readonly ADMIN_TOKEN = 'fake-apiserver-admin';

  /** PEM of the CA that signed the serving certificate (TLS mode). */
  readonly caPem: string | undefined;

  private constructor(store: Store, tls: { cert: string; key: string; ca: string } | undefined) {
    this.store = store;
    for (const t of BUILTIN_TYPES) store.register(t);
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.#handle(req, res);
    this.#server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, handler) : createServer(handler);
    this.caPem = tls?.ca;
    store.onEvent((e) => this.#fanOut(e));
  }

  /**
   * `tls: true` serves HTTPS with a certificate for 127.0.0.1 from a CA of
   * its own (kubeconfigs carry it): Go clients (helm, kubectl) send bearer
   * tokens only over TLS, as every real API server serves.
   */
  static async start(opts: { now?: () => Date; tls?: boolean } = {}): Promise<FakeApiServer> {
    let tls: { cert: string; key: string; ca: string } | undefined;
    if (opts.tls) {
      const { createCa, issueCertificate } = await import('../../src/tls/generated.ts');
      const ca = await createCa('fake-apiserver', new Date());
      const leaf = await issueCertificate(ca, 'fake-apiserver', { dns: ['localhost'], ips: ['127.0.0.1'] }, new Date(), 24 * 3_600_000);
      tls = { cert: leaf.cert, key: leaf.key, ca: ca.cert };
    }
    const s = new FakeApiServer(new Store(opts.now), tls);
    s.#server.listen(0, '127.0.0.1');
    await once(s.#server, 'listening');
    s.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(s.#server.address() as AddressInfo).port}`;
    return s;
  }

  /** A raw request as an administrator (what `kubectl create --raw` would send), through TLS when served. */
  request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = { 'content-type': contentType };
    if (this.rbac) headers['authorization'] = `Bearer ${FakeApiServer.ADMIN_TOKEN}`;
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const send = this.caPem ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(`${this.url}${path}`, { method, headers, ...(this.caPem ? { ca: this.caPem } : {}) }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Turns on token authentication and RBAC; the admin token (system:masters) is what `kubeConfig()` uses by default. */
  enableRbac(): Rbac {
    this.rbac ??= new Rbac(this.store);
    this.#tokens.set(FakeApiServer.ADMIN_TOKEN, { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
    return this.rbac;
  }

  /** A token authenticating as ServiceAccount `namespace/name` (what the kubelet would mount). */
  serviceAccountToken(namespace: string, name: string): string {
    const token = `sa-${namespace}-${name}-${this.#tokens.size}`;
    this.#tokens.set(token, serviceAccountUser(namespace, name));
    return token;
  }

  kubeConfig(token?: string): KubeConfig {
    const kc = new KubeConfig();
    const t = token ?? (this.rbac ? FakeApiServer.ADMIN_TOKEN : undefined);
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, ...(this.caPem ? { caData: Buffer.from(this.caPem).toString('base64') } : { skipTLSVerify: true }) }],
      users: [{ name: 'fake', ...(t ? { token: t } : {}) }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** A kubeconfig file body pointing at this server (for child processes, helm and kubectl). */
  kubeConfigYaml(token?: string): string {
    const t = token ?? (this.rbac ? FakeApiServer.ADMIN_TOKEN : undefined);
    return [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: fake, cluster: {server: "${this.url}", ${this.caPem ? `certificate-authority-data: "${Buffer.from(this.caPem).toString('base64')}"` : 'insecure-skip-tls-verify: true'}}}]`,
      `users: [{name: fake, user: {${t ? `token: "${t}"` : ''}}}]`,
      'contexts: [{name: fake, context: {cluster: fake, user: fake, namespace: default}}]',
      'current-context: fake',
      '',
    ].join('\n');
  }

  /** The user a request authenticates as (undefined: RBAC off, every request is allowed). */
  #authenticate(req: IncomingMessage): UserInfo | undefined {
    if (!this.rbac) return undefined;
    const m = /^Bearer\s+(\S+)$/.exec(String(req.headers['authorization'] ?? ''));
    const user = m ? this.#tokens.get(m[1]!) : undefined;
    if (!user) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    return user;
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
      const raw = await readBody(req);
      const ctype = String(req.headers['content-type'] ?? '').split(';')[0]!.trim();
      // Protobuf bodies (Helm's release Secrets) become the JSON they stand for; answers are JSON (clients accept it second).
      const body = ctype === 'application/vnd.kubernetes.protobuf' ? JSON.stringify(decodeProtobuf(raw)) : raw.toString('utf8');
      if (ctype === 'application/vnd.kubernetes.protobuf') req.headers['content-type'] = 'application/json';
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
    const user = this.#authenticate(req);
    const path = url.pathname.replace(/\/+$/, '');
    const segs = path.split('/').filter(Boolean);
    // Discovery is open to every authenticated user (system:discovery).
    if (path === '/api') return sendJson(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (path === '/apis') return sendJson(res, 200, this.#groupList());
    if (path === '/version') return sendJson(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.0-fake', platform: 'linux/amd64' });
    if (path === '/openapi/v3' || path.startsWith('/openapi/v3/')) return sendJson(res, 200, this.#openApiV3(path));
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
    const watching = q.get('watch') === 'true' || q.get('watch') === '1';
    // A list or watch narrowed to one name by field selector is authorized for that name.
    const selectedName = /(?:^|,)metadata\.name=([^,]+)/.exec(q.get('fieldSelector') ?? '')?.[1];
    const verb =
      req.method === 'GET' ? (name !== undefined ? 'get' : watching ? 'watch' : 'list') : req.method === 'POST' ? 'create' : req.method === 'PUT' ? 'update' : req.method === 'PATCH' ? 'patch' : req.method === 'DELETE' ? (name === undefined ? 'deletecollection' : 'delete') : '';
    const attrs: RequestAttributes = { verb, apiGroup: group, resource: sub ? `${plural}/${sub}` : plural!, name: name ?? selectedName, namespace: t.namespaced ? ns : undefined };
    if (user) this.rbac!.authorize(user, attrs);
    const namespaced = (o: Obj) => (t.namespaced ? (ns ?? o?.metadata?.namespace) : undefined);
    switch (req.method) {
      case 'GET': {
        if (name === undefined) {
          if (watching) return this.#watch(res, t, ns, q);
          return this.#list(req, res, t, ns, q);
        }
        const obj = this.store.get(t, ns, name);
        if (wantsTable(req.headers['accept'])) return sendJson(res, 200, toTable([obj], this.#printerColumns(t), String(this.store.resourceVersion)));
        return sendJson(res, 200, obj);
      }
      case 'POST': {
        if (name !== undefined) throw new ApiError(405, 'MethodNotAllowed', 'POST to a named resource');
        const obj = parseJson(body) as Obj;
        if (t.namespaced && ns !== undefined && obj?.metadata?.namespace !== undefined && obj.metadata.namespace !== ns) {
          throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
        }
        if (t.namespaced && t.kind !== 'Namespace') {
          const nsName = ns ?? obj?.metadata?.namespace;
          if (nsName === undefined || !this.store.tryGet(this.store.find('', 'v1', 'namespaces')!, undefined, nsName)) throw new ApiError(404, 'NotFound', `namespaces "${nsName ?? ''}" not found`);
        }
        if (!obj?.metadata?.name && typeof obj?.metadata?.['generateName'] === 'string') obj.metadata.name = `${obj.metadata['generateName'] as string}${Math.random().toString(36).slice(2, 7)}`;
        this.#decode(t, obj);
        if (dryRun) return sendJson(res, 201, obj);
        this.#admit(t, obj, undefined);
        const created = this.store.create(t, namespaced(obj), obj, manager);
        this.#afterWrite(t, created);
        return sendJson(res, 201, created);
      }
      case 'PUT': {
        const obj = parseJson(body) as Obj;
        if (name === undefined || obj?.metadata?.name !== name) throw new ApiError(400, 'BadRequest', 'the name of the object does not match the name on the URL');
        this.#decode(t, obj);
        const old = this.store.get(t, ns, name);
        if (!obj.metadata.resourceVersion && !allowsUnconditionalUpdate(t)) {
          throw new ApiError(422, 'Invalid', `${t.kind} "${name}" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`);
        }
        const next = sub === 'status' ? { ...old, status: obj['status'] } : { ...obj, status: old['status'] };
        if (sub !== 'status') checkImmutable(t, next, old);
        this.#admit(t, next, old);
        if (dryRun) return sendJson(res, 200, next);
        const updated = this.store.update(t, ns, obj, { subresource: sub === 'status' ? 'status' : undefined, manager });
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
          this.#decode(t, cfg);
          const old = this.store.tryGet(t, ns, name);
          if (q.get('fieldManager') === null) throw new ApiError(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
          // Apply that creates is authorized as create too (Kubernetes: "patch" alone cannot create).
          if (!old && user) this.rbac!.authorize(user, { ...attrs, verb: 'create' });
          if (!old && t.namespaced && !this.store.tryGet(this.store.find('', 'v1', 'namespaces')!, undefined, ns ?? '')) throw new ApiError(404, 'NotFound', `namespaces "${ns ?? ''}" not found`);
          const merged = old ? (mergePatch(old, cfg) as Obj) : cfg;
          if (old && sub !== 'status') checkImmutable(t, merged, old);
          this.#admit(t, merged, old);
          if (dryRun) return sendJson(res, 200, merged);
          result = this.store.apply(t, ns, cfg, manager, q.get('force') === 'true', sub === 'status' ? 'status' : undefined);
        } else {
          const cur = this.store.get(t, ns, name);
          const patch = parseJson(body);
          let next: Obj;
          if (type === 'application/json-patch+json') next = jsonPatch(cur, patch as never) as Obj;
          else if (type === 'application/merge-patch+json') next = mergePatch(cur, patch) as Obj;
          else if (type === 'application/strategic-merge-patch+json') {
            if (!isBuiltin(t)) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
            next = strategicMerge(cur, patch, t.lists ?? DEFAULT_LISTS) as Obj;
          } else throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got ${type})`);
          this.#decode(t, next);
          // A patch carries a resourceVersion only when the client sent one (optimistic lock).
          const sentRv = (patch as Obj)?.metadata?.resourceVersion;
          if (!sentRv && !(type === 'application/json-patch+json' && JSON.stringify(patch).includes('resourceVersion'))) next.metadata.resourceVersion = cur.metadata.resourceVersion;
          if (sub !== 'status') checkImmutable(t, next, cur);
          if (dryRun) return sendJson(res, 200, next);
          this.#admit(t, next, cur);
          result = this.store.update(t, ns, next, { subresource: sub === 'status' ? 'status' : undefined, manager });
        }
        this.#afterWrite(t, result);
        return sendJson(res, 200, result);
      }
      case 'DELETE': {
        if (name === undefined) throw new ApiError(405, 'MethodNotAllowed', 'collection delete is not served');
        const opts = body ? (parseJson(body) as { propagationPolicy?: string; preconditions?: { uid?: string }; gracePeriodSeconds?: number }) : {};
        const graceParam = q.get('gracePeriodSeconds');
        const grace = graceParam !== null ? Number(graceParam) : opts.gracePeriodSeconds;
        const gone = this.store.delete(t, ns, name, { propagationPolicy: q.get('propagationPolicy') ?? opts.propagationPolicy, preconditionUid: opts.preconditions?.uid, gracePeriodSeconds: grace });
        if (t.kind === 'CustomResourceDefinition' && !gone.metadata.deletionTimestamp) this.#unregisterCrd(gone);
        return sendJson(res, 200, gone);
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', `${req.method} is not allowed`);
    }
  }

  /** What decoding the request body does on a real server: time fields checked (and Time normalized). */
  #decode(t: ResourceType, obj: Obj): void {
    if (!obj || typeof obj !== 'object' || typeof obj.metadata !== 'object') throw new ApiError(400, 'BadRequest', `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}: missing metadata`);
    checkTimes(t, obj);
  }

  #admit(t: ResourceType, obj: Obj, old: Obj | undefined): void {
    if (!this.crdValidator || isBuiltin(t)) return;
    const crd = this.#crdOf(t);
    if (crd) this.crdValidator(crd, obj, old);
  }

  #crdOf(t: ResourceType): Obj | undefined {
    return this.store.list(this.store.find('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!).find((c) => {
      const spec = c['spec'] as { group: string; names: { plural: string } };
      return spec.group === t.group && spec.names.plural === t.plural;
    });
  }

  #printerColumns(t: ResourceType): PrinterColumn[] {
    const crd = isBuiltin(t) ? undefined : this.#crdOf(t);
    const v = (crd?.['spec'] as { versions?: { name: string; additionalPrinterColumns?: PrinterColumn[] }[] } | undefined)?.versions?.find((x) => x.name === t.version);
    return v?.additionalPrinterColumns ?? [];
  }

  /** CRDs: serve the resource and report it Established, like the apiextensions controller. */
  #afterWrite(t: ResourceType, obj: Obj): void {
    if (t.kind !== 'CustomResourceDefinition') return;
    const spec = obj['spec'] as {
      group: string;
      scope: string;
      names: { kind: string; plural: string; singular?: string; shortNames?: string[] };
      versions: { name: string; served: boolean; storage: boolean; subresources?: { status?: unknown }; schema?: { openAPIV3Schema?: Parameters<typeof crdLists>[0] } }[];
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
        lists: crdLists(v.schema?.openAPIV3Schema),
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

  #list(req: IncomingMessage, res: ServerResponse, t: ResourceType, ns: string | undefined, q: URLSearchParams): void {
    const items = this.store
      .list(t, ns)
      .filter((o) => matchesLabelSelector(o.metadata.labels, q.get('labelSelector') ?? undefined) && matchesFieldSelector(o, q.get('fieldSelector') ?? undefined));
    const rv = String(this.store.resourceVersion);
    if (wantsTable(req.headers['accept'])) return sendJson(res, 200, toTable(items, this.#printerColumns(t), rv));
    sendJson(res, 200, { kind: `${t.kind}List`, apiVersion: apiVersionOf(t), metadata: { resourceVersion: rv }, items });
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
    const initial = q.get('sendInitialEvents') === 'true';
    if (initial || !rvParam || rvParam === '0') {
      for (const o of this.store.list(t, ns)) if (this.#matches(conn, o)) write('ADDED', o);
      // Streaming lists (client-go's WatchList): the end of the initial state is a BOOKMARK so marked.
      if (initial) {
        write('BOOKMARK', { kind: t.kind, apiVersion: apiVersionOf(t), metadata: { resourceVersion: String(this.store.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } } });
      }
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

  /**
   * OpenAPI v3 as clients fetch it for validation: the discovery document,
   * then one document per group/version. Schemas are permissive objects
   * carrying their group/version/kind (this server validates on write, as
   * the real one does with its own schemas); CRDs add theirs.
   */
  #openApiV3(path: string): unknown {
    const gvs = new Map<string, ResourceType[]>();
    for (const t of this.store.types.values()) {
      const key = t.group ? `apis/${t.group}/${t.version}` : `api/${t.version}`;
      gvs.set(key, [...(gvs.get(key) ?? []), t]);
    }
    if (path === '/openapi/v3') return { paths: Object.fromEntries([...gvs.keys()].map((k) => [k, { serverRelativeURL: `/openapi/v3/${k}?hash=${this.store.resourceVersion}` }])) };
    const types = gvs.get(path.slice('/openapi/v3/'.length));
    if (!types) throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${path})`);
    const schemas: Record<string, unknown> = {};
    const paths: Record<string, unknown> = {};
    // Writes declare the fieldValidation parameter: clients then validate on the server (this one) instead of downloading schemas.
    const param = [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }];
    for (const t of types) {
      const gvk = { group: t.group, version: t.version, kind: t.kind };
      const prefix = `/${path.slice('/openapi/v3/'.length)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}`;
      paths[prefix] = { post: { 'x-kubernetes-action': 'post', 'x-kubernetes-group-version-kind': gvk, parameters: param, responses: {} } };
      paths[`${prefix}/{name}`] = {
        put: { 'x-kubernetes-action': 'put', 'x-kubernetes-group-version-kind': gvk, parameters: param, responses: {} },
        patch: { 'x-kubernetes-action': 'patch', 'x-kubernetes-group-version-kind': gvk, parameters: param, responses: {} },
      };
      const crd = isBuiltin(t) ? undefined : this.#crdOf(t);
      const v = (crd?.['spec'] as { versions?: { name: string; schema?: { openAPIV3Schema?: unknown } }[] } | undefined)?.versions?.find((x) => x.name === t.version);
      const schema = (v?.schema?.openAPIV3Schema as Record<string, unknown> | undefined) ?? { type: 'object' };
      schemas[`${t.group || 'core'}.${t.version}.${t.kind}`] = { ...schema, 'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: t.kind }] };
    }
    return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths, components: { schemas } };
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

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
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
