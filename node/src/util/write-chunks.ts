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
  let closed: ((err: Error) => void) | undefined;
  const onClose = (): void => closed?.(new Error('destination closed before the body was written'));
  dest.once('close', onClose);
  const written = (chunk: Uint8Array): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      closed = reject;
      if (dest.destroyed) {
        reject(new Error('destination closed before the body was written'));
        return;
      }
      dest.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
  try {
    for await (const chunk of src) await written(chunk);
    await new Promise<void>((resolve, reject) => {
      closed = reject;
      if (dest.destroyed) reject(new Error('destination closed before the body was written'));
      else dest.end(resolve);
    });
  } catch (err) {
    dest.destroy();
    throw err;
  } finally {
    dest.off('close', onClose);
  }
}
