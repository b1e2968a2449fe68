/**
 * The admin API through real HTTP against a real `svc server` with two
 * pools of temp-dir drives: every route, golden JSON shapes, every
 * parameter rule's refusal (and that it changes nothing), 403 for
 * anonymous, wrongly signed and expired requests, the `/compat/admin` alias,
 * and docs/admin-api.md against the live answers.
 */
import { readdirSync, readFileSync, statSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../src/api/admin/routes.ts';
import type { PoolStatus, RebalanceStatus } from '../src/object/admin/types.ts';
import { admin, keyShape, shapeMismatches, startTwoPoolServer, type TwoPoolServer, unsigned } from './helpers/admin.ts';
import { docHeading, EXAMPLE_SERVER_ENV, exampleQuery, parseDoc, prepareExamples, ROUTE_EXAMPLES, sanitize } from './helpers/admin-doc.ts';
import { until } from './helpers/heal-server.ts';
import { REPO } from './svc-process.ts';

let s: TwoPoolServer;
beforeAll(async () => {
  s = await startTwoPoolServer(EXAMPLE_SERVER_ENV);
  await prepareExamples(s.url, s.creds);
}, 90_000);
afterAll(async () => {
  await s?.stop();
});

const fixture = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'admin-shapes', `${name}.json`), 'utf8')) as unknown;

/** Every file under the drives (path → size): what a refused request must leave as it was. */
/** Every file under `dir` with its size, leaving out the scanner's usage records (its cycles write them whenever they end). */
function tree(dir: string, out = new Map<string, number>()): Map<string, number> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (!e.isDirectory()) out.set(p, statSync(p).size);
    // Usage snapshots and the staging area under .svc.sys/tmp belong to background work (the
    // scanner, start-up writes finishing), not to what an admin request changed.
    else if (!p.endsWith('/.svc.sys/usage') && !p.endsWith('/.svc.sys/tmp')) tree(p, out);
  }
  return out;
}

/** The tree once start-up writes have settled: two reads 100 ms apart agree. */
async function settledTree(dir: string): Promise<Map<string, number>> {
  let last = tree(dir);
  return until(
    'the data tree to settle',
    () => {
      const now = tree(dir);
      const same = JSON.stringify([...now]) === JSON.stringify([...last]);
      last = now;
      return same ? now : undefined;
    },
    5_000,
    100,
  );
}

/** Numbers that move between two calls on a live machine (free space, memory, clocks). */
const VOLATILE = new Set([
  'currentSize', 'usedSize', 'used', 'totalSize', 'free', 'availspace', 'usedspace', 'totalspace', 'rawFree', 'rawUsed', 'rawTotal',
  'usableFree', 'usableTotal', 'usableUsed', 'total', 'mem_stats', 'uptime', 'generatedAt', 'checkedAt', 'RequestId',
  'clientToken', 'startTime', 'ScannedItemsCount', 'scanner', 'dataUsage', 'objects', 'versions', 'deleteMarkers', 'deletemarkers', 'usage',
]);
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, VOLATILE.has(k) ? '~' : stable(x)]));
  return v;
}

function errorOf(body: string): { Code: string; Message: string; Resource: string; RequestId: string; HostId: string } {
  return JSON.parse(body) as { Code: string; Message: string; Resource: string; RequestId: string; HostId: string };
}

