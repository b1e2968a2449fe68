/**
 * A real Kubernetes (k3s in a privileged container, testcontainers) for the
 * e2e tier, plus the images built from this repository's Dockerfiles and
 * imported into k3s' containerd. Only used where a Docker engine answers.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { K3sContainer, type StartedK3sContainer } from '@testcontainers/k3s';
import { GenericContainer } from 'testcontainers';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const K3S_IMAGE = 'rancher/k3s:v1.33.4-k3s1';

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

/** Builds an image from one of the repository's Dockerfiles. */
export async function buildImage(dockerfile: 'Dockerfile.node' | 'Dockerfile.operator', tag: string): Promise<void> {
  await GenericContainer.fromDockerfile(REPO, dockerfile).build(tag, { deleteOnExit: false });
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
