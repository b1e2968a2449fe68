/**
 * The Kubernetes API contract suite (operator/test/kube-contract.ts) against a
 * real k3s: the same cases the in-process fake API server passes.
 */
import type { StartedK3sContainer } from '@testcontainers/k3s';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe } from 'vitest';
import { describeKubeContract } from '../operator/test/kube-contract.ts';
import { k3sMissing, startK3s } from './k3s.ts';

const missing = k3sMissing(false);
if (missing) console.log(`skipped: ${missing}; the Kubernetes API contract against k3s did not run`);

describe.skipIf(missing !== undefined)('k3s', () => {
  describeKubeContract('k3s', async () => {
    const { k3s, kc } = await startK3s();
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'contract' } } });
    return { kc, namespace: 'contract', close: async () => void (await (k3s as StartedK3sContainer).stop()) };
  });
});
