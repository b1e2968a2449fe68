/**
 * Test helpers for the admin API: signed admin requests over real HTTP
 * (signed by @smithy/signature-v4, with the payload hash madmin sends), a
 * JSON shape checker for golden fixtures, and a two-pool `svc server`.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runSvc, type SvcRun, tempDir } from '../svc-process.ts';
import { rawRequest, type RawResponse, signHeaders } from './sigv4-signer.ts';

export interface Creds {
  accessKey: string;
  secretKey: string;
}

export interface AdminRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path after the admin prefix, e.g. `v3/pools/list`. */
  path: string;
  query?: Record<string, string>;
  body?: string;
  /** `/svc/admin/` (default) or `/compat/admin/`. */
  prefix?: string;
  signingDate?: Date;
}

export async function admin(endpoint: string, creds: Creds, r: AdminRequest): Promise<RawResponse & { json: () => unknown }> {
  const body = r.body ?? '';
  const raw = {
    method: r.method,
    path: `${r.prefix ?? '/svc/admin/'}${r.path}`,
    query: r.query ?? {},
    headers: { 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') },
    body,
  };
  const headers = await signHeaders(endpoint, creds, raw, r.signingDate);
  const res = await rawRequest(endpoint, raw, headers);
  return { ...res, json: () => JSON.parse(res.body) as unknown };
}

/** Sends a request with exactly these headers (no signing). */
export function unsigned(endpoint: string, r: AdminRequest, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(endpoint, { method: r.method, path: `${r.prefix ?? '/svc/admin/'}${r.path}`, query: r.query ?? {}, body: r.body ?? '' }, headers);
}

/**
 * Golden JSON shapes: a fixture is JSON where each leaf is a type name
 * (`string`, `rfc3339`, `integer`, `number`, `boolean`, `null`, or
 * alternatives `null|string`), an array holds one element shape (every
 * element must match it; empty arrays match), and an object must have
 * exactly the fixture's keys. Returns the mismatches (empty = match).
 */
export function shapeMismatches(value: unknown, shape: unknown, at = '$'): string[] {
  if (typeof shape === 'string') {
    const ok = shape.split('|').some((t) => leafMatches(value, t));
    return ok ? [] : [`${at}: expected ${shape}, got ${JSON.stringify(value)?.slice(0, 80)}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${at}: expected an array`];
    return value.flatMap((v, i) => shapeMismatches(v, shape[0], `${at}[${i}]`));
  }
  if (typeof shape === 'object' && shape !== null) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${at}: expected an object`];
    const want = Object.keys(shape).sort();
    const got = Object.keys(value).sort();
    const out: string[] = [];
    for (const k of want) if (!got.includes(k)) out.push(`${at}.${k}: missing`);
    for (const k of got) if (!want.includes(k)) out.push(`${at}.${k}: not in the fixture`);
    for (const k of want) if (got.includes(k)) out.push(...shapeMismatches((value as Record<string, unknown>)[k], (shape as Record<string, unknown>)[k], `${at}.${k}`));
    return out;
  }
  return [`${at}: bad fixture`];
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function leafMatches(v: unknown, t: string): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string';
    case 'rfc3339':
      return typeof v === 'string' && RFC3339.test(v);
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      return false;
  }
}

/** Object keys and leaf JSON types, arrays by their first element: compares a doc example with a live answer. */
export function keyShape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [keyShape(v[0])];
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, keyShape(x)]).sort(([a], [b]) => String(a).localeCompare(String(b))));
  return v === null ? 'null' : typeof v;
}

export interface TwoPoolServer {
  readonly run: SvcRun;
  readonly url: string;
  readonly base: string;
  readonly pools: [string, string];
  readonly creds: Creds;
  stop(): Promise<void>;
}

/** A real `svc server` with two pools of four temp-dir drives each. */
export async function startTwoPoolServer(env: Record<string, string> = {}): Promise<TwoPoolServer> {
  const base = tempDir('admin');
  for (const p of ['p1', 'p2']) for (let d = 1; d <= 4; d++) mkdirSync(join(base, p, `d${d}`), { recursive: true });
  const pools: [string, string] = [`${base}/p1/d{1...4}`, `${base}/p2/d{1...4}`];
  const creds = { accessKey: 'adminroot', secretKey: 'admin-root-secret' };
  const run = await runSvc(['server', ...pools], { SVC_ACCESS_KEY: creds.accessKey, SVC_SECRET_KEY: creds.secretKey, SVC_CONSOLE_ENABLE: 'false', ...env });
  const url = `http://127.0.0.1:${run.port}`;
  const end = Date.now() + 30_000;
  for (;;) {
    if (run.child.exitCode !== null) throw new Error(`svc server exited: ${run.stderr()}${run.stdout().slice(-2000)}`);
    const ok = await fetch(`${url}/health/ready`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > end) throw new Error(`svc server not ready: ${run.stdout().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    run,
    url,
    base,
    pools,
    creds,
    async stop() {
      await run.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
