/**
 * A real Kubernetes (k3s in a privileged container, testcontainers) for the
 * e2e tier, plus the images e2e/build-images.sh built, imported into k3s'
 * containerd. Only used where a Docker engine answers and the k3s image is
 * there (no registry: someone loaded it with `docker load`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { K3sContainer, type StartedK3sContainer } from '@testcontainers/k3s';
import { imagesMissing } from './images.ts';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const K3S_IMAGE = process.env['SVC_K3S_IMAGE'] ?? 'rancher/k3s:v1.33.4-k3s1';

/** Why the k3s tier cannot run here (undefined: it can); the caller prints one skip line. */
export function k3sMissing(needImages: boolean): string | undefined {
  try {
    execFileSync('docker', ['image', 'inspect', '--format', '{{.Id}}', K3S_IMAGE], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    return `no ${K3S_IMAGE} image in the local Docker engine (no registry here; docker load it to run this tier)`;
  }
  return needImages ? imagesMissing() : undefined;
}

export async function startK3s(): Promise<{ k3s: StartedK3sContainer; kc: KubeConfig; kubeconfigFile: string }> {
  const k3s = await new K3sContainer(K3S_IMAGE).start();
  const raw = k3s.getKubeConfig();
  const kc = new KubeConfig();
  kc.loadFromString(raw);
  const dir = mkdtempSync(join(tmpdir(), 'svc-k3s-'));
  const kubeconfigFile = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, raw);
  return { k3s, kc, kubeconfigFile };
}

/** `docker save` the image and import it into k3s' containerd (pods then use imagePullPolicy: Never). */
export async function importImage(k3s: StartedK3sContainer, tag: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-image-'));
  const tar = join(dir, 'image.tar');
  execFileSync('docker', ['save', '-o', tar, tag]);
  await k3s.copyFilesToContainer([{ source: tar, target: '/tmp/image.tar' }]);
  const r = await k3s.exec(['ctr', '-n', 'k8s.io', 'images', 'import', '/tmp/image.tar']);
  if (r.exitCode !== 0) throw new Error(`ctr import failed: ${r.output}`);
}

/** kubectl inside the k3s container (sends CRDs exactly as written: server-side apply). */
export async function kubectlIn(k3s: StartedK3sContainer, args: string[], file?: { name: string; content: string }): Promise<string> {
  if (file) await k3s.copyContentToContainer([{ content: file.content, target: `/tmp/${file.name}` }]);
  const r = await k3s.exec(['kubectl', ...args]);
  if (r.exitCode !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.output}`);
  return r.output;
}
