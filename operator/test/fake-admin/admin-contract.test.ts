/** The admin API contract against the fake (the same suite runs against a real `svc server`). */
import { describeAdminContract } from '../admin-contract.ts';
import { FakeAdminApi } from './fake-admin.ts';

const credentials = { accessKey: 'contractadmin', secretKey: 'contract-secret-key' };
const pools = ['/data/p0/d{1...4}', '/data/p1/d{1...4}'];

describeAdminContract('fake admin API', async () => {
  // Slow drains: the cancel path must find the entry still running.
  const fake = await FakeAdminApi.start({ pools, credentials, bytesPerSecond: 1 });
  return { url: fake.url, credentials, pools, close: () => fake.close() };
});
