/**
 * A node with no telemetry endpoint never loads the OpenTelemetry SDK (about
 * 27 MiB of an idle node's resident memory, measured: 140 vs 167 MiB); one
 * with an endpoint does. Real `svc server` processes, with a module-resolve
 * hook preloaded that records every SDK module resolved.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, runSvc, type SvcRun, tempDir } from './svc-process.ts';

const HOOK = join(REPO, 'node', 'test', 'fixtures', 'record-otel-loads.mjs');
const runs: { run: SvcRun; base: string }[] = [];
afterEach(async () => {
  for (const r of runs.splice(0)) {
    await r.run.stop();
    rmSync(r.base, { recursive: true, force: true });
  }
});

async function start(env: Record<string, string>): Promise<string> {
  const base = tempDir('lazy-otel');
  for (let d = 1; d <= 4; d++) mkdirSync(join(base, `d${d}`));
  const loads = join(base, 'loads.txt');
  const run = await runSvc(['server', `${base}/d{1...4}`], { SVC_CONSOLE_ENABLE: 'false', NODE_OPTIONS: `--import=${HOOK}`, SVC_TEST_LOADS: loads, ...env });
  runs.push({ run, base });
  expect(await run.started, run.stderr()).toBe(true);
  return loads;
}

describe('telemetry is loaded only when something is exported', () => {
  it('no endpoint: no SDK module resolved; an endpoint: the SDK is loaded', async () => {
    const without = await start({});
    const withEndpoint = await start({ SVC_OBS_ENDPOINT: 'http://127.0.0.1:9', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    expect(existsSync(without) ? readFileSync(without, 'utf8') : '').toBe('');
    expect(readFileSync(withEndpoint, 'utf8')).toContain('@opentelemetry/sdk-node');
  });
});
