/**
 * The real operator process (`operator/bin/svc-operator.js`, real
 * client-node, Lease leader election) against the in-process API server,
 * resolving pod names through the process kubelet's DNS shim; its output
 * goes to `<base>/operator.log`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeApiServer } from './fake-apiserver/server.ts';
import { NS } from './harness.ts';
import { DNS_SHIM, type ProcessKubelet } from './sim/process-kubelet.ts';
import { NODE_BIN, REPO } from './svc-server.ts';

export interface OperatorProcess {
  readonly child: ChildProcess;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
}

export async function startOperatorProcess(api: FakeApiServer, kubelet: ProcessKubelet, base: string): Promise<OperatorProcess> {
  const kubeconfig = join(base, 'kubeconfig');
  await writeFile(kubeconfig, api.kubeConfigYaml());
  const log = createWriteStream(join(base, 'operator.log'), { flags: 'a' });
  const child = spawn(NODE_BIN, [join(REPO, 'operator/bin/svc-operator.js')], {
    cwd: REPO,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/root',
      KUBECONFIG: kubeconfig,
      POD_NAMESPACE: NS,
      HOSTNAME: 'svc-operator-0',
      SVC_OPERATOR_POLL_SECONDS: '1',
      SVC_OPERATOR_PROBE_ADDRESS: 'off',
      NODE_OPTIONS: `--import ${DNS_SHIM}`,
      SVC_TEST_DNS_MAP: kubelet.dnsMap,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return {
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The last part of the operator's log. */
export function operatorLog(base: string): Promise<string> {
  return readFile(join(base, 'operator.log'), 'utf8').then(
    (s) => s.slice(-6000),
    () => '',
  );
}
