/**
 * The node's background jobs are registered with one supervisor, and it
 * lists every one of them with its state: the healing composition a node
 * starts (`background/healing.ts`) over a real engine on temp-dir drives
 * (started in dependency order, each job's worker runs; after close every
 * one reports stopped), and a real `svc server` answering the admin route
 * that reads the node's supervisor.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Healing, startHealing } from '../src/background/healing.ts';
import { systemClock } from '../src/util/clock.ts';
import { silentLogger } from '../src/util/logger.ts';
import { admin, startTwoPoolServer, type TwoPoolServer } from './helpers/admin.ts';
import { kmsKeyLine } from './helpers/governance.ts';
import { makePoolsFixture, type PoolsFixture } from './helpers/pools-fixture.ts';

let fx: PoolsFixture | undefined;
let healing: Healing | undefined;
afterEach(async () => {
  await healing?.close();
  await fx?.cleanup();
  healing = undefined;
  fx = undefined;
});

describe('background jobs under the supervisor', () => {
  it('lists every registered job with its state, in dependency order, and stops them all', async () => {
    fx = await makePoolsFixture([{ drives: 4, standardParity: 2 }]);
    await fx.layer.makeBucket('b');
    healing = await startHealing({
      layer: fx.layer,
      clock: systemClock,
      logger: silentLogger,
      config: { scannerIntervalMs: 60_000, scannerSpeed: 'fastest', scannerDeepSample: 0, healSpeed: 'fastest', orphanAgeMs: 3_600_000 },
      node: '127.0.0.1:9000',
      nodeIndex: 0,
      scans: () => true,
    });
    const jobs = healing.jobs.list();
    expect(jobs.map((j) => [j.name, j.after])).toEqual([
      ['heal-background', []],
      ['heal-sequences', []],
      ['drive-monitor', ['heal-sequences']],
      ['scanner', ['heal-background', 'drive-monitor']],
    ]);
    expect(healing.jobs.order().map((j) => j.name)).toEqual(['heal-background', 'heal-sequences', 'drive-monitor', 'scanner']);
    for (const j of jobs) {
      expect(j.description.length).toBeGreaterThan(0);
      expect(['running', 'idle']).toContain(j.state);
    }
    // Each loop job reports its own worker; no root heal runs, so the sequences job has none.
    expect(jobs.map((j) => j.workers.map((w) => w.name))).toEqual([['background-heal'], [], ['drive-monitor'], ['scanner']]);

    await healing.close();
    expect(healing.jobs.list().map((j) => [j.name, j.state])).toEqual([
      ['heal-background', 'stopped'],
      ['heal-sequences', 'stopped'],
      ['drive-monitor', 'stopped'],
      ['scanner', 'stopped'],
    ]);
  });
});

/** One job as `GET /svc/admin/v4/background/jobs` lists it. */
interface ListedJob {
  name: string;
  description: string;
  after: string[];
  state: string;
  workers: { name: string; state: string; steps: number; startedAt?: number }[];
  lastError?: string;
}

