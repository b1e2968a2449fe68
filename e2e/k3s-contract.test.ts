/**
 * The Kubernetes API contract suite (operator/test/kube-contract.ts) against a
 * real k3s: the same cases the in-process fake API server passes.
 */
import type { StartedK3sContainer } from '@testcontainers/k3s';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe } from 'vitest';
import { describeKubeContract } from '../operator/test/kube-contract.ts';
import { dockerAvailable } from './docker-available.ts';
import { startK3s } from './k3s.ts';

const haveDocker = await dockerAvailable();
if (!haveDocker) console.log('skipped: no Docker (the Kubernetes API contract against k3s needs a container engine)');

describe.skipIf(!haveDocker)('k3s', () => {
  describeKubeContract('k3s', async () => {
    const { k3s, kc } = await startK3s();
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'contract' } } });
    return { kc, namespace: 'contract', close: async () => void (await (k3s as StartedK3sContainer).stop()) };
  });
});
