/**
 * Libraries an idle node does not need are not loaded: without a telemetry
 * endpoint no OpenTelemetry SDK (about 27 MiB of an idle node's resident
 * memory, measured: 140 vs 167 MiB); without notification targets, identity
 * providers or a ZIP download none of their clients; and `svc server` never
 * loads the client command groups' table and terminal libraries (together
 * about 21 MiB more: 147 vs 126 MiB idle). Configured, each is loaded. Real
 * `svc server` processes, with a module-resolve hook preloaded that records
 * every npm package resolved.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type ConsoleNode, startConsoleNode } from './helpers/console.ts';
import { REPO, tempDir } from './svc-process.ts';

const HOOK = join(REPO, 'node', 'test', 'fixtures', 'record-package-loads.mjs');
const nodes: ConsoleNode[] = [];
const dir = tempDir('lazy-otel');
afterEach(async () => {
  for (const n of nodes.splice(0)) await n.stop();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a node with the resolve hook; the npm packages it resolved. */
async function start(name: string, env: Record<string, string>): Promise<() => string[]> {
  const loads = join(dir, `${name}.txt`);
  nodes.push(await startConsoleNode(1, { NODE_OPTIONS: `--import=${HOOK}`, SVC_TEST_LOADS: loads, ...env }));
  return () => (existsSync(loads) ? readFileSync(loads, 'utf8').split('\n').filter((l) => l !== '') : []);
}

/** Loaded only when configured or used. */
const ON_DEMAND = ['redis', '@nats-io/transport-node', 'amqplib', 'mqtt', 'pg', 'mysql2', 'jose', 'ldapts', 'yazl', 'cli-table3', 'log-update'];

describe('libraries are loaded when used', () => {
  it('no endpoint: no SDK module resolved; an endpoint: the SDK is loaded', async () => {
    const without = await start('without', {});
    const withEndpoint = await start('with', { SVC_OBS_ENDPOINT: 'http://127.0.0.1:9', SVC_OBS_LOGS_EXPORT_ENABLED: 'false' });
    expect(without().filter((p) => p.startsWith('@opentelemetry/sdk-'))).toEqual([]);
    expect(without()).toContain('pino');
    expect(withEndpoint()).toContain('@opentelemetry/sdk-node');
  });

  it('no notification target, identity provider or ZIP download: none of their libraries; a Redis target: its client', async () => {
    const idle = await start('idle', {});
    expect(idle()).toContain('msgpackr');
    expect(idle().filter((p) => ON_DEMAND.includes(p))).toEqual([]);
    // A target builds at start-up (its client connects on first use, so nothing needs to listen).
    const redis = await start('redis', { SVC_NOTIFY_REDIS_ENABLE_r1: 'on', SVC_NOTIFY_REDIS_ADDRESS_r1: '127.0.0.1:9', SVC_NOTIFY_REDIS_KEY_r1: 'events' });
    expect(redis()).toContain('redis');
    expect(redis().filter((p) => ON_DEMAND.includes(p) && p !== 'redis' && !p.startsWith('@redis/'))).toEqual([]);
  });
});
