/**
 * The local key store behind SSE-S3 and SSE-KMS: named 256-bit master keys,
 * from `SVC_KMS_SECRET_KEY` (one key) or `SVC_KMS_SECRET_KEY_FILE` (one key
 * per line). The first key is the default: SSE-S3 objects and SSE-KMS
 * requests without a key id are sealed with it; an SSE-KMS request may name
 * any key of the store. Each object records the id of the key that sealed
 * it, so adding a key (and making it the default) keeps every existing
 * object readable as long as the old key stays in the store.
 *
 * Key line format (MinIO's `MINIO_KMS_SECRET_KEY` form): `<key-id>:<base64 of
 * 32 bytes>`; in a file, blank lines and lines starting with `#` are skipped.
 * A key id is 1-128 characters of letters, digits and `-_./:`; the value
 * after the last `:` is the key. An external KMS is a later step behind the
 * same `Kms` interface.
 *
 * A file-backed store is "not ready" until the file has been read once
 * (readiness then reports `kms_not_ready`); it is re-read periodically
 * (`reload`), so a key file mounted late (a Kubernetes secret) makes the node
 * ready, and keys added to it are picked up. A later failed re-read keeps the
 * keys already loaded (a running cluster must not lose its keys to a
 * half-written file) and is reported in `status().lastError`.
 */
import { SvcError } from '../util/errors.ts';
import { KEY_BYTES } from './keys.ts';

export interface KmsKey {
  readonly id: string;
  readonly key: Buffer;
}

export interface KmsStatus {
  readonly source: 'env' | 'file';
  /** The key file (file-backed stores). */
  readonly file?: string;
  readonly ready: boolean;
  readonly defaultKeyId?: string;
  readonly keyIds: readonly string[];
  /** Unix ms of the last successful load. */
  readonly loadedAt?: number;
  readonly lastError?: string;
}

/** What the object layer asks of a key store. */
export interface Kms {
  ready(): boolean;
  /** The default key (SSE-S3); `XSvcKMSNotReady` before the store loaded. */
  defaultKey(): KmsKey;
  /** A key by id (also `arn:aws:kms:…:key/<id>` and `alias/<id>` forms); `KMS.NotFoundException` when unknown. */
  key(id: string): KmsKey;
  status(): KmsStatus;
}

const KEY_ID = /^[A-Za-z0-9_./:-]{1,128}$/;

export interface ParsedKeys {
  readonly keys: ReadonlyMap<string, Buffer>;
  readonly defaultKeyId: string;
}

/** Parses key lines (`<id>:<base64>`); `where` names the source in errors. */
export function parseKeys(text: string, where: string): ParsedKeys {
  const keys = new Map<string, Buffer>();
  let first: string | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = line.lastIndexOf(':');
    const id = at > 0 ? line.slice(0, at) : '';
    const value = at > 0 ? line.slice(at + 1) : '';
    const bad = (why: string) => new SvcError('InvalidConfig', `${where}${lines.length > 1 ? ` line ${i + 1}` : ''}: ${why}; expected <key-id>:<base64 of 32 bytes>`);
    if (!KEY_ID.test(id)) throw bad('missing or invalid key id');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw bad(`key ${id} is not base64`);
    const key = Buffer.from(value, 'base64');
    if (key.length !== KEY_BYTES) throw bad(`key ${id} is ${key.length} bytes, not ${KEY_BYTES}`);
    if (keys.has(id)) throw bad(`key ${id} appears twice`);
    keys.set(id, key);
    first ??= id;
  });
  if (first === undefined) throw new SvcError('InvalidConfig', `${where}: no key`);
  return { keys, defaultKeyId: first };
}

/** The key id a request names, without an ARN or alias prefix. */
export function plainKeyId(id: string): string {
  const arn = /^arn:aws:kms:[^:]*:[^:]*:(?:key|alias)\/(.+)$/.exec(id);
  if (arn) return arn[1]!;
  if (id.startsWith('alias/')) return id.slice('alias/'.length);
  if (id.startsWith('arn:aws:kms:')) return id.slice('arn:aws:kms:'.length);
  return id;
}

export interface LocalKmsOptions {
  /** `SVC_KMS_SECRET_KEY`: the one key, given directly. */
  readonly secretKey?: string;
  /** `SVC_KMS_SECRET_KEY_FILE`: a file of keys, read by `reload`. */
  readonly secretKeyFile?: string;
  readonly readFile: (path: string) => Promise<string>;
  readonly now: () => number;
}

export class LocalKms implements Kms {
  readonly #o: LocalKmsOptions;
  #keys: ParsedKeys | undefined;
  #loadedAt: number | undefined;
  #lastError: string | undefined;

  constructor(o: LocalKmsOptions) {
    if ((o.secretKey === undefined) === (o.secretKeyFile === undefined)) {
      throw new SvcError('InvalidConfig', 'a local key store takes SVC_KMS_SECRET_KEY or SVC_KMS_SECRET_KEY_FILE, exactly one');
    }
    this.#o = o;
    if (o.secretKey !== undefined) {
      this.#keys = parseKeys(o.secretKey, 'SVC_KMS_SECRET_KEY');
      this.#loadedAt = o.now();
    }
  }

  /** Re-reads the key file (a no-op for a key given directly); true when the store is ready. */
  async reload(): Promise<boolean> {
    const file = this.#o.secretKeyFile;
    if (file === undefined) return true;
    try {
      this.#keys = parseKeys(await this.#o.readFile(file), `SVC_KMS_SECRET_KEY_FILE (${file})`);
      this.#loadedAt = this.#o.now();
      this.#lastError = undefined;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      this.#lastError = e.code !== undefined ? `${file}: ${e.code} (${e.message})` : (err as Error).message;
    }
    return this.ready();
  }

  ready(): boolean {
    return this.#keys !== undefined;
  }

  #loaded(): ParsedKeys {
    if (this.#keys === undefined) {
      throw new SvcError('XSvcKMSNotReady', `the key store is not available yet${this.#lastError ? `: ${this.#lastError}` : ''}`);
    }
    return this.#keys;
  }

  defaultKey(): KmsKey {
    const k = this.#loaded();
    return { id: k.defaultKeyId, key: k.keys.get(k.defaultKeyId)! };
  }

  key(id: string): KmsKey {
    const k = this.#loaded();
    for (const candidate of [id, plainKeyId(id)]) {
      const key = k.keys.get(candidate);
      if (key) return { id: candidate, key };
    }
    throw new SvcError('KMS.NotFoundException', `Invalid keyId ${id}: the key store has no such key.`);
  }

  status(): KmsStatus {
    const k = this.#keys;
    return {
      source: this.#o.secretKeyFile !== undefined ? 'file' : 'env',
      ...(this.#o.secretKeyFile !== undefined ? { file: this.#o.secretKeyFile } : {}),
      ready: k !== undefined,
      ...(k ? { defaultKeyId: k.defaultKeyId } : {}),
      keyIds: k ? [...k.keys.keys()] : [],
      ...(this.#loadedAt !== undefined ? { loadedAt: this.#loadedAt } : {}),
      ...(this.#lastError !== undefined ? { lastError: this.#lastError } : {}),
    };
  }
}
