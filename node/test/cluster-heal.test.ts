/**
 * Healing on a 4-node cluster (real `svc` processes in mount namespaces, one
 * pool of 8 drives, EC:4): read-repair across nodes (the bitrot shard is on
 * another node's drive) within seconds, after which losing parity-many
 * other drives (two whole nodes) still reads; a drive emptied while its node
 * runs and one replaced across its node's restart are rebuilt to exactly
 * what they held, with replacement recovery `completed` seen from any node;
 * heal status and stop reach the node running the heal by its token; the
 * background heal status sums every node.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BgHealState, HealStartSuccess, HealTaskStatus, ReplacementRecoveryStatus } from '../src/object/admin/types.ts';
import { bytes } from './engine-helpers.ts';
import { admin } from './helpers/admin.ts';
import { canUseMountNamespaces, TestCluster } from './helpers/cluster.ts';
import { flipByte, getBytes, holdings, shardFile, until, wipe } from './helpers/heal-server.ts';
import { keepAliveHandler } from './helpers/s3-client.ts';

const enabled = canUseMountNamespaces();
if (!enabled) console.log('skipped: no mount namespaces (needs root and unshare)');

let c: TestCluster;
const clients = new Map<number, S3Client>();
const creds = () => ({ accessKey: c.accessKey, secretKey: c.secretKey });
const s3 = (k: number): S3Client => {
  let cl = clients.get(k);
  if (!cl) {
    cl = new S3Client({ requestHandler: keepAliveHandler(), endpoint: c.url(k), region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: c.accessKey, secretAccessKey: c.secretKey }, maxAttempts: 1 });
    clients.set(k, cl);
  }
  return cl;
};
/** Every drive root as the test process sees it (node K's folder holds its drives). */
const roots = () => [1, 2, 3, 4].flatMap((k) => ['d1', 'd2'].map((d) => join(c.nodeDir(k), d)));
const nodeOfRoot = (r: string) => Number(/node(\d)/.exec(r)![1]);
const endpoint = (k: number, d: string) => `${c.url(k)}${c.sharedPath}/${d}`;

async function recovered(k: number, ep: string): Promise<ReplacementRecoveryStatus> {
  return until(
    `${ep} rebuilt`,
    async () => {
      const r = (await admin(c.url(k), creds(), { method: 'GET', path: 'v4/heal/replacement-recovery' })).json() as ReplacementRecoveryStatus;
      return r.instances.find((i) => i.endpoint === ep)?.state === 'completed' ? r : undefined;
    },
    // 6-7 s on a quiet machine; a full suite at load 14 once took over 90 s
    150_000,
    300,
  );
}

const DATA = Array.from({ length: 10 }, (_, i) => bytes(i % 2 === 0 ? 2 * 1024 * 1024 + i : 3000 + i, 40 + i));

beforeAll(async () => {
  if (!enabled) return;
  c = await TestCluster.create({ nodes: 4, drivesPerNode: 2, env: { SVC_SCANNER_INTERVAL: '1s' } });
  for (let k = 1; k <= 4; k++) await c.start(k);
  for (let k = 1; k <= 4; k++) await c.waitReady(k, 60_000);
  await s3(1).send(new CreateBucketCommand({ Bucket: 'heal' }));
  for (const [i, d] of DATA.entries()) await s3(1 + (i % 4)).send(new PutObjectCommand({ Bucket: 'heal', Key: `o/${i}`, Body: d }));
}, 120_000);
afterAll(async () => {
  for (const cl of clients.values()) cl.destroy();
  await c?.close();
});

describe.skipIf(!enabled)('healing on a 4-node cluster', { timeout: 240_000 }, () => {
  it('read-repair rewrites a corrupt shard on another node within seconds; then two whole nodes (parity-many drives) can go', async () => {
    const [, file] = shardFile(roots(), 'heal', 'o/0', 1);
    const owner = nodeOfRoot(file);
    const reader = owner === 1 ? 2 : 1;
    const good = readFileSync(file);
    flipByte(file, 777);
    expect((await getBytes(s3(reader), 'heal', 'o/0')).equals(DATA[0]!)).toBe(true);
    await until('the shard rewritten', () => readFileSync(file).equals(good) || undefined, 30_000, 100);
    const away = [1, 2, 3, 4].filter((k) => k !== owner && k !== reader);
    for (const k of away) await c.stop(k);
    try {
      expect((await getBytes(s3(reader), 'heal', 'o/0')).equals(DATA[0]!)).toBe(true);
    } finally {
      for (const k of away) await c.start(k);
      for (const k of away) await c.waitReady(k, 60_000);
    }
  });

  it('a drive emptied while its node runs is rebuilt to exactly what it held; any node reports completed', async () => {
    const root = join(c.nodeDir(2), 'd1');
    const want = holdings(root);
    wipe(root);
    const r = await recovered(4, endpoint(2, 'd1'));
    expect(r.instances.find((i) => i.endpoint === endpoint(2, 'd1'))).toMatchObject({ state: 'completed', pool: 0, set: 0 });
    expect(holdings(root)).toEqual(want);
    for (const [i, d] of DATA.entries()) expect((await getBytes(s3(3), 'heal', `o/${i}`)).equals(d)).toBe(true);
  });

  it('a drive replaced across its node\'s restart is rebuilt at start-up', async () => {
    const root = join(c.nodeDir(3), 'd2');
    const want = holdings(root);
    await c.stop(3);
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root);
    await c.start(3);
    await c.waitReady(3, 60_000);
    await recovered(1, endpoint(3, 'd2'));
    expect(holdings(root)).toEqual(want);
  });

  it('heal status and stop reach the node running the heal by its token; background status sums every node', async () => {
    const start = (await admin(c.url(1), creds(), { method: 'POST', path: 'v3/heal/heal', body: '{"dryRun":true}' })).json() as HealStartSuccess;
    expect(start.clientToken).toMatch(/:0$/);
    const st = await admin(c.url(3), creds(), { method: 'POST', path: 'v3/heal/heal', query: { clientToken: start.clientToken } });
    expect(st.status, st.body).toBe(200);
    expect(st.headers['x-svc-admin-node']).toBe(c.url(1).slice(7));
    expect((st.json() as HealTaskStatus).ClientToken).toBe(start.clientToken);
    const stop = await admin(c.url(4), creds(), { method: 'POST', path: 'v3/heal/heal', query: { clientToken: start.clientToken, forceStop: 'true' } });
    expect(stop.status, stop.body).toBe(200);
    const after = (await admin(c.url(2), creds(), { method: 'POST', path: 'v3/heal/heal', query: { clientToken: start.clientToken } })).json() as HealTaskStatus;
    expect(['stopped', 'finished']).toContain(after.Summary);
    const bg = await until('every node counted', async () => {
      const b = (await admin(c.url(2), creds(), { method: 'POST', path: 'v3/background-heal/status' })).json() as BgHealState;
      return b.nodes.length === 4 && b.scanner.cycles > 0 ? b : undefined;
    });
    expect(bg.offline_nodes).toEqual([]);
    expect(bg.ScannedItemsCount).toBeGreaterThanOrEqual(10);
    expect(bg.state).toMatch(/idle|active/);
    expect(bg.sets).toHaveLength(1);
    expect(bg.sets[0]!.disks).toHaveLength(8);
  });
});
