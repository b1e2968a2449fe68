/** Operator configuration from the environment, and structured logs exported over OTLP. */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { createOperatorLogger } from './logging.ts';

describe('operator config', () => {
  it('defaults, overrides and refusals', () => {
    const d = loadConfig({}, 'op-0');
    expect(d).toMatchObject({ namespace: undefined, clusterDomain: 'cluster.local', leaderElection: true, leaseName: 'svc-operator', leaseNamespace: 'default', pollMs: 10_000, idleMs: 300_000, probeAddress: { host: '0.0.0.0', port: 8081 } });
    const o = loadConfig({ SVC_OPERATOR_NAMESPACE: 'storage', SVC_OPERATOR_CLUSTER_DOMAIN: 'k8s.example', POD_NAMESPACE: 'ops', SVC_OPERATOR_POLL_SECONDS: '2', SVC_OBS_ENDPOINT: 'http://otel:4318/', SVC_OPERATOR_PROBE_ADDRESS: 'off' }, 'op-0');
    expect(o).toMatchObject({ namespace: 'storage', clusterDomain: 'k8s.example', leaseNamespace: 'ops', pollMs: 2_000, otlpLogEndpoint: 'http://otel:4318/v1/logs', probeAddress: undefined });
    expect(() => loadConfig({ SVC_OPERATOR_POLL_SECONDS: 'soon' }, 'x')).toThrow(/SVC_OPERATOR_POLL_SECONDS/);
    expect(() => loadConfig({ SVC_OPERATOR_LEADER_ELECTION: 'maybe' }, 'x')).toThrow(/SVC_OPERATOR_LEADER_ELECTION/);
  });
});

describe('operator logs', () => {
  it('writes JSON lines with an event name and exports the same records to an OTLP/HTTP collector', async () => {
    const bodies: string[] = [];
    const collector = createServer((req, res) => {
      let b = '';
      req.on('data', (c: Buffer) => (b += c.toString('latin1')));
      req.on('end', () => {
        bodies.push(`${req.url} ${b}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/logs`;
    const out = new PassThrough();
    let stdout = '';
    out.on('data', (c: Buffer) => (stdout += c.toString()));
    const { log, shutdown } = createOperatorLogger({ level: 'info', otlpEndpoint: url, serviceName: 'svc-operator-test', stdout: out });
    log.info({ event: 'reconcile', cluster: 'prod' }, 'AddPools RestartingCluster');
    await shutdown();
    collector.close();
    const line = JSON.parse(stdout.trim().split('\n')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', event: 'reconcile', cluster: 'prod', msg: 'AddPools RestartingCluster' });
    expect(bodies.some((b) => b.startsWith('/v1/logs') && b.includes('AddPools RestartingCluster') && b.includes('svc-operator-test'))).toBe(true);
  });
});
