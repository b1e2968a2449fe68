/**
 * Clients that keep writing, overwriting, deleting and reading while data
 * moves, and remember exactly what the server acknowledged, so a test can
 * check afterwards that every acknowledged object and version reads back
 * byte-exact and nothing else appeared.
 *
 * - `ver` (versioned bucket): each writer owns its keys and appends
 *   versions (PUT), delete markers (DELETE) and removes single versions
 *   (DELETE ?versionId); the model is each key's version list, newest first.
 * - `plain` (unversioned): overwrites and deletes; the model is each key's
 *   current bytes.
 *
 * Writers retry a refused write (`SlowDown` while a key is on a pool being
 * drained, 503 while a node restarts, a reset connection) until the server
 * acknowledges it; they pause on request, finishing their write in flight,
 * so a test can kill the server with no write in doubt. Readers GET
 * acknowledged versions (immutable) and keys no writer touches, and record
 * every failure.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';

export interface Version {
  versionId: string;
  deleteMarker: boolean;
  md5: string;
  size: number;
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

function retryable(err: unknown): boolean {
  if (err instanceof S3ServiceException) return err.name === 'SlowDown' || err.$metadata.httpStatusCode === 503 || err.$metadata.httpStatusCode === undefined;
  // A reset connection or a refused one while the server restarts.
  return true;
}

async function bodyMd5(body: AsyncIterable<Uint8Array> | undefined): Promise<{ md5: string; size: number }> {
  const h = createHash('md5');
  let size = 0;
  for await (const c of body ?? []) {
    h.update(c);
    size += c.length;
  }
  return { md5: h.digest('hex'), size };
}

/** Runs `fn` over `items` with at most `limit` at once. */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** A refused write abandoned because the workload is pausing (it was not applied). */
class GaveUp extends Error {}

export class Workload {
  readonly ver = new Map<string, Version[]>();
  readonly plain = new Map<string, { md5: string; size: number }>();
  /** Keys no writer touches once the workload runs (readers read them). */
  readonly stable = new Map<string, { md5: string; size: number }>();
  readonly errors: string[] = [];
  slowDowns = 0;
  writes = 0;
  reads = 0;
  readonly #clients: () => S3Client[];
  #running = false;
  #paused = false;
  #loops: Promise<void>[] = [];
  readonly #busy = new Set<number>();
  #seq = 0;

  readonly #paceMs: number;

  /**
   * `clients()` is asked before every request (servers may be restarted
   * between calls); writers and readers wait `paceMs` between requests.
   */
  constructor(clients: () => S3Client[], opts: { paceMs?: number } = {}) {
    this.#clients = clients;
    this.#paceMs = opts.paceMs ?? 5;
  }

