/**
 * A node with no telemetry endpoint never loads the OpenTelemetry SDK (about
 * 27 MiB of an idle node's resident memory, measured: 140 vs 167 MiB); one
 * with an endpoint does. Real `svc server` processes, with a module-resolve
 * hook preloaded that records every SDK module resolved.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type ConsoleNode, startConsoleNode } from './helpers/console.ts';
import { REPO, tempDir } from './svc-process.ts';

const HOOK = join(REPO, 'node', 'test', 'fixtures', 'record-otel-loads.mjs');
const nodes: ConsoleNode[] = [];
const dir = tempDir('lazy-otel');
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a node with the resolve hook; the file that lists the SDK modules it resolved. */
async function start(name: string, env: Record<string, string>): Promise<string> {
  const loads = join(dir, `${name}.txt`);
  nodes.push(await startConsoleNode(1, { NODE_OPTIONS: `--import=${HOOK}`, SVC_TEST_LOADS: loads, ...env }));
  return loads;
}

describe('telemetry is loaded only when something is exported', () => {
  it('no endpoint: no SDK module resolved; an endpoint: the SDK is loaded', async () => {
    const without = await start('without', {});
    const withEndpoint = await start('with', { SVC_OBS_ENDPOINT: 'http://127.0.0.1:9', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    expect(existsSync(without) ? readFileSync(without, 'utf8') : '').toBe('');
    expect(readFileSync(withEndpoint, 'utf8')).toContain('@opentelemetry/sdk-node');
  });
});
