/**
 * `svc-operator`: loads the kubeconfig (in-cluster or KUBECONFIG), checks the
 * installed CRD, syncs its caches (then `/readyz` answers 200, leader or
 * not: a Deployment's rollout waits for readiness, and a standby must be able
 * to become Ready while the old pod still holds the lease), elects a leader
 * through a Lease, and the leader runs the controller. Losing the lease exits
 * the process (its Deployment restarts it as a follower), so two replicas
 * never act on the same cluster. `/leaderz` answers 200 on the leader only.
 */
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { CRD_NAME, CRD_REVISION_ANNOTATION, CRD_SCHEMA_REVISION } from '../crd/crd.ts';
import { Kube, statusCode } from '../kube/kube.ts';
import { loadConfig, OPERATOR_VARIABLES } from './config.ts';
import { Controller } from './controller.ts';
import { LeaderElector } from './leader-election.ts';
import { createOperatorLogger } from './logging.ts';

function usage(): string {
  return ['Usage: svc-operator', '', 'Reconciles SvcCluster resources. Environment:', ...OPERATOR_VARIABLES.map(([k, v]) => `  ${k.padEnd(40)} ${v}`), ''].join('\n');
}

/**
 * The installed SvcCluster CRD must carry this operator's schema revision
 * (CRDs are applied before the operator is upgraded, docs/operator.md);
 * undefined when it does, otherwise what to log.
 */
export async function checkInstalledCrd(kube: Kube): Promise<{ event: string; message: string; installed?: string; code?: number | undefined } | undefined> {
  try {
    const crd = await kube.ext.readCustomResourceDefinition({ name: CRD_NAME });
    const rev = crd.metadata?.annotations?.[CRD_REVISION_ANNOTATION];
    if (rev === CRD_SCHEMA_REVISION) return undefined;
    return {
      event: 'crd_mismatch',
      installed: rev ?? '(none)',
      message: `installed CRD ${CRD_NAME} has schema revision ${rev ?? '(none)'}, this operator needs ${CRD_SCHEMA_REVISION}: apply crds/ (kubectl apply --server-side -f crds/) before upgrading`,
    };
  } catch (err) {
    return { event: 'crd_missing', code: statusCode(err), message: `cannot read CRD ${CRD_NAME}: install crds/ first (${(err as Error).message})` };
  }
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage());
    return 0;
  }
  let config;
  try {
    config = loadConfig(process.env, hostname());
  } catch (err) {
    process.stderr.write(`ERROR: ${(err as Error).message}\n`);
    return 2;
  }
  const { log, shutdown } = createOperatorLogger({ level: config.logLevel, otlpEndpoint: config.otlpLogEndpoint, serviceName: config.serviceName });
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const kube = new Kube(kc);

  if (config.checkCrd) {
    const problem = await checkInstalledCrd(kube);
    if (problem) {
      log.fatal({ event: problem.event, installed: problem.installed, expected: CRD_SCHEMA_REVISION, code: problem.code }, problem.message);
      await shutdown();
      return 3;
    }
  }

  let ready = false;
  let leading = false;
  let probes: Server | undefined;
  if (config.probeAddress) {
    probes = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      const [ok, text] =
        path === '/healthz' ? [true, 'ok'] : path === '/readyz' ? [ready, ready ? 'ok' : 'caches not synced'] : path === '/leaderz' ? [leading, leading ? 'leader' : 'standby'] : [false, 'not found'];
      res.writeHead(ok ? 200 : path === '/readyz' || path === '/leaderz' ? 503 : 404, { 'content-type': 'text/plain' }).end(`${text}\n`);
    });
    probes.listen(config.probeAddress.port, config.probeAddress.host);
  }

  const controller = new Controller({
    kube,
    log,
    namespace: config.namespace,
    clusterDomain: config.clusterDomain,
    pollMs: config.pollMs,
    idleMs: config.idleMs,
    stalledMs: config.stalledMs,
    concurrency: config.concurrency,
  });

  let exitCode = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  let elector: LeaderElector | undefined;
  const caches = controller.startCaches().then(
    () => {
      ready = true;
      return true;
    },
    (err: unknown) => {
      log.fatal({ event: 'controller_start_failed', err: (err as Error).message }, 'caches failed to sync');
      exitCode = 1;
      finish();
      return false;
    },
  );
  const startController = () => {
    leading = true;
    void caches.then((ok) => {
      if (ok) controller.run();
    });
  };
  if (config.leaderElection) {
    elector = new LeaderElector({
      identity: config.identity,
      client: kube.leaseClient(config.leaseNamespace, config.leaseName),
      onStartedLeading: () => {
        log.info({ event: 'leader_elected', identity: config.identity }, 'leading');
        startController();
      },
      onStoppedLeading: () => {
        leading = false;
        log.warn({ event: 'leader_lost', identity: config.identity }, 'lost the lease; exiting');
        exitCode = 1;
        finish();
      },
      onError: (err) => log.warn({ event: 'lease_error', err: (err as Error).message }, 'lease update failed'),
    });
    elector.start();
  } else startController();

  const stop = (signal: string) => {
    log.info({ event: 'shutdown', signal }, 'stopping');
    finish();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  await finished;
  controller.stop();
  await elector?.stop();
  probes?.close();
  await shutdown();
  return exitCode;
}