describe('admin API, single node with two pools', () => {
  it('pools/list, pools/status, decommission/status and rebalance/status match the golden shapes (RFC 3339 times, integer nanoseconds)', async () => {
    const list = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/pools/list' })).json() as PoolStatus[];
    expect(list).toHaveLength(2);
    expect(shapeMismatches(list, fixture('pools-list'))).toEqual([]);
    const one = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/pools/status', query: { pool: s.pools[1] } })).json();
    expect(shapeMismatches(one, fixture('pools-status'))).toEqual([]);
    expect(one).toMatchObject({ id: 1, cmdline: s.pools[1] });
    const byId = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/pools/status', query: { pool: '1', 'by-id': 'true' } })).json();
    expect((byId as PoolStatus).cmdline).toBe(s.pools[1]);
    const decom = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/decommission/status' })).json() as { pools: unknown[] };
    expect(shapeMismatches(decom, fixture('decommission-status'))).toEqual([]);
    expect(decom.pools).toHaveLength(2);
    const decomOne = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/decommission/status', query: { pool: '0', 'by-id': 'true' } })).json() as { pools: { id: number }[] };
    expect(decomOne.pools.map((p) => p.id)).toEqual([0]);
    const reb = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/rebalance/status' })).json() as RebalanceStatus;
    expect(shapeMismatches(reb, fixture('rebalance-status'))).toEqual([]);
    // An idle cluster answers idle records, never NotImplemented.
    expect(reb).toMatchObject({ id: '', status: 'idle', stoppedAt: '0001-01-01T00:00:00Z' });
    expect(reb.pools.map((p) => [p.status, p.progress.elapsed, p.progress.eta])).toEqual([
      ['none', 0, 0],
      ['none', 0, 0],
    ]);
    // The MinIO PoolStatus keys mc reads, with their types.
    for (const p of list) {
      expect(p.decommissionInfo).toMatchObject({ startTime: '0001-01-01T00:00:00Z', complete: false, failed: false, canceled: false, objectsDecommissioned: 0 });
      expect(p.lastUpdate).toBe('0001-01-01T00:00:00Z');
    }
  });

  // After the idle-record checks: the rebalance start example starts (and, the pools being equally full, completes) a real rebalance.
  it('answers every route over real HTTP with JSON', async () => {
    for (const r of ADMIN_ROUTES) {
      const e = ROUTE_EXAMPLES[r.op];
      const res = await admin(s.url, s.creds, { method: e.method, path: e.path, query: exampleQuery(e, s.pools), ...(e.body ? { body: e.body } : {}) });
      expect(res.status, `${r.op}: ${res.body}`).toBe(e.status);
      expect(res.headers['x-svc-admin-node']).toBe(`127.0.0.1:${s.run.port}`);
      if (res.body !== '') {
        expect(res.headers['content-type']).toBe('application/json');
        expect(() => res.json()).not.toThrow();
      }
    }
  });

  it('reports measured capacity: usable size is the drives statfs size × K/N', async () => {
    const list = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/pools/list' })).json() as PoolStatus[];
    for (const [i, p] of list.entries()) {
      const raw = [1, 2, 3, 4].reduce((a, d) => {
        const st = statfsSync(join(s.base, `p${i + 1}`, `d${d}`));
        return a + st.blocks * st.bsize;
      }, 0);
      expect(p.totalSize).toBe(Math.floor(raw * (2 / 4)));
      expect(p.decommissionInfo.totalSize).toBe(p.totalSize);
      expect(p.currentSize).toBeGreaterThan(0);
      expect(p.usedSize).toBeGreaterThan(0);
      expect(p.drivesOnline).toBe(4);
      expect(p.leader).toBe(`127.0.0.1:${s.run.port}`);
    }
    const snap = (await admin(s.url, s.creds, { method: 'GET', path: 'v4/cluster/snapshot' })).json() as {
      summary: { drives: number; drivesOnline: number };
      pools: { sets: { drives: { endpoint: string; state: string; slot: { pool: number; set: number; index: number }; uuid: string; total: number }[] }[] }[];
    };
    expect(snap.summary).toMatchObject({ drives: 8, drivesOnline: 8 });
    const drives = snap.pools.flatMap((p) => p.sets.flatMap((x) => x.drives));
    for (const d of drives) {
      const fmt = JSON.parse(readFileSync(join(d.endpoint, '.svc.sys', 'format.json'), 'utf8')) as { erasure: { this: string; sets: string[][] } };
      expect(d.uuid).toBe(fmt.erasure.this);
      expect(fmt.erasure.sets[d.slot.set]![d.slot.index]).toBe(d.uuid);
      expect(d.state).toBe('online');
      expect(d.total).toBe(statfsSync(d.endpoint).blocks * statfsSync(d.endpoint).bsize);
    }
  });

  it('refuses every parameter-rule violation with a JSON error and changes nothing', async () => {
    const before = await settledTree(s.base);
    const cases: [string, Parameters<typeof admin>[2], number, string, RegExp?][] = [
      ['unknown key on a mutation', { method: 'POST', path: 'v3/pools/decommission', query: { pool: '1', 'by-id': 'true', force: 'yes' } }, 400, 'InvalidArgument', /unknown query parameter "force"/],
      ['by-id=maybe', { method: 'POST', path: 'v3/pools/cancel', query: { pool: '1', 'by-id': 'maybe' } }, 400, 'InvalidArgument', /by-id/],
      ['by-id=maybe on a status route', { method: 'GET', path: 'v3/pools/status', query: { pool: '1', 'by-id': 'maybe' } }, 400, 'InvalidArgument'],
      ['unknown pool', { method: 'POST', path: 'v3/pools/decommission', query: { pool: '/nowhere/d{1...4}' } }, 400, 'InvalidArgument', /not found/],
      ['unknown pool index', { method: 'GET', path: 'v3/pools/status', query: { pool: '2', 'by-id': 'true' } }, 400, 'InvalidArgument', /valid indices are 0 to 1/],
      ['pool missing', { method: 'GET', path: 'v3/pools/status' }, 400, 'InvalidArgument', /required/],
      ['query string on rebalance start', { method: 'POST', path: 'v3/rebalance/start', query: { id: 'x' } }, 400, 'InvalidArgument', /no query parameters/],
      ['query string on rebalance stop', { method: 'POST', path: 'v3/rebalance/stop', query: { force: 'true' } }, 400, 'InvalidArgument'],
      ['duplicate target in one batch', { method: 'POST', path: 'v3/pools/decommission', query: { pool: '1,1', 'by-id': 'true' } }, 400, 'InvalidArgument', /twice/],
      ['every pool', { method: 'POST', path: 'v3/pools/decommission', query: { pool: '0,1', 'by-id': 'true' } }, 400, 'XSvcDecommissionNotAllowed', /at least one active pool must remain/],
      ['cancel without a decommission', { method: 'POST', path: 'v3/pools/cancel', query: { pool: '0', 'by-id': 'true' } }, 400, 'XSvcDecommissionNotAllowed', /nothing to cancel/],
      ['root heal without recursive', { method: 'POST', path: 'v3/heal/', body: '{}' }, 400, 'InvalidArgument', /recursive=true/],
      ['heal readRepair=true', { method: 'POST', path: 'v3/heal/', body: '{"recursive":true,"readRepair":true}' }, 400, 'InvalidArgument', /readRepair/],
      ['heal unknown query key', { method: 'POST', path: 'v3/heal/', query: { sinceSeq: '1' }, body: '{"recursive":true}' }, 400, 'InvalidArgument'],
      ['heal forceStart with forceStop', { method: 'POST', path: 'v3/heal/', query: { forceStart: 'true', forceStop: 'true' } }, 400, 'InvalidRequest'],
      ['heal status with an unknown token', { method: 'POST', path: 'v3/heal/', query: { clientToken: 'nope' } }, 400, 'XSvcHealInvalidClientToken'],
      ['heal set without pool', { method: 'POST', path: 'v3/heal/', body: '{"set":0}' }, 400, 'InvalidArgument'],
      ['unknown route', { method: 'GET', path: 'v3/nothing' }, 404, 'XSvcAdminNoSuchRoute'],
      ['wrong method', { method: 'POST', path: 'v3/pools/list' }, 405, 'MethodNotAllowed'],
    ];
    for (const [name, req, status, code, msg] of cases) {
      const res = await admin(s.url, s.creds, req);
      expect(res.status, `${name}: ${res.body}`).toBe(status);
      expect(res.headers['content-type'], name).toBe('application/json');
      const e = errorOf(res.body);
      expect(e.Code, name).toBe(code);
      if (msg) expect(e.Message, name).toMatch(msg);
      expect(e.Resource).toBe(`/svc/admin/${req.path}`);
      expect(e.RequestId).toMatch(/^[0-9A-F]{16}$/);
      expect(e.HostId.length).toBeGreaterThan(0);
    }
    // Clearing a pool that has no entry succeeds and writes nothing either.
    const clear = await admin(s.url, s.creds, { method: 'POST', path: 'v3/pools/clear', query: { pool: '1', 'by-id': 'true' } });
    expect(clear.status).toBe(200);
    expect(tree(s.base)).toEqual(before);
    const list = (await admin(s.url, s.creds, { method: 'GET', path: 'v3/pools/list' })).json() as PoolStatus[];
    expect(list.map((p) => [p.decommissionStatus, p.status, p.lastUpdate])).toEqual([
      ['none', 'active', '0001-01-01T00:00:00Z'],
      ['none', 'active', '0001-01-01T00:00:00Z'],
    ]);
  });

  it('refuses a duplicated query parameter (rule 3) and an ambiguous one on a status route', async () => {
    const { signHeaders, rawRequest } = await import('./helpers/sigv4-signer.ts');
    const { createHash } = await import('node:crypto');
    for (const [method, path] of [
      ['POST', '/svc/admin/v3/pools/cancel'],
      ['GET', '/svc/admin/v3/pools/status'],
    ] as const) {
      // Sign with the smithy signer over a path whose query repeats `pool`.
      const headers = await signHeaders(s.url, s.creds, {
        method,
        path,
        query: { pool: ['0', '1'] as unknown as string, 'by-id': 'true' },
        headers: { 'x-amz-content-sha256': createHash('sha256').update('').digest('hex') },
      });
      const res = await rawRequest(s.url, { method, path: `${path}?by-id=true&pool=0&pool=1` }, headers);
      expect(res.status, res.body).toBe(400);
      expect(errorOf(res.body).Message).toMatch(/more than once/);
    }
  });

  it('answers 403 to anonymous, wrongly signed and expired requests, and they change nothing', async () => {
    const before = await settledTree(s.base);
    for (const req of [
      { method: 'GET', path: 'v3/pools/list' },
      { method: 'POST', path: 'v3/pools/clear', query: { pool: '1', 'by-id': 'true' } },
      { method: 'POST', path: 'v3/rebalance/start' },
    ] as const) {
      const anon = await unsigned(s.url, req);
      expect(anon.status).toBe(403);
      expect(errorOf(anon.body).Code).toBe('AccessDenied');
      expect(anon.headers['content-type']).toBe('application/json');
      const wrong = await admin(s.url, { accessKey: s.creds.accessKey, secretKey: 'not-the-secret' }, req);
      expect(wrong.status).toBe(403);
      expect(errorOf(wrong.body).Code).toBe('SignatureDoesNotMatch');
      const unknownKey = await admin(s.url, { accessKey: 'nobody', secretKey: 'x' }, req);
      expect(unknownKey.status).toBe(403);
      expect(errorOf(unknownKey.body).Code).toBe('InvalidAccessKeyId');
      const expired = await admin(s.url, s.creds, { ...req, signingDate: new Date(Date.now() - 20 * 60_000) });
      expect(expired.status).toBe(403);
      expect(errorOf(expired.body).Code).toBe('RequestTimeTooSkewed');
      for (const prefix of ['/compat/admin/']) expect((await unsigned(s.url, { ...req, prefix })).status).toBe(403);
    }
    expect(tree(s.base)).toEqual(before);
  });

  it('/compat/admin/... answers exactly as /svc/admin/...', async () => {
    for (const r of ADMIN_ROUTES) {
      const e = ROUTE_EXAMPLES[r.op];
      const req = { method: e.method, path: e.path, query: exampleQuery(e, s.pools), ...(e.body ? { body: e.body } : {}) };
      const a = await admin(s.url, s.creds, req);
      const b = await admin(s.url, s.creds, { ...req, prefix: '/compat/admin/' });
      expect(b.status, r.op).toBe(a.status);
      if (a.body === '') {
        expect(b.body).toBe('');
        continue;
      }
      if (r.op === 'RebalanceStart' || r.op === 'BackgroundJobs' || r.op === 'MetricsHistory') {
        // Each start is a new rebalance with its own id; background workers move on between two calls,
        // and so do the minute's counters they feed (heal tasks, scanned objects).
        expect(keyShape(b.json())).toEqual(keyShape(a.json()));
        continue;
      }
      const ja = stable(a.json()) as Record<string, unknown>;
      const jb = stable(b.json()) as Record<string, unknown>;
      if (a.status >= 400) {
        // Errors name the resource as requested.
        expect(jb['Resource']).toBe(`/compat/admin/${e.path}`);
        ja['Resource'] = jb['Resource'];
      }
      expect(jb, r.op).toEqual(ja);
    }
  });

  it('docs/admin-api.md documents every route, and each documented answer has the live answer\'s fields and types', async () => {
    const doc = parseDoc(readFileSync(join(REPO, 'docs', 'admin-api.md'), 'utf8'));
    expect([...doc.keys()].sort()).toEqual(ADMIN_ROUTES.map(docHeading).sort());
    for (const r of ADMIN_ROUTES) {
      const e = ROUTE_EXAMPLES[r.op];
      const documented = doc.get(docHeading(r))!;
      const live = await admin(s.url, s.creds, { method: e.method, path: e.path, query: exampleQuery(e, s.pools), ...(e.body ? { body: e.body } : {}) });
      expect(documented.status, r.op).toBe(live.status);
      if (live.body === '') {
        expect(documented.body, r.op).toBeUndefined();
        continue;
      }
      const liveBody = JSON.parse(sanitize(live.body, s.base, s.run.port)) as unknown;
      expect(keyShape(documented.body), `${r.op}: regenerate with node node/scripts/gen-admin-api-doc.ts`).toEqual(keyShape(liveBody));
    }
  });
});
