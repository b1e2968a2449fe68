/**
 * `svc ping [target]` (GET /health) and `svc ready [target]` (GET
 * /health/ready): the client side of the health probes. The target is a
 * server URL, an alias (`svc alias set`), or, when omitted, `SVC_ENDPOINT`.
 * Exit 0 when the probe answers 200, 1 for any other answer, 2 for a usage
 * problem, 3 when the server cannot be reached (the admin client's codes).
 */
import { fetch } from 'undici';
import { networkReason } from './admin/client.ts';
import { ALIAS_NAME, readAliases, UsageError } from './admin/config.ts';
import { certificateAdvice, type ClientTlsOptions, tlsDispatcher } from './client-tls.ts';

export interface ProbeResult {
  readonly status: number;
  readonly body: string;
}

export function probeUrl(base: string, path: '/health' | '/health/ready'): URL {
  let u: URL;
  try {
    u = new URL(base.includes('://') ? base : `http://${base}`);
  } catch {
    throw new UsageError(`invalid server URL "${base}"; expected e.g. http://127.0.0.1:9000`);
  }
  return new URL(path, u);
}

export async function probe(base: string, path: '/health' | '/health/ready', timeoutMs = 5000, tls: ClientTlsOptions = { certsDir: undefined, insecure: false }): Promise<ProbeResult> {
  const url = probeUrl(base, path);
  const dispatcher = url.protocol === 'https:' ? await tlsDispatcher(tls) : undefined;
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), ...(dispatcher ? { dispatcher } : {}) });
  return { status: res.status, body: await res.text() };
}

/** The server a probe targets: URL, alias, or SVC_ENDPOINT. */
export function probeBase(target: string | undefined, env: NodeJS.ProcessEnv): string {
  if (target === undefined) {
    const e = env['SVC_ENDPOINT'];
    if (!e) throw new UsageError('no server given: pass a URL or an alias, or set SVC_ENDPOINT');
    return e;
  }
  if (ALIAS_NAME.test(target) && !target.includes('.') && target !== 'localhost') {
    const a = readAliases(env).aliases[target];
    if (a !== undefined) return a.url;
  }
  return target;
}

export async function runProbe(
  target: string | undefined,
  kind: 'ping' | 'ready',
  out: (s: string) => void,
  env: NodeJS.ProcessEnv = {},
  tls: ClientTlsOptions = { certsDir: undefined, insecure: false },
): Promise<number> {
  const path = kind === 'ping' ? '/health' : '/health/ready';
  let base: string;
  try {
    base = probeBase(target, env);
    probeUrl(base, path);
  } catch (err) {
    out(`svc: ${(err as Error).message}`);
    return 2;
  }
  const timeoutMs = 5000;
  try {
    const r = await probe(base, path, timeoutMs, tls);
    if (kind === 'ping') out(r.status === 200 ? `${base}: alive` : `${base}: HTTP ${r.status}`);
    else out(r.body || `HTTP ${r.status}`);
    return r.status === 200 ? 0 : 1;
  } catch (err) {
    const advice = certificateAdvice(err, tls);
    out(advice === undefined ? `${base}: unreachable: ${networkReason(err, probeUrl(base, path).href, timeoutMs)}` : `${base}: ${advice.problem}; ${advice.next}`);
    return 3;
  }
}
