/**
 * Peer section (`npm run bench -- peer`): svc and Ceph RGW side by side in one
 * run, the same client (`@aws-sdk/client-s3` at its defaults: signed payloads
 * over http, CRC32 checksums, the SDK's own keep-alive agent) and the same
 * four rows against each, divided by each server's own CPU time from /proc:
 *
 *   svc: `svc server` over 4 drive folders (EC:2), started as a user starts
 *        it (info logging, the console listener on), every thread counted;
 *   Ceph: RGW 16.2 over an EC 2+2 data pool on four BlueStore OSDs on sparse
 *        files (`e2e/rgw/rgw-ec.sh`); radosgw and the OSDs counted, the
 *        monitor and manager shown apart.
 *
 * Each row prints svc per CPU-second, Ceph per CPU-second and the ratio with
 * its target (≥ 3×; ≥ 3.5× for the 4 KiB PUT), beside ceilings of the same
 * run: one-stream MD5 + SHA-256, the same client against a plain node:http
 * process, and fsync'd 4 KiB creates. svc runs first, then Ceph starts (about
 * a minute), so neither pays for the other's background work. svc's four
 * drives and Ceph's OSD files live under `BENCH_DIR` (default: the OS temp
 * dir); with `BENCH_FS=xfs` svc's drives are four fresh XFS file systems and
 * Ceph's four OSD files share a fifth (`lib/bench-volumes.ts`). The create
 * ceiling and the PUT accounting run beside svc's first drive.
 */
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { section, type SectionContext } from './harness.ts';
import { benchVolumes, foldersIn } from './lib/bench-volumes.ts';
import { hashCeilings, smallFileCreateRate } from './lib/ceilings.ts';
import { CephPeer } from './lib/ceph-peer.ts';
import { BIG, BIG_COUNT, rate, type Run, s3Client, SMALL, SMALL_COUNT, type RowKey, WARM_COUNT, type Workload, workload } from './lib/s3-workload.ts';
import { putAccounting } from './lib/put-accounting.ts';
import { freePort, ServerProcess } from './lib/server-process.ts';

const CREDS = { accessKey: 'bench', secretKey: 'bench-secret-key' };

/** The goal per row, as svc ÷ Ceph per server CPU-second. */
export const PEER_TARGET: Record<RowKey, number> = { bigPut: 3, bigGet: 3, smallPut: 3.5, smallGet: 3 };

interface Side {
  name: string;
  work: Workload;
}

/** The warm-up rounds of a workload and their small GETs per CPU-second. */
function warmNote(w: Workload): string {
  return `${w.warmRounds} warm-up round(s) of ${WARM_COUNT} small PUTs + GETs (GETs per CPU-s: ${w.warmGets.map((g) => g.toFixed(0)).join(', ')})`;
}

async function runSvc(ctx: SectionContext, drives: string, big: Buffer, small: Buffer): Promise<Workload> {
  const consolePort = await freePort();
  // As a user runs it: the default log level and the console listener on (on a port of its own).
  const svc = await ServerProcess.svc([drives], CREDS, {
    SVC_OBS_LOGGER_LEVEL: 'info',
    SVC_CONSOLE_ENABLE: 'true',
    SVC_CONSOLE_ADDRESS: `127.0.0.1:${consolePort}`,
  });
  const s3 = s3Client(`http://127.0.0.1:${svc.port}`, CREDS);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    ctx.info(`svc: pid ${svc.pid}, 4 drives EC:2: ${drives}`);
    const work = await workload(svc, s3, big, small);
    ctx.info(`svc: steady after ${warmNote(work)}`);
    return work;
  } finally {
    s3.destroy();
    await svc.stop();
  }
}

async function runCeph(ctx: SectionContext, dir: string, big: Buffer, small: Buffer): Promise<Workload> {
  const t0 = performance.now();
  const ceph = await CephPeer.start(dir);
  ctx.info(`Ceph RGW: started in ${((performance.now() - t0) / 1000).toFixed(0)} s, radosgw + 4 OSDs pids ${ceph.dataPids.join(' ')}`);
  const s3 = s3Client(ceph.endpoint, ceph.creds);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
    const ctl0 = ceph.controlCpuSeconds();
    const t1 = performance.now();
    const work = await workload(ceph, s3, big, small);
    ctx.info(`Ceph RGW: steady after ${warmNote(work)}`);
    ctx.info(
      `Ceph monitor + manager (not counted): ${(ceph.controlCpuSeconds() - ctl0).toFixed(1)} CPU-s over the ${((performance.now() - t1) / 1000).toFixed(0)} s of the rows`,
    );
    return work;
  } finally {
    s3.destroy();
    await ceph.stop();
  }
}

