/**
 * A log file that rotates by size and/or age (SVC_OBS_LOG_ROTATION_SIZE_MB,
 * SVC_OBS_LOG_ROTATION_TIME) and keeps the newest SVC_OBS_LOG_KEEP_FILES
 * rotated files. Writes are synchronous appends, so a line logged just
 * before exit is on disk. Rotated files are named `<file>.<UTC timestamp>`.
 */
import { closeSync, fstatSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';

export interface RotationOptions {
  readonly dir: string;
  readonly file: string;
  /** Rotate when the file would exceed this many bytes. */
  readonly maxBytes?: number | undefined;
  /** Rotate when the file has been open this long. */
  readonly maxAgeMs?: number | undefined;
  /** Rotated files to keep (undefined: keep all). */
  readonly keep?: number | undefined;
  readonly now?: () => number;
}

export class RotatingLogFile extends Writable {
  #fd: number;
  #size: number;
  #openedAt: number;
  #seq = 0;
  readonly #o: RotationOptions;
  readonly #path: string;
  readonly #now: () => number;

  constructor(o: RotationOptions) {
    super({ decodeStrings: true });
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#path = join(o.dir, o.file);
    this.#fd = openSync(this.#path, 'a');
    this.#size = fstatSync(this.#fd).size;
    this.#openedAt = this.#now();
  }

  get path(): string {
    return this.#path;
  }

  /** Rotated files, oldest first. */
  rotated(): string[] {
    const prefix = `${this.#o.file}.`;
    return readdirSync(this.#o.dir)
      .filter((f) => f.startsWith(prefix))
      .sort();
  }

  #rotate(): void {
    closeSync(this.#fd);
    const stamp = new Date(this.#now()).toISOString().replace(/[-:]/g, '').replace('.', '');
    renameSync(this.#path, `${this.#path}.${stamp}-${String(this.#seq++).padStart(4, '0')}`);
    this.#fd = openSync(this.#path, 'a');
    this.#size = 0;
    this.#openedAt = this.#now();
    if (this.#o.keep !== undefined) {
      const old = this.rotated();
      for (const f of old.slice(0, Math.max(0, old.length - this.#o.keep))) unlinkSync(join(this.#o.dir, f));
    }
  }

  writeLine(chunk: Buffer): void {
    const tooBig = this.#o.maxBytes !== undefined && this.#size > 0 && this.#size + chunk.length > this.#o.maxBytes;
    const tooOld = this.#o.maxAgeMs !== undefined && this.#now() - this.#openedAt >= this.#o.maxAgeMs && this.#size > 0;
    if (tooBig || tooOld) this.#rotate();
    let off = 0;
    while (off < chunk.length) off += writeSync(this.#fd, chunk, off);
    this.#size += chunk.length;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    try {
      this.writeLine(chunk);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _final(cb: (err?: Error | null) => void): void {
    try {
      closeSync(this.#fd);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}
