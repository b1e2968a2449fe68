/** The pool-add operation (shared operator design §3): new pools, restart with the new arguments, rebalance. Pure. */
import type { PoolSpec } from '../../crd/svccluster.ts';
import { statefulSetName } from '../../topology/names.ts';
import { poolExpression, sameExpression, volumeList } from '../../topology/volumes.ts';
import { allReadyOn, applied, applyChildren, commitLaunch, coordinatedRestart, discardNewPools, expectedPodNames, finishRollback, newPoolsMayHaveFormed, noteListedPools, Pass, podProblems, pvcProblems, rebalanceStep, restartTimedOut, rollBackRestart, rolledBack, specPool, verifyTopology } from './steps.ts';

/** `startNext`: what follows a rolled-back add once acknowledged (the planner's next operation). */
export function addPools(pass: Pass, startNext: (pass: Pass) => void): void {
  const op = pass.op!;
  const c = pass.c;
  const target = op.target!;
  const newNames = op.pools ?? [];
  noteListedPools(pass, newNames);
  const gone = newNames.filter((n) => !specPool(c, n));
  if (gone.length > 0) {
    const formed = newPoolsMayHaveFormed(pass, gone, target);
    if (op.phase === 'ProvisioningNewPools' && !formed) {
      // Only the new pool ever ran the new arguments, alone: it never held data.
      discardNewPools(pass, gone, true);
      return;
    }
    if (op.phase === 'RolledBack') {
      // Never listed (else no rollback), but existing pods did run the new
      // arguments for a while: keep the PVCs unless the cluster says Delete.
      discardNewPools(pass, gone, c.spec.storage?.pvcRetention === 'Delete');
      return;
    }
    if (op.phase === 'RestartingCluster' && !formed) {
      // Existing pods may already run the new arguments: bring them back first.
      pass.setPhase('RollingBack', `pool ${gone.join(', ')} left the spec before it joined; restarting the cluster on the previous configuration`);
      pass.event('Warning', 'RollingBack', pass.op!.message!);
    } else if (op.phase !== 'RollingBack') {
      pass.stall = { reason: 'PoolRemovedWithoutDecommission', message: `pool ${gone.join(', ')} left the spec after the server formed with it (it may hold data); put it back, then decommission it to remove it` };
      return;
    }
  }
  const targetPools = volumeList(target.volumes)
    .map((e) => c.spec.pools.find((p) => sameExpression(poolExpression(c, p, pass.domain), e)))
    .filter((p): p is PoolSpec => p !== undefined);
  const existing = targetPools.filter((p) => !newNames.includes(p.name));
  const newPools = targetPools.filter((p) => newNames.includes(p.name));
  const fresh = existing.length === 0;

  if (op.phase === 'ProvisioningNewPools') {
    for (const n of newNames) pass.setPool(n, { state: 'Provisioning', statefulSet: statefulSetName(c.metadata.name, n), expression: poolExpression(c, specPool(c, n)!, pass.domain) });
    // New pools start on the new arguments; existing pools keep the applied ones.
    applyChildren(pass, [
      ...existing.map((pool) => ({ pool, launch: applied(pass)! })),
      ...newPools.map((pool) => ({ pool, launch: target })),
    ]);
    pass.stall = podProblems(pass, newNames) ?? pvcProblems(pass, newNames);
    if (fresh) {
      // A new cluster: nothing runs yet, so no restart is needed; wait for quorum.
      const ready = allReadyOn(pass, newNames, target.hash);
      if (!ready.ok) {
        if (!pass.stall && pass.phaseAgeMs() > pass.readyTimeoutMs()) pass.stall = { reason: 'WaitingForQuorum', message: `pods not ready after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${ready.waiting.join(', ')}` };
        pass.progress = { reason: 'Provisioning', message: `waiting for ${ready.waiting.length} pods to become ready` };
        pass.poll();
        return;
      }
      pass.setPhase('VerifyingTopology');
    } else {
      // Running and live, not Ready: they wait for peers on the old arguments.
      const expected = expectedPodNames(c, newNames);
      const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
      const notRunning = expected.filter((n) => !byName.get(n)?.running || byName.get(n)?.launchHash !== target.hash);
      if (notRunning.length > 0) {
        if (!pass.stall && pass.phaseAgeMs() > pass.readyTimeoutMs()) {
          // Any other cause (a crash loop, a start-up refusal): name it from the container's waiting reason.
          const why = notRunning.map((n) => `${n}${byName.get(n)?.waitingReason ? ` (${byName.get(n)!.waitingReason})` : ''}`);
          pass.stall = { reason: 'PodsNotRunning', message: `new pods not running after ${Math.round(pass.phaseAgeMs() / 1000)}s: ${why.join(', ')}; the running cluster is unaffected` };
        }
        pass.progress = { reason: 'ProvisioningPool', message: `provisioning ${newNames.join(', ')}: waiting for ${notRunning.join(', ')}` };
        pass.poll();
        return;
      }
      pass.setPhase('RestartingCluster');
      for (const n of newNames) pass.setPool(n, { state: 'Joining' });
    }
  }
  if (op.phase === 'RestartingCluster') {
    // Rollback of step 2 (design §3.2): automatic only while the server has
    // never formed with the new pools. Then nothing can have been written to
    // them, and the previous arguments (status.launchConfig.applied) are a
    // configuration every existing drive already served under. Once the
    // server has listed a new pool (or a node turned Ready on the new
    // arguments) its drives may carry format.json and objects: a rollback
    // would hide them, so the operation stays stalled for a human instead.
    const late = restartTimedOut(pass, targetPools.map((p) => p.name), target.hash);
    if (late.timedOut && !newPoolsMayHaveFormed(pass, newNames, target)) {
      const why = `pods not ready on the new configuration after ${Math.round(pass.phaseAgeMs() / 1000)}s (${late.waiting.slice(0, 8).join(', ')}) and the server never listed ${newNames.join(', ')}: restarting the cluster on the previous configuration`;
      pass.setPhase('RollingBack', why);
      pass.event('Warning', 'RollingBack', why);
    } else {
      if (!coordinatedRestart(pass, targetPools, target)) {
        if (pass.stall?.reason === 'WaitingForQuorum') pass.stall = { ...pass.stall, message: `${pass.stall.message}; the server has formed with ${newNames.join(', ')}, so there is no automatic rollback` };
        return;
      }
      pass.setPhase('VerifyingTopology');
    }
  }
  if (op.phase === 'RollingBack') {
    // Existing pools back on the applied arguments (pods not on them restart
    // together, once: this is a known-good configuration, not a retry of the
    // failed one); new pools parked at zero replicas, their PVCs kept.
    const message = op.message;
    const parked = newPools.map((pool) => ({ pool, launch: target, replicas: 0 }));
    for (const n of gone) if (pass.obs.statefulSets.some((s) => s.pool === n)) pass.actions.push({ kind: 'deleteStatefulSet', name: statefulSetName(c.metadata.name, n) });
    if (!rollBackRestart(pass, existing, parked)) return;
    if (gone.length > 0) {
      discardNewPools(pass, gone, c.spec.storage?.pvcRetention === 'Delete');
      return;
    }
    for (const n of newNames) pass.setPool(n, { state: 'Pending' });
    finishRollback(pass, `${message ?? 'pool add failed'}; rolled back: the cluster runs its previous pools again and ${newNames.join(', ')} is parked at zero replicas. Fix the cause, then edit the spec to try again, or remove the pool`);
    return;
  }
  if (op.phase === 'RolledBack') {
    rolledBack(pass, () => {
      delete pass.status.operation;
      startNext(pass);
    });
    return;
  }
  if (op.phase === 'VerifyingTopology') {
    if (!verifyTopology(pass, volumeList(target.volumes))) return;
    commitLaunch(pass, target);
    for (const n of newNames) pass.setPool(n, { state: 'Active' });
    const auto = (c.spec.rebalance?.onExpansion ?? 'Auto') === 'Auto';
    if (!fresh && auto && targetPools.length > 1) pass.setPhase('StartingRebalance');
    else {
      pass.endOp('PoolAdded', `pools ${newNames.join(', ')} joined`);
      return;
    }
  }
  if (op.phase === 'StartingRebalance' || op.phase === 'Rebalancing') {
    if (rebalanceStep(pass) === 'wait') return;
    pass.endOp('PoolAdded', `pools ${newNames.join(', ')} joined and the rebalance finished`);
  }
}
