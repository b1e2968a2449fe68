/**
 * The walk of a `LocalDrive` volume: keys in order below a prefix, each
 * object's `xl.meta` as it is stored, directory objects beside their
 * directories, common prefixes of a non-recursive walk, and (when asked)
 * data directories no version names any more (orphans, for the scanner).
 */
import type { Dirent } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { compareKeys } from '../util/key-order.ts';
import { SvcError } from '../util/errors.ts';
import { type WalkEntry, type WalkOptions, XL_META } from './drive.ts';
import { type DriveFs, errno, UUID_RE } from './local-fs.ts';
import { DIR_OBJECT_SUFFIX, keyOfEntry } from './object-path.ts';
import { decodeXlMeta } from './xl-meta.ts';

const PART_RE = /^part\.[0-9]+$/;

export class DriveWalk {
  readonly #fs: DriveFs;

  constructor(fs: DriveFs) {
    this.#fs = fs;
  }

  walkDir(vol: string, opts: WalkOptions): AsyncIterable<WalkEntry> {
    return this.#walkRoot(vol, opts);
  }

  async *#walkRoot(vol: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
    const prefix = opts.prefix ?? '';
    const cut = prefix.lastIndexOf('/') + 1;
    const baseKey = prefix.slice(0, cut);
    const filter = prefix.slice(cut);
    let baseDir: string;
    try {
      // '/' (a prefix starting with '/') would name the volume itself: no key starts with '/'
      if (baseKey === '/') throw new SvcError('InvalidArgument', 'empty path segment');
      baseDir = baseKey === '' ? this.#fs.volPath(vol) : this.#fs.filePath(vol, baseKey.slice(0, -1));
    } catch {
      return; // a prefix with '..' or empty segments names no stored object
    }
    try {
      await fsp.stat(this.#fs.volPath(vol));
    } catch (err) {
      await this.#fs.mapErr(err, vol, 'VolumeNotFound');
    }
    if (filter === '' && baseKey !== '') {
      // A prefix ending in '/' names a directory object too ('dir/' is stored
      // beside the directory, as `dir__XLDIR__`); it sorts before its children.
      yield* this.#dirObject(baseDir, baseKey, opts.marker);
    }
    yield* this.#walk(baseDir, baseKey, filter, opts, undefined);
  }

  /** Yields the directory object `key` (ending in '/') stored beside `dir`, when present and after the marker. */
  async *#dirObject(dir: string, key: string, marker: string | undefined): AsyncGenerator<WalkEntry, void> {
    if (marker !== undefined && compareKeys(key, marker) <= 0) return;
    try {
      yield { name: key, meta: await this.#fs.readWhole(join(`${dir}${DIR_OBJECT_SUFFIX}`, XL_META)) };
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      return this.#fs.mapErr(err, '');
    }
  }

  /**
   * Data directories in the object directory `dir` that `named` (its
   * xl.meta's data dirs) does not hold: UUID names holding nothing but
   * `part.N` files, untouched (mtime and ctime) for `ageMs`. A key below the
   * object that happens to be a UUID holds an xl.meta or directories, so it
   * is never one.
   */
  async #orphansIn(dir: string, named: ReadonlySet<string>, ageMs: number): Promise<string[]> {
    let ents: Dirent[];
    try {
      ents = await fsp.readdir(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    const cutoff = Date.now() - ageMs;
    const out: string[] = [];
    for (const d of ents) {
      if (!d.isDirectory() || !UUID_RE.test(d.name) || named.has(d.name)) continue;
      const p = join(dir, d.name);
      try {
        const inside = await fsp.readdir(p, { withFileTypes: true });
        if (!inside.every((f) => f.isFile() && PART_RE.test(f.name))) continue;
        const st = await fsp.stat(p);
        let newest = Math.max(st.mtimeMs, st.ctimeMs);
        for (const f of inside) {
          const fst = await fsp.stat(join(p, f.name));
          newest = Math.max(newest, fst.mtimeMs, fst.ctimeMs);
        }
        if (newest <= cutoff) out.push(d.name);
      } catch {
        // Gone or unreadable while looked at: not reported.
      }
    }
    return out.sort();
  }

  /** Data dirs named by the xl.meta in `dir` (not sub-objects). */
  async #dataDirsOf(dir: string): Promise<Set<string>> {
    try {
      const vs = decodeXlMeta(await this.#fs.readWhole(join(dir, XL_META)), false);
      return new Set(vs.map((v) => v.dataDir).filter((d) => d !== ''));
    } catch {
      return new Set();
    }
  }

  async *#walk(
    dir: string,
    keyPrefix: string,
    filter: string,
    opts: WalkOptions,
    skipKnown: Set<string> | undefined,
  ): AsyncGenerator<WalkEntry> {
    let ents: Dirent[];
    try {
      ents = await fsp.readdir(dir, { withFileTypes: true });
    } catch (err) {
      const code = errno(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        await this.#fs.checkRoot();
        return;
      }
      return this.#fs.mapErr(err, '');
    }
    const hasMeta = ents.some((d) => d.name === XL_META && d.isFile());
    const skip = skipKnown ?? (hasMeta ? await this.#dataDirsOf(dir) : new Set<string>());
    type Item = { key: string; obj: boolean; name: string };
    const items: Item[] = [];
    for (const d of ents) {
      if (!d.isDirectory() || skip.has(d.name) || !d.name.startsWith(filter)) continue;
      const key = keyOfEntry(keyPrefix, d.name);
      items.push({ key, obj: true, name: d.name });
      if (!key.endsWith('/')) items.push({ key: key + '/', obj: false, name: d.name });
    }
    items.sort((a, b) => compareKeys(a.key, b.key) || (a.obj ? -1 : 1));
    const marker = opts.marker;
    const dataDirs = new Map<string, Set<string>>();
    for (const it of items) {
      const child = join(dir, it.name);
      if (it.obj) {
        if (marker !== undefined && compareKeys(it.key, marker) <= 0) continue;
        let meta: Uint8Array | undefined;
        try {
          meta = await this.#fs.readWhole(join(child, XL_META));
        } catch (err) {
          const code = errno(err);
          if (code !== 'ENOENT' && code !== 'ENOTDIR') return this.#fs.mapErr(err, '');
        }
        let named: Set<string> | undefined;
        if (meta !== undefined) {
          try {
            const vs = decodeXlMeta(meta, false);
            named = new Set(vs.map((v) => v.dataDir).filter((d) => d !== ''));
            dataDirs.set(it.name, named);
          } catch {
            // A corrupt xl.meta still lists (the object layer votes it out); it proves nothing about data dirs.
          }
        }
        const orphans = opts.orphanAgeMs !== undefined && (meta === undefined || named !== undefined) ? await this.#orphansIn(child, named ?? new Set(), opts.orphanAgeMs) : [];
        if (meta === undefined && orphans.length === 0) continue;
        yield { name: it.key, ...(meta !== undefined ? { meta } : {}), ...(orphans.length > 0 ? { orphans } : {}) };
      } else {
        if (marker !== undefined && compareKeys(marker, it.key) >= 0 && !marker.startsWith(it.key)) continue;
        const sub = this.#walk(child, it.key, '', { ...opts, recursive: true }, dataDirs.get(it.name));
        if (opts.recursive) {
          yield* sub;
        } else {
          // A common prefix exists when anything at all is stored below it.
          for await (const _ of sub) {
            yield { name: it.key, prefix: true };
            break;
          }
        }
      }
    }
  }
}
