/**
 * The admin API contract against a real two-pool `svc server`. Routes the
 * server does not serve yet skip with a line naming them.
 */
import { describeAdminContract } from '../admin-contract.ts';
import { startSvcServer } from '../svc-server.ts';

describeAdminContract('real svc server', async () => {
  const s = await startSvcServer({ pools: 2, drives: 4 });
  return { url: s.url, credentials: { accessKey: s.accessKey, secretKey: s.secretKey }, pools: s.pools, close: () => s.stop() };
});
