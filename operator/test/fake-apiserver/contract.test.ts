/** The Kubernetes API contract suite against the in-process fake (the same suite runs against k3s in e2e/). */
import { describeKubeContract } from '../kube-contract.ts';
import { FakeApiServer } from './server.ts';

describeKubeContract('in-process fake API server', async () => {
  const api = await FakeApiServer.start();
  api.store.create(api.store.find('', 'v1', 'namespaces')!, undefined, { metadata: { name: 'contract' } });
  return { kc: api.kubeConfig(), namespace: 'contract', compact: () => api.store.compact(), historyLimit: (n) => (api.store.historyLimit = n), close: () => api.close() };
});
