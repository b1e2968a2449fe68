/** The pool-removal operation: decommission (with capacity retries), restart without the pool, its objects removed; and the cancel of a drain. Pure. */
import { decommissionPhase, isInsufficientCapacity, isUnknownPool, rebalanceActive } from '../../admin/types.ts';
import type { PoolSpec, PoolStatus } from '../../crd/svccluster.ts';
import { poolExpression, sameExpression, shortHash, volumeList } from '../../topology/volumes.ts';
import { applied, CAPACITY_RETRY_MS, commitLaunch, coordinatedRestart, doneInPhase, expectedPodNames, finishRollback, lastErrorIs, MAX_DRAIN_ATTEMPTS, needAdmin, Pass, restartTimedOut, rollBackRestart, rolledBack, runningPools, specPool, verifyTopology } from './steps.ts';

export function decommissionInfoOf(pass: Pass, expr: string) {
  const entry = pass.obs.admin?.pools?.find((p) => sameExpression(p.cmdline, expr));
  return entry ? { entry, phase: decommissionPhase(entry.decommissionInfo) } : undefined;
}

export function copyDecommission(pass: Pass, name: string, expr: string): void {
  const found = decommissionInfoOf(pass, expr);
  if (!found || found.phase === 'None') return;
  const i = found.entry.decommissionInfo!;
  const prev = pass.poolStatus(name)?.decommission;
  const d: NonNullable<PoolStatus['decommission']> = { phase: found.phase };
  if (i.startTime && !i.startTime.startsWith('0001-')) d.startTime = i.startTime;
  for (const k of ['objectsDecommissioned', 'objectsDecommissionedFailed', 'bytesDecommissioned', 'bytesDecommissionedFailed', 'totalSize', 'currentSize'] as const) {
    if (typeof i[k] === 'number') d[k] = i[k];
  }
  d.attempts = pass.op?.attempt ?? prev?.attempts ?? 1;
  if (prev?.retryToken !== undefined) d.retryToken = prev.retryToken;
  // The recorded index is kept: it is re-verified before anything is removed.
  pass.setPool(name, { decommission: d });
}

