/**
 * SHA-256 and HMAC-SHA-256 over node:crypto in the hash-constructor shape
 * `@smithy/signature-v4` takes (`sha256:`), shared by every SigV4 signer of
 * the project (the admin client, the console's server-side signing).
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

/** SHA-256 / HMAC in the shape the smithy signer wants. */
export class Sha256 {
  readonly #secret: Uint8Array | string | undefined;
  #h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret =
      secret === undefined || typeof secret === 'string'
        ? secret
        : ArrayBuffer.isView(secret)
          ? new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength)
          : new Uint8Array(secret);
    this.#h = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
  reset(): void {
    this.#h = this.#fresh();
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#h.update(typeof data === 'string' ? data : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.#h.digest();
  }
}
