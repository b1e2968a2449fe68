/**
 * `svc ping <url>` (GET /health) and `svc ready <url>` (GET /health/ready):
 * the client side of the health probes. Exit 0 when the probe answers 200.
 */

export interface ProbeResult {
  readonly status: number;
  readonly body: string;
}

export function probeUrl(base: string, path: '/health' | '/health/ready'): URL {
  let u: URL;
  try {
    u = new URL(base.includes('://') ? base : `http://${base}`);
  } catch {
    throw new Error(`invalid server URL "${base}"; expected e.g. http://127.0.0.1:9000`);
  }
  return new URL(path, u);
}

export async function probe(base: string, path: '/health' | '/health/ready', timeoutMs = 5000): Promise<ProbeResult> {
  const res = await fetch(probeUrl(base, path), { signal: AbortSignal.timeout(timeoutMs) });
  return { status: res.status, body: await res.text() };
}

export async function runProbe(base: string, kind: 'ping' | 'ready', out: (s: string) => void): Promise<number> {
  const path = kind === 'ping' ? '/health' : '/health/ready';
  try {
    const r = await probe(base, path);
    if (kind === 'ping') out(r.status === 200 ? `${base}: alive` : `${base}: HTTP ${r.status}`);
    else out(r.body || `HTTP ${r.status}`);
    return r.status === 200 ? 0 : 1;
  } catch (err) {
    out(`${base}: ${(err as Error).message}`);
    return 1;
  }
}
