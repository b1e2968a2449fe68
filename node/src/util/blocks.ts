/**
 * Cuts a stream into blocks of `into.length` bytes, each copied into `into`
 * and handed out as a view of it (the last may be shorter, none is empty): a
 * block is valid until the next one is asked for. Each chunk is copied
 * before the next is pulled, so a source may refill its buffers
 * (`readRange`'s `reuse`: moves and heals rely on it). Used for the erasure
 * stripes of a PUT and for the aligned staging of O_DIRECT shard writes. Pure.
 */
export async function* blocks(source: AsyncIterable<Uint8Array>, into: Buffer): AsyncGenerator<Buffer> {
  const size = into.length;
  let fill = 0;
  for await (const chunk of source) {
    let pos = 0;
    while (pos < chunk.length) {
      const take = Math.min(size - fill, chunk.length - pos);
      into.set(chunk.subarray(pos, pos + take), fill);
      fill += take;
      pos += take;
      if (fill === size) {
        yield into;
        fill = 0;
      }
    }
  }
  if (fill > 0) yield into.subarray(0, fill);
}
