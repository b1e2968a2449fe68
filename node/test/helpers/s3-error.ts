import { S3ServiceException } from '@aws-sdk/client-s3';

/** The S3 error code and status `p` rejects with, or undefined when it resolves; anything else is rethrown. */
export async function errorOf(p: Promise<unknown>): Promise<{ code: string; status: number } | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof S3ServiceException) return { code: err.name, status: err.$metadata.httpStatusCode ?? 0 };
    throw err;
  }
}