export function removePool(pass: Pass): void {
  const op = pass.op!;
  const c = pass.c;
  const name = op.pools![0]!;
  const pool = specPool(c, name);
  const sp = pass.poolStatus(name);
  const expr = sp?.expression ?? (pool ? poolExpression(c, pool, pass.domain) : '');
  const target = op.target!;

  // Intent withdrawn before the drain completed: cancel instead.
  if (pool && pool.decommission !== true && (op.phase === 'StoppingRebalance' || op.phase === 'StartingDecommission' || op.phase === 'Draining')) {
    op.type = 'CancelDecommission';
    pass.setPhase('Canceling');
    pass.event('Normal', 'DecommissionCancelRequested', `decommission of ${name} withdrawn; canceling (objects already moved stay where they are)`);
    cancelDecommission(pass);
    return;
  }

  if (op.phase === 'StoppingRebalance') {
    if (!needAdmin(pass)) return;
    if (rebalanceActive(pass.obs.admin!.rebalance)) {
      pass.actions.push({ kind: 'admin', call: 'rebalanceStop' });
      pass.progress = { reason: 'RebalanceStopping', message: 'stopping the rebalance before the decommission' };
      pass.poll();
      return;
    }
    pass.setPhase('StartingDecommission');
  }
  if (op.phase === 'StartingDecommission') {
    if (!needAdmin(pass)) return;
    const found = decommissionInfoOf(pass, expr);
    if (!found) {
      pass.stall = { reason: 'TopologyMismatch', message: `pools/list does not list ${expr}` };
      pass.poll();
      return;
    }
    pass.setPool(name, { index: found.entry.id, expressionHash: shortHash(expr) });
    if (found.phase === 'Queued' || found.phase === 'Active' || found.phase === 'Completed') {
      pass.setPool(name, { state: 'Draining' });
      pass.setPhase('Draining', 'objects are moving to the remaining pools; new uploads to this pool get SlowDown');
      pass.event('Normal', 'DecommissionStarted', `draining pool ${name} (${expr}); staged uploads to it get SlowDown until it is removed`);
    } else if (found.phase === 'Failed' || found.phase === 'Canceled') {
      // A stale terminal entry (an earlier attempt, or the CLI): clear it, then start.
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    } else if (lastErrorIs(pass, 'decommissionStart', isInsufficientCapacity) && Date.parse(op.lastError!.at) + CAPACITY_RETRY_MS > pass.obs.now.getTime()) {
      pass.stall = { reason: 'InsufficientTargetCapacity', message: `${op.lastError!.message}: add a pool or free space; retrying every ${CAPACITY_RETRY_MS / 60_000} min` };
      pass.requeueMs = Math.min(pass.requeueMs, CAPACITY_RETRY_MS);
      return;
    } else if (lastErrorIs(pass, 'decommissionStart', (e) => /rebalance/i.test(e.message))) {
      pass.setPhase('StoppingRebalance');
      pass.poll();
      return;
    } else {
      pass.actions.push({ kind: 'admin', call: 'decommissionStart', pool: expr });
      pass.setPool(name, { state: 'Draining' });
      pass.progress = { reason: 'DecommissionQueued', message: `starting decommission of ${name}` };
      pass.poll();
      return;
    }
  }
  if (op.phase === 'Draining') {
    if (!needAdmin(pass)) return;
    copyDecommission(pass, name, expr);
    const found = decommissionInfoOf(pass, expr);
    const phase = found?.phase ?? 'None';
    if (phase === 'Queued' || phase === 'Active') {
      const d = pass.poolStatus(name)?.decommission;
      op.message = `draining ${name}: ${d?.objectsDecommissioned ?? 0} objects, ${d?.bytesDecommissioned ?? 0} bytes moved`;
      pass.progress = { reason: phase === 'Queued' ? 'DecommissionQueued' : 'DecommissionActive', message: op.message };
      pass.poll();
      return;
    }
    if (phase === 'Failed') {
      pass.setPool(name, { state: 'DrainFailed' });
      if (op.attempt < MAX_DRAIN_ATTEMPTS) {
        pass.event('Warning', 'DecommissionFailed', `decommission of ${name} failed (attempt ${op.attempt}); clearing and retrying`);
        op.attempt += 1;
        pass.setPhase('StartingDecommission');
        pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
        pass.poll();
        return;
      }
      pass.stall = {
        reason: 'DecommissionFailed',
        message: `decommission of ${name} failed ${op.attempt} times (${found?.entry.decommissionInfo?.objectsDecommissionedFailed ?? 0} objects failed); annotate svc.io/retry-decommission to retry`,
      };
      // The operation ends here; the pool state (DrainFailed) carries the stall,
      // and the next pass reads the retry annotation or the withdrawn intent.
      delete pass.status.operation;
      return;
    }
    if (phase === 'Canceled') {
      // Canceled by someone else (the CLI): wait for the intent to change.
      pass.setPool(name, { state: 'DrainCanceled' });
      pass.stall = { reason: 'DecommissionCanceled', message: `decommission of ${name} was canceled outside the operator; set decommission: false to keep the pool, or annotate svc.io/retry-decommission to drain it again` };
      delete pass.status.operation;
      return;
    }
    if (phase === 'None') {
      pass.stall = { reason: 'TopologyMismatch', message: `the server reports no decommission for ${expr}` };
      pass.poll();
      return;
    }
    // Completed: re-verify identity right before anything destructive.
    if (found!.entry.id !== sp?.index) {
      pass.stall = { reason: 'TopologyMismatch', message: `${expr} completed its drain but now has pool index ${found!.entry.id}, recorded ${sp?.index}; refusing to remove it` };
      return;
    }
    pass.setPool(name, { state: 'Drained' });
    pass.event('Normal', 'DecommissionCompleted', `pool ${name} drained`);
    pass.setPhase('RestartingWithoutPool');
  }
  const remaining = volumeList(target.volumes)
    .map((e) => c.spec.pools.find((p) => sameExpression(poolExpression(c, p, pass.domain), e)))
    .filter((p): p is PoolSpec => p !== undefined);
  if (op.phase === 'RestartingWithoutPool') {
    // Rollback of step 5 (design §3.3) is allowed only before any remaining
    // pod has restarted: every remaining pod still exists on the applied
    // arguments, so the restart never took effect (the pod deletes or the
    // template apply kept failing). Going back then deletes no pod: the
    // templates return to the applied arguments (with OnDelete a pod that
    // dies later must not come back on the new ones while its peers run the
    // old) and the drained pool returns at full size (the running servers
    // still list it). Once a remaining pod restarted, the nodes disagree on
    // the endpoint list and no automatic direction is safe: stay stalled.
    const names = remaining.map((p) => p.name);
    const old = applied(pass)!;
    const late = restartTimedOut(pass, names, target.hash);
    const byName = new Map(pass.obs.pods.map((p) => [p.name, p]));
    const noneRestarted = expectedPodNames(c, names).every((n) => {
      const p = byName.get(n);
      return p !== undefined && !p.terminating && p.launchHash === old.hash;
    });
    if (late.timedOut && noneRestarted) {
      const why = `the restart without ${name} did not take effect within ${Math.round(pass.phaseAgeMs() / 1000)}s (no remaining pod restarted): putting the previous configuration back`;
      pass.setPhase('RollingBack', why);
      pass.event('Warning', 'RollingBack', why);
    } else {
      // The drained pool's pods must not run on with the old arguments.
      const extra = pool ? [{ pool, launch: old, replicas: 0 }] : [];
      if (!coordinatedRestart(pass, remaining, target, extra)) return;
      commitLaunch(pass, target);
      pass.setPool(name, { state: 'Detaching' });
      pass.setPhase('VerifyingTopology');
    }
  }
  if (op.phase === 'RollingBack') {
    const message = op.message;
    if (!rollBackRestart(pass, runningPools(pass))) return;
    pass.setPool(name, { state: 'Drained' });
    finishRollback(pass, `${message ?? 'restart without the pool failed'}; rolled back: every pool, ${name} included, runs the previous configuration. Fix the cause (pod deletes, StatefulSet updates), then edit the spec to try again`);
    return;
  }
  if (op.phase === 'RolledBack') {
    // The retry starts again at step 4: the drain is verified before anything restarts.
    rolledBack(pass, () => {
      pass.setPhase('Draining');
      pass.poll();
    });
    return;
  }
  if (op.phase === 'VerifyingTopology') {
    if (!verifyTopology(pass, volumeList(target.volumes))) return;
    pass.setPhase('Clearing');
  }
  if (op.phase === 'Clearing') {
    if (!doneInPhase(pass, 'decommissionClear') && !lastErrorIs(pass, 'decommissionClear', isUnknownPool)) {
      if (!needAdmin(pass)) return;
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    }
    pass.setPhase('DeletingWorkload');
  }
  if (op.phase === 'DeletingWorkload') {
    const sts = pass.obs.statefulSets.find((s) => s.pool === name);
    const deletePvcs = c.spec.storage?.pvcRetention === 'Delete';
    if (sts) {
      pass.actions.push({ kind: 'deleteStatefulSet', name: sts.name });
      if (deletePvcs) pass.actions.push({ kind: 'deletePvcs', pool: name });
      pass.poll();
      return;
    }
    if (deletePvcs && pass.obs.pvcs.some((v) => v.pool === name)) {
      pass.actions.push({ kind: 'deletePvcs', pool: name });
      pass.poll();
      return;
    }
    pass.setPool(name, { state: 'Removed', replicas: 0, readyReplicas: 0, updatedReplicas: 0 });
    if (!deletePvcs) pass.event('Normal', 'PvcRetained', `PVCs of pool ${name} were kept (storage.pvcRetention: Retain)`);
    pass.endOp('PoolRemoved', `pool ${name} was drained and removed; its entry may now be deleted from spec.pools`);
  }
}

