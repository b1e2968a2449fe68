/** The restart operations: a coordinated restart with new arguments and a rolling restart. Pure. */
import { volumeList } from '../../topology/volumes.ts';
import { templateHash } from '../render.ts';
import { allReadyOn, applied, applyChildren, commitLaunch, coordinatedRestart, Pass, podsOf, runningPools, verifyTopology } from './steps.ts';

export function coordinatedRestartOp(pass: Pass): void {
  const op = pass.op!;
  const target = op.target!;
  const pools = runningPools(pass);
  if (op.phase === 'RestartingCluster') {
    if (!coordinatedRestart(pass, pools, target)) return;
    pass.setPhase('VerifyingTopology');
  }
  if (!verifyTopology(pass, volumeList(target.volumes))) return;
  commitLaunch(pass, target);
  pass.endOp('ClusterRestarted', 'all pods run the new launch configuration');
}

/** One pod at a time, cluster-wide; the next only when every pod is Ready again. */
export function rollingRestart(pass: Pass): void {
  const launch = applied(pass)!;
  const pools = runningPools(pass);
  applyChildren(
    pass,
    pools.map((pool) => ({ pool, launch })),
  );
  const want = new Map(pools.map((p) => [p.name, templateHash(pass.c, p)]));
  const pods = podsOf(pass.obs, want.keys());
  const allReady = allReadyOn(pass, [...want.keys()], launch.hash);
  const stale = pods.filter((p) => p.templateHash !== want.get(p.pool));
  if (stale.length === 0 && allReady.ok) {
    pass.endOp('RollingRestartCompleted', 'every pod runs the new template');
    return;
  }
  if (allReady.ok && stale.length > 0 && !pods.some((p) => p.terminating)) {
    pass.actions.push({ kind: 'deletePods', names: [stale[0]!.name] });
    pass.op!.pod = stale[0]!.name;
    pass.op!.phaseStartedAt = pass.now;
  } else if (pass.phaseAgeMs() > pass.readyTimeoutMs()) {
    pass.stall = { reason: 'WaitingForQuorum', message: `pod ${pass.op!.pod ?? ''} not ready after ${Math.round(pass.phaseAgeMs() / 1000)}s` };
  }
  pass.progress = { reason: 'RollingRestart', message: `${stale.length} pods left to restart` };
  pass.poll();
}