function report(ctx: SectionContext, svc: Side, ceph: Side, http: Workload, hash: number, creates: number): void {
  const rows: { key: RowKey; name: string; unit: string; cpu: (r: Run) => number; wall: (r: Run) => number; ceiling: string; ceilingValue: number }[] = [
    { key: 'bigPut', name: `PUT 64 MiB ×${BIG_COUNT}, 4 conc.`, unit: 'MB', cpu: rate.bigCpu, wall: rate.bigWall, ceiling: 'loopback HTTP PUT', ceilingValue: rate.bigCpu(http.bigPut) },
    { key: 'bigGet', name: `GET 64 MiB ×${BIG_COUNT}, 4 conc.`, unit: 'MB', cpu: rate.bigCpu, wall: rate.bigWall, ceiling: 'loopback HTTP GET', ceilingValue: rate.bigCpu(http.bigGet) },
    { key: 'smallPut', name: `PUT 4 KiB ×${SMALL_COUNT}, 16 conc.`, unit: 'op', cpu: rate.smallCpu, wall: rate.smallWall, ceiling: 'loopback HTTP PUT', ceilingValue: rate.smallCpu(http.smallPut) },
    { key: 'smallGet', name: `GET 4 KiB ×${SMALL_COUNT}, 16 conc.`, unit: 'op', cpu: rate.smallCpu, wall: rate.smallWall, ceiling: 'loopback HTTP GET', ceilingValue: rate.smallCpu(http.smallGet) },
  ];
  ctx.info('');
  ctx.info('per server CPU-second (wall-clock in brackets):');
  ctx.info(`${'row'.padEnd(28)} ${'svc'.padStart(16)} ${'Ceph RGW'.padStart(16)}   ratio   target   ceiling (same client, plain node:http)`);
  let met = 0;
  for (const r of rows) {
    const s = r.cpu(svc.work[r.key]);
    const c = r.cpu(ceph.work[r.key]);
    const ratio = s / c;
    const ok = ratio >= PEER_TARGET[r.key];
    if (ok) met++;
    const cell = (v: number, w: number) => `${v.toFixed(0)} ${r.unit} (${w.toFixed(0)})`.padStart(16);
    ctx.info(
      `${r.name.padEnd(28)} ${cell(s, r.wall(svc.work[r.key]))} ${cell(c, r.wall(ceph.work[r.key]))}  ${`${ratio.toFixed(2)}×`.padStart(6)}  ≥ ${PEER_TARGET[r.key]}× ${ok ? '✓' : '✗'}  ${r.ceiling} ${r.ceilingValue.toFixed(0)} ${r.unit} (svc at ${((s / r.ceilingValue) * 100).toFixed(1)}%)`,
    );
    ctx.row({ name: `${r.name} svc ÷ Ceph per CPU-s`, value: ratio, unit: '×', note: `target ≥ ${PEER_TARGET[r.key]} ${ok ? '✓' : '✗'}` });
  }
  ctx.info(`ceilings: MD5+SHA-256 one stream ${hash.toFixed(0)} MB/cpu-s; fsync'd 4 KiB creates ${creates.toFixed(0)}/s (16 at a time)`);
  ctx.info(`${met} of 4 rows at target`);
}

section('peer: svc beside Ceph RGW 16.2 (EC 2+2), same client, per server CPU-second', async (ctx) => {
  if (!CephPeer.available()) throw new Error('Ceph is not installed: apt-get install ceph-mon ceph-mgr ceph-osd radosgw');
  const drives = await benchVolumes(ctx, 'svc-drive', 4);
  try {
    const hash = hashCeilings(ctx).md5Sha256;
    const big = randomBytes(BIG);
    const small = randomBytes(SMALL);
    const http = await ServerProcess.httpCeiling(BIG);
    let httpWork: Workload;
    const hc = s3Client(`http://127.0.0.1:${http.port}`, CREDS);
    try {
      httpWork = await workload(http, hc, big, small);
    } finally {
      hc.destroy();
      await http.stop();
    }
    const svcWork = await runSvc(ctx, (await foldersIn(drives, 'svc')).arg, big, small);
    const osds = await benchVolumes(ctx, 'ceph-osds', 1);
    let cephWork: Workload;
    try {
      cephWork = await runCeph(ctx, (await foldersIn(osds, 'ceph')).dirs[0]!, big, small);
    } finally {
      await osds.close();
    }
    const creates = await smallFileCreateRate(ctx, drives.roots[0]!);
    report(ctx, { name: 'svc', work: svcWork }, { name: 'Ceph RGW', work: cephWork }, httpWork, hash, creates);
    // Where the large PUT's CPU goes, step by step, against svc's measured total of this run.
    const total = 1000 / rate.bigCpu(svcWork.bigPut);
    const steps = await putAccounting(1000 / rate.bigCpu(httpWork.bigPut), drives.roots[0]!);
    const sum = steps.reduce((a, r) => a + r.msPerMb, 0);
    ctx.info('');
    ctx.info(`64 MiB PUT, CPU ms per MB of object data (svc ${total.toFixed(2)}, Ceph RGW ${(1000 / rate.bigCpu(cephWork.bigPut)).toFixed(2)}):`);
    for (const r of steps) ctx.info(`  ${r.step.padEnd(44)} ${r.msPerMb.toFixed(3).padStart(7)}  ${((100 * r.msPerMb) / total).toFixed(1).padStart(5)}%  ${r.how}`);
    ctx.info(`  ${'the rest: JavaScript around the steps, GC'.padEnd(44)} ${(total - sum).toFixed(3).padStart(7)}  ${((100 * (total - sum)) / total).toFixed(1).padStart(5)}%  svc's total less the steps`);
  } finally {
    await drives.close();
  }
});