describe('a node lists every background job from its supervisor (admin API over HTTP)', () => {
  let server: TwoPoolServer | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('GET /svc/admin/v4/background/jobs names every registered job with its state and workers', async () => {
    // With a key store, a certificate directory (empty: plain HTTP) and the
    // root secret key in a file: their watches are jobs too.
    dir = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
    mkdirSync(join(dir, 'certs'));
    writeFileSync(join(dir, 'secret'), 'admin-root-secret\n');
    server = await startTwoPoolServer({
      SVC_KMS_SECRET_KEY: kmsKeyLine('jobs-key'),
      SVC_CERTS_DIR: join(dir, 'certs'),
      SVC_SECRET_KEY_FILE: join(dir, 'secret'),
      // the helper's SVC_SECRET_KEY left out (the file takes its place)
      SVC_SECRET_KEY: undefined as unknown as string,
    });
    const s = server;
    const list = async () => {
      const res = await admin(s.url, s.creds, { method: 'GET', path: 'v4/background/jobs' });
      expect(res.status).toBe(200);
      return res.json() as { nodes: { node: string; answered: boolean; jobs: ListedJob[] }[] };
    };
    // The node's jobs: what runs from its first moment (key files,
    // certificates, audit log, the lock table's sweep), the key store watch
    // and the object layer's (started before it serves), the identity
    // store's re-read (once it loaded), the cluster health watch (lock
    // quorum for readiness) and the capacity sampler. A single node has no
    // peers, so no peer heartbeat (admin-cluster.test.ts lists it).
    const expected: Record<string, { after: string[]; workers: string[] }> = {
      'root-credential-reload': { after: [], workers: ['root-credential-reload'] },
      'tls-reload': { after: [], workers: ['tls-reload', 'tls-expiry-check'] },
      'audit-log': { after: [], workers: ['audit-flush'] },
      'lock-sweep': { after: [], workers: ['lock-sweep'] },
      'kms-watch': { after: [], workers: ['kms-watch'] },
      'drive-probe': { after: [], workers: ['drive-probe'] },
      'data-movement': { after: [], workers: ['data-movement-poll'] },
      'heal-background': { after: [], workers: ['background-heal'] },
      'heal-sequences': { after: [], workers: [] },
      'drive-monitor': { after: ['heal-sequences'], workers: ['drive-monitor'] },
      scanner: { after: ['heal-background', 'drive-monitor'], workers: ['scanner'] },
      notify: { after: [], workers: ['notify-reload'] },
      replication: { after: [], workers: ['replication-refresh', 'replication-metrics'] },
      'bucket-sync': { after: [], workers: ['bucket-sync'] },
      'iam-refresh': { after: [], workers: ['iam-refresh'] },
      'ldap-key-recheck': { after: [], workers: ['ldap-key-recheck'] },
      'cluster-health': { after: [], workers: ['cluster-health'] },
      'capacity-sampling': { after: [], workers: ['capacity-sampling'] },
    };
    let report = await list();
    // Ready means IAM loaded; the sampler registers as start-up returns: wait (bounded) for the list to settle.
    for (let i = 0; i < 100 && report.nodes[0]!.jobs.length < Object.keys(expected).length; i++) {
      await new Promise((r) => setTimeout(r, 50));
      report = await list();
    }
    expect(report.nodes.map((n) => [n.node, n.answered])).toEqual([[`127.0.0.1:${s.run.port}`, true]]);
    const jobs = report.nodes[0]!.jobs;
    expect(jobs.map((j) => j.name).sort()).toEqual(Object.keys(expected).sort());
    // Registration order: the object layer's jobs in start-up order.
    expect(jobs.slice(0, 14).map((j) => j.name)).toEqual(['root-credential-reload', 'tls-reload', 'audit-log', 'lock-sweep', 'kms-watch', 'drive-probe', 'data-movement', 'heal-background', 'heal-sequences', 'drive-monitor', 'scanner', 'notify', 'replication', 'bucket-sync']);
    for (const j of jobs) {
      const want = expected[j.name]!;
      expect(j.after, j.name).toEqual(want.after);
      expect(j.description.length, j.name).toBeGreaterThan(10);
      expect(j.lastError, j.name).toBeUndefined();
      // Every job started: none is `not started`, failed or stopped on a serving node.
      expect(['running', 'idle'], `${j.name} is ${j.state}`).toContain(j.state);
      expect(j.workers.map((w) => w.name), j.name).toEqual(want.workers);
      for (const w of j.workers) {
        expect(['running', 'idle'], `${j.name}/${w.name} is ${w.state}`).toContain(w.state);
        expect(typeof w.startedAt, `${j.name}/${w.name} started`).toBe('number');
      }
      // A job's state is its workers' busiest; none running is idle.
      expect(j.state, j.name).toBe(j.workers.some((w) => w.state === 'running') ? 'running' : 'idle');
    }
    // The same list through the alias prefix MinIO's clients use.
    const alias = await admin(s.url, s.creds, { method: 'GET', path: 'v4/background/jobs', prefix: '/compat/admin/' });
    expect((alias.json() as typeof report).nodes[0]!.jobs.map((j) => j.name)).toEqual(jobs.map((j) => j.name));
  }, 60_000);
});
