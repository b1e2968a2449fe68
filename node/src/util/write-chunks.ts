/**
 * Writes chunks to a writable one at a time, pulling the next only once the
 * previous one's write has completed (handed to the kernel for a socket), so
 * a source that refills its buffers (`GetObjectOptions.reuseBuffers`) never
 * has a chunk overwritten while it still waits in the writable's queue. Ends
 * the writable after the last chunk. A source error, or the writable
 * closing first (the client went away), destroys the writable, stops the
 * source (its `finally` runs) and rejects.
 */
import type { Writable } from 'node:stream';

export async function writeChunks(src: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, dest: Writable): Promise<void> {
  // The pending write's (or end's) reject, cleared once it settled: a response emits 'close' right
  // after 'finish', and an Error (its stack captured) built then for nobody cost a few µs per request.
  let closed: ((err: Error) => void) | undefined;
  const onClose = (): void => {
    const reject = closed;
    closed = undefined;
    reject?.(new Error('destination closed before the body was written'));
  };
  dest.once('close', onClose);
  const settle = (resolve: () => void, reject: (err: Error) => void) => (err?: Error | null) => {
    closed = undefined;
    if (err) reject(err);
    else resolve();
  };
  const written = (chunk: Uint8Array): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (dest.destroyed) {
        reject(new Error('destination closed before the body was written'));
        return;
      }
      closed = reject;
      dest.write(chunk, settle(resolve, reject));
    });
  try {
    for await (const chunk of src) await written(chunk);
    await new Promise<void>((resolve, reject) => {
      if (dest.destroyed) {
        reject(new Error('destination closed before the body was written'));
        return;
      }
      closed = reject;
      dest.end(settle(resolve, reject));
    });
  } catch (err) {
    dest.destroy();
    throw err;
  } finally {
    dest.off('close', onClose);
  }
}