  #client(i: number): S3Client {
    const cs = this.#clients();
    return cs[i % cs.length]!;
  }

  /**
   * Retries `fn` while the failure is retryable (counts SlowDown). While
   * pausing, a write the server refused (`SlowDown`: nothing applied) is
   * given up rather than retried, so nothing is left in doubt.
   */
  async #ack<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const slow = err instanceof S3ServiceException && err.name === 'SlowDown';
        if (slow) this.slowDowns++;
        if (slow && this.#paused) throw new GaveUp();
        if (!retryable(err) || attempt > 600) throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.min(attempt, 10) * 20));
      }
    }
  }

  async putVer(c: S3Client, key: string, size: number): Promise<void> {
    const body = randomBytes(size);
    const r = await this.#ack(() => c.send(new PutObjectCommand({ Bucket: 'ver', Key: key, Body: body })));
    const list = this.ver.get(key) ?? [];
    list.unshift({ versionId: r.VersionId!, deleteMarker: false, md5: md5(body), size });
    this.ver.set(key, list);
    this.writes++;
  }

  async deleteVer(c: S3Client, key: string): Promise<void> {
    const r = await this.#ack(() => c.send(new DeleteObjectCommand({ Bucket: 'ver', Key: key })));
    const list = this.ver.get(key) ?? [];
    list.unshift({ versionId: r.VersionId!, deleteMarker: true, md5: '', size: 0 });
    this.ver.set(key, list);
    this.writes++;
  }

  async dropVersion(c: S3Client, key: string): Promise<void> {
    const list = this.ver.get(key) ?? [];
    if (list.length < 2) return;
    const victim = list[list.length - 1]!;
    await this.#ack(() => c.send(new DeleteObjectCommand({ Bucket: 'ver', Key: key, VersionId: victim.versionId })));
    list.pop();
    this.writes++;
  }

  async putPlain(c: S3Client, key: string, size: number): Promise<void> {
    const body = randomBytes(size);
    await this.#ack(() => c.send(new PutObjectCommand({ Bucket: 'plain', Key: key, Body: body })));
    this.plain.set(key, { md5: md5(body), size });
    this.writes++;
  }

  async deletePlain(c: S3Client, key: string): Promise<void> {
    await this.#ack(() => c.send(new DeleteObjectCommand({ Bucket: 'plain', Key: key })));
    this.plain.delete(key);
    this.writes++;
  }

  /** Objects readers can rely on: `stable/<n>` in `plain`, never written again. */
  async seedStable(n: number, size: (i: number) => number): Promise<void> {
    await eachLimit(
      Array.from({ length: n }, (_, i) => i),
      8,
      async (i) => {
        const key = `stable/${String(i).padStart(4, '0')}`;
        await this.putPlain(this.#client(i), key, size(i));
        this.stable.set(key, this.plain.get(key)!);
      },
    );
  }

  /** Starts `writers` writer loops (writer w owns keys `w<w>-*`) and `readers` reader loops. */
  start(writers: number, readers: number): void {
    this.#running = true;
    for (let w = 0; w < writers; w++) this.#loops.push(this.#writer(w));
    for (let r = 0; r < readers; r++) this.#loops.push(this.#reader(r));
  }

  async #writer(w: number): Promise<void> {
    let n = 0;
    while (this.#running) {
      if (this.#paused) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      this.#busy.add(w);
      try {
        const c = this.#client(w);
        const vk = `w${w}-v${n % 7}`;
        const pk = `w${w}-p${n % 9}`;
        const size = [10, 3000, 70_000, 300_000][n % 4]!;
        switch (n % 6) {
          case 0:
          case 1:
            await this.putVer(c, vk, size);
            break;
          case 2:
            await this.putPlain(c, pk, size);
            break;
          case 3:
            await (n % 12 === 3 ? this.deleteVer(c, vk) : this.putPlain(c, `${pk}-new${n}`, size));
            break;
          case 4:
            await (n % 12 === 4 && this.plain.has(pk) ? this.deletePlain(c, pk) : this.putVer(c, vk, size));
            break;
          default:
            await this.dropVersion(c, vk);
        }
      } catch (err) {
        if (!(err instanceof GaveUp)) this.errors.push(`writer ${w}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      } finally {
        this.#busy.delete(w);
      }
      n++;
      await new Promise((r) => setTimeout(r, this.#paceMs));
    }
  }

  async #reader(r: number): Promise<void> {
    while (this.#running) {
      if (this.#paused) {
        await new Promise((res) => setTimeout(res, 20));
        continue;
      }
      const i = this.#seq++;
      try {
        const c = this.#client(r + 1);
        if (i % 2 === 0 && this.stable.size > 0) {
          const keys = [...this.stable.keys()];
          const key = keys[i % keys.length]!;
          const got = await c.send(new GetObjectCommand({ Bucket: 'plain', Key: key }));
          const b = await bodyMd5(got.Body as AsyncIterable<Uint8Array>);
          if (b.md5 !== this.stable.get(key)!.md5) this.errors.push(`reader: plain/${key} read back different bytes`);
        } else {
          const entries = [...this.ver.entries()].flatMap(([k, vs]) => vs.filter((v) => !v.deleteMarker).map((v) => [k, v] as const));
          if (entries.length === 0) continue;
          const [key, v] = entries[i % entries.length]!;
          let got;
          try {
            got = await c.send(new GetObjectCommand({ Bucket: 'ver', Key: key, VersionId: v.versionId }));
          } catch (err) {
            // The owner may have removed this version meanwhile.
            if (err instanceof S3ServiceException && err.name === 'NoSuchVersion' && !(this.ver.get(key) ?? []).includes(v)) continue;
            throw err;
          }
          const b = await bodyMd5(got.Body as AsyncIterable<Uint8Array>);
          if (b.md5 !== v.md5) this.errors.push(`reader: ver/${key}@${v.versionId} read back different bytes`);
        }
        this.reads++;
      } catch (err) {
        if (this.#paused) continue; // the server is being killed
        this.errors.push(`reader: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
      }
      await new Promise((res) => setTimeout(res, this.#paceMs));
    }
  }

  /** Stops issuing requests; resolves once the writes in flight were acknowledged (nothing left in doubt). */
  async pause(): Promise<void> {
    this.#paused = true;
    while (this.#busy.size > 0) await new Promise((r) => setTimeout(r, 10));
    // Readers in flight may still fail against a dying server: tolerated while paused.
    await new Promise((r) => setTimeout(r, 50));
  }

  resume(): void {
    this.#paused = false;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
    this.#loops = [];
  }

  /**
   * Compares the server with the model: every version of every key in
   * `ver` (ids, order, markers, bytes) and every key of `plain` (bytes);
   * returns the differences (empty = equal).
   */
  async diff(c: S3Client): Promise<string[]> {
    const out: string[] = [];
    const seen = new Map<string, { id: string; marker: boolean; latest: boolean }[]>();
    let KeyMarker: string | undefined;
    let VersionIdMarker: string | undefined;
    for (;;) {
      const page = await c.send(new ListObjectVersionsCommand({ Bucket: 'ver', KeyMarker, VersionIdMarker, MaxKeys: 1000 }));
      const all = [
        ...(page.Versions ?? []).map((v) => ({ key: v.Key!, id: v.VersionId!, marker: false, latest: v.IsLatest === true })),
        ...(page.DeleteMarkers ?? []).map((v) => ({ key: v.Key!, id: v.VersionId!, marker: true, latest: v.IsLatest === true })),
      ];
      for (const v of all) {
        const l = seen.get(v.key) ?? [];
        l.push(v);
        seen.set(v.key, l);
      }
      if (!page.IsTruncated) break;
      KeyMarker = page.NextKeyMarker;
      VersionIdMarker = page.NextVersionIdMarker;
    }
    const keys = new Set([...this.ver.keys(), ...seen.keys()]);
    for (const key of keys) {
      const want = (this.ver.get(key) ?? []).map((v) => `${v.versionId}${v.deleteMarker ? ':marker' : ''}`);
      const listedVs = seen.get(key) ?? [];
      const got = listedVs.map((v) => `${v.id}${v.marker ? ':marker' : ''}`);
      const latest = listedVs.filter((v) => v.latest).map((v) => `${v.id}${v.marker ? ':marker' : ''}`);
      if ([...want].sort().join() !== [...got].sort().join()) out.push(`ver/${key}: versions ${JSON.stringify(got)} != acknowledged ${JSON.stringify(want)}`);
      else if (want.length > 0 && (latest.length !== 1 || latest[0] !== want[0])) out.push(`ver/${key}: latest ${JSON.stringify(latest)} != acknowledged ${want[0]}`);
      if (new Set(got).size !== got.length) out.push(`ver/${key}: a version is listed twice`);
      await eachLimit(
        (this.ver.get(key) ?? []).filter((v) => !v.deleteMarker),
        8,
        async (v) => {
          try {
            const r = await c.send(new GetObjectCommand({ Bucket: 'ver', Key: key, VersionId: v.versionId }));
            const b = await bodyMd5(r.Body as AsyncIterable<Uint8Array>);
            if (b.md5 !== v.md5 || b.size !== v.size) out.push(`ver/${key}@${v.versionId}: different bytes`);
          } catch (err) {
            out.push(`ver/${key}@${v.versionId}: ${err instanceof Error ? err.name : String(err)}`);
          }
        },
      );
    }
    const listed = new Set<string>();
    let ContinuationMarker: string | undefined;
    for (;;) {
      const page = await c.send(new ListObjectVersionsCommand({ Bucket: 'plain', KeyMarker: ContinuationMarker, MaxKeys: 1000 }));
      for (const v of page.Versions ?? []) {
        if (listed.has(v.Key!)) out.push(`plain/${v.Key}: listed twice`);
        listed.add(v.Key!);
      }
      if ((page.DeleteMarkers ?? []).length > 0) out.push('plain: a delete marker in an unversioned bucket');
      if (!page.IsTruncated) break;
      ContinuationMarker = page.NextKeyMarker;
    }
    await eachLimit([...new Set([...listed, ...this.plain.keys()])], 8, async (key) => {
      const want = this.plain.get(key);
      if (want === undefined) {
        out.push(`plain/${key}: present, but was deleted`);
        return;
      }
      try {
        const r = await c.send(new GetObjectCommand({ Bucket: 'plain', Key: key }));
        const b = await bodyMd5(r.Body as AsyncIterable<Uint8Array>);
        if (b.md5 !== want.md5 || b.size !== want.size) out.push(`plain/${key}: different bytes`);
      } catch (err) {
        out.push(`plain/${key}: ${err instanceof Error ? err.name : String(err)}`);
      }
    });
    out.sort();
    return out;
  }
}
