/**
 * Bucket configuration documents decoded once: the decoded value of each
 * bucket's stored bytes, decoded again only when the bytes change (every
 * write reads the configuration; the record layer caches the bytes).
 */
export class ParsedConfigCache<T> {
  readonly #decode: (raw: Uint8Array) => T;
  readonly #max: number;
  readonly #hits = new Map<string, { raw: Buffer; value: T }>();

  constructor(decode: (raw: Uint8Array) => T, max = 1024) {
    this.#decode = decode;
    this.#max = max;
  }

  /** The decoded `raw` of `bucket`; undefined (and forgotten) when the bucket has none. */
  get(bucket: string, raw: Uint8Array | undefined): T | undefined {
    if (!raw) {
      this.#hits.delete(bucket);
      return undefined;
    }
    const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    let hit = this.#hits.get(bucket);
    if (hit === undefined || !hit.raw.equals(bytes)) {
      hit = { raw: Buffer.from(bytes), value: this.#decode(raw) };
      if (this.#hits.size >= this.#max) this.#hits.clear();
      this.#hits.set(bucket, hit);
    }
    return hit.value;
  }
}