export function cancelDecommission(pass: Pass): void {
  const op = pass.op!;
  const name = op.pools![0]!;
  const sp = pass.poolStatus(name);
  const expr = sp?.expression ?? '';
  if (!needAdmin(pass)) return;
  const phase = decommissionInfoOf(pass, expr)?.phase ?? 'None';
  if (op.phase === 'Canceling') {
    if (phase === 'Queued' || phase === 'Active') {
      pass.actions.push({ kind: 'admin', call: 'decommissionCancel', pool: expr });
      pass.progress = { reason: 'DecommissionActive', message: `canceling the decommission of ${name}` };
      pass.poll();
      return;
    }
    pass.setPhase('Clearing');
  }
  if (op.phase === 'Clearing') {
    if ((phase === 'Canceled' || phase === 'Failed') && !doneInPhase(pass, 'decommissionClear')) {
      pass.actions.push({ kind: 'admin', call: 'decommissionClear', pool: expr });
      pass.poll();
      return;
    }
    if (phase === 'Completed') {
      // Finished before the cancel arrived: it holds no data now; keep it as drained.
      // A completed entry cannot be cleared while the pool is configured: the
      // operation ends, and the pool state (Drained) keeps the stall until
      // the intent is decommission again (then the removal resumes at step 4).
      pass.setPool(name, { state: 'Drained' });
      pass.stall = { reason: 'DecommissionCompleted', message: `pool ${name} finished draining before the cancel; set decommission: true to remove it` };
      delete pass.status.operation;
      return;
    }
    pass.setPool(name, { state: 'Active', decommission: undefined });
    pass.endOp('DecommissionCanceled', `decommission of ${name} canceled; objects already moved stay in their new pools`);
  }
}
