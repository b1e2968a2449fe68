/**
 * The admin API contract against a real two-pool `svc server`. Routes the
 * server does not serve yet skip with a line naming them.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, CreateMultipartUploadCommand, S3Client } from '@aws-sdk/client-s3';
import { describeAdminContract } from '../admin-contract.ts';
import { startSvcServer } from '../svc-server.ts';
import { keepAliveHandler } from '../../../node/test/helpers/s3-client.ts';

/** Files below `dir` (none when it does not exist). */
async function filesUnder(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).length;
}

describeAdminContract('real svc server', async () => {
  const s = await startSvcServer({ pools: 2, drives: 4 });
  const credentials = { accessKey: s.accessKey, secretKey: s.secretKey };
  return {
    url: s.url,
    credentials,
    pools: s.pools,
    // An open multipart upload keeps its pool's drain active (existing uploads may finish), so
    // the cancel finds it running: the target is whichever pool the upload landed on.
    drainTarget: async () => {
      const client = new S3Client({ requestHandler: keepAliveHandler(), endpoint: s.url, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s.accessKey, secretAccessKey: s.secretKey } });
      await client.send(new CreateBucketCommand({ Bucket: 'held' }));
      await client.send(new CreateMultipartUploadCommand({ Bucket: 'held', Key: 'open-upload' }));
      client.destroy();
      for (const pool of s.pools) {
        // A pool argument `<base>/pN/d{1...4}`: its first drive is `<base>/pN/d1`.
        const drive = pool.replace(/d\{1\.\.\.\d+\}$/, 'd1');
        if ((await filesUnder(join(drive, '.svc.sys', 'multipart'))) > 0) return pool;
      }
      throw new Error('the open upload is on no pool');
    },
    close: () => s.stop(),
  };
});
