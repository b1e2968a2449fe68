/**
 * The live certificate set of a server (`cert-dir.ts` read at start-up and
 * again whenever its files change).
 *
 * - Listeners: `serverOptions()` for `https.createServer`, then `attach`;
 *   a reload swaps the default context (`setSecureContext`) and the SNI
 *   contexts. Open connections keep the context they were made with, so a
 *   rotation drops nothing; new connections get the new certificate.
 * - Change detection: `fs.watch` on the directory and its subdirectories
 *   (a Kubernetes Secret update renames `..data`, a plain copy writes the
 *   files) plus a poll every `pollMs` as a safety net. A half-written
 *   update (a certificate whose key is not there yet) is not applied: the
 *   current set stays and the next change or poll tries again.
 * - Expiry: a certificate less than `warnBeforeMs` (21 days) from its end
 *   is reported (`tls_certificate_expiring`, once a day per certificate),
 *   published on `svc:tls:certificates` for the metric, and read by the
 *   console's alert.
 * - Trust: `trust` is the CA set this node's own clients use (`trust.ts`),
 *   following reloads.
 */
import { type FSWatcher, watch } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Clock } from '../util/clock.ts';
import { type TlsCertificatesMessage, tlsCertificates } from '../util/diagnostics.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import type { Logger } from '../util/logger.ts';
import { type PeriodicProgress, periodicWorker, type Worker } from '../util/worker.ts';
import { allPairs, CAS_DIR, type CertificateDir, type CertificatePair, readCertificateDir } from './cert-dir.ts';
import { serverContextOptions } from './tls-settings.ts';
import { CLIENT_BASE, type ClientTrust, defaultCaCertificates } from './trust.ts';

/** How long before its end a certificate is reported as expiring. */
export const EXPIRY_WARN_MS = 21 * 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

/** One certificate as logs, metrics and the console show it. */
export interface CertificateSummary {
  readonly file: string;
  /** `server` for a served pair, `ca` for a trusted CA. */
  readonly kind: 'server' | 'ca';
  readonly subject: string;
  readonly issuer: string;
  readonly names: readonly string[];
  readonly notBefore: number;
  readonly notAfter: number;
  readonly fingerprint: string;
}

export interface CertificateStoreOptions {
  readonly dir: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Safety-net poll period (default 5 s); `fs.watch` normally reacts first. */
  readonly pollMs?: number;
  readonly warnBeforeMs?: number;
  /** Re-check of the expiry warnings (default 6 h). */
  readonly expiryCheckMs?: number;
  /** Off in tests that drive `reload()` themselves. */
  readonly watch?: boolean;
}

interface Server {
  setSecureContext(options: ReturnType<typeof serverContextOptions>): void;
}

function summaries(d: CertificateDir): CertificateSummary[] {
  return [
    ...allPairs(d).map((p) => ({
      file: p.certFile,
      kind: 'server' as const,
      subject: p.subject,
      issuer: p.issuer,
      names: p.names,
      notBefore: p.notBefore,
      notAfter: p.notAfter,
      fingerprint: p.fingerprint,
    })),
    ...d.cas.map((c) => ({
      file: c.file,
      kind: 'ca' as const,
      subject: c.cert.subject.replace(/\n/g, ', '),
      issuer: c.cert.issuer.replace(/\n/g, ', '),
      names: [],
      notBefore: Date.parse(c.cert.validFrom),
      notAfter: Date.parse(c.cert.validTo),
      fingerprint: c.cert.fingerprint256,
    })),
  ];
}

export class CertificateStore {
  readonly dir: string;
  readonly #o: CertificateStoreOptions;
  #current: CertificateDir;
  #contexts = new Map<CertificatePair, SecureContext>();
  #version = 0;
  readonly #servers = new Set<Server>();
  readonly #listeners = new Set<(d: CertificateDir) => void>();
  readonly #watchers: FSWatcher[] = [];
  #poll: Worker<PeriodicProgress> | undefined;
  #expiry: Worker<PeriodicProgress> | undefined;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #reloading: Promise<boolean> | undefined;
  #again = false;
  #lastProblem: string | undefined;
  readonly #warned = new Map<string, number>();
  #closed = false;
  #trustCache: { version: number; options: ReturnType<ClientTrust['connectOptions']> } | undefined;
  /** The trust set of this node's clients (see `trust.ts`). */
  readonly trust: ClientTrust;

  private constructor(o: CertificateStoreOptions, first: CertificateDir) {
    this.dir = o.dir;
    this.#o = o;
    this.#current = first;
    this.#buildContexts();
    const connectOptions = (): ReturnType<ClientTrust['connectOptions']> => {
      if (this.#trustCache?.version !== this.#version) {
        const d = this.#current;
        const extra = [...d.cas.map((c) => c.pem), ...allPairs(d).map((p) => p.leaf.toString())];
        this.#trustCache = { version: this.#version, options: { ...CLIENT_BASE, ca: [...defaultCaCertificates(), ...extra], allowPartialTrustChain: true } };
      }
      return this.#trustCache.options;
    };
    const version = () => this.#version;
    this.trust = {
      insecure: false,
      get version() {
        return version();
      },
      connectOptions,
    };
  }

  /**
   * Reads `dir` and starts following it. A directory that does not exist is
   * an error when it was named explicitly (`explicit`), else there is no
   * store (plain HTTP). A directory without a default pair serves plain HTTP
   * (`serving` false) but its `CAs/` still count for the node's clients.
   */
  static async open(o: CertificateStoreOptions & { readonly explicit: boolean }): Promise<CertificateStore | undefined> {
    const first = await readCertificateDir(o.dir, o.clock.now());
    if (!first.exists) {
      if (o.explicit) throw new SvcError('TlsCertificateInvalid', `TLS: the certificate directory ${o.dir} does not exist`, { file: o.dir });
      return undefined;
    }
    const store = new CertificateStore(o, first);
    store.#start();
    return store;
  }

  /** The set in force. */
  get current(): CertificateDir {
    return this.#current;
  }

  /** How long before its end a certificate is reported as expiring. */
  get warnBeforeMs(): number {
    return this.#o.warnBeforeMs ?? EXPIRY_WARN_MS;
  }

  /** A default pair was present at start-up: the listeners serve TLS. */
  get serving(): boolean {
    return this.#current.main !== undefined;
  }

  /** The certificates in force, for logs, the metric and the console. */
  certificates(): CertificateSummary[] {
    return summaries(this.#current);
  }

  /** True when `fingerprint` (SHA-256, node:crypto's format) is one of the pairs this node serves. */
  isOwnCertificate(fingerprint: string): boolean {
    return allPairs(this.#current).some((p) => p.fingerprint === fingerprint);
  }

  /** Options for `https.createServer`: the default pair and SNI selection. */
  serverOptions(): ReturnType<typeof serverContextOptions> & { SNICallback: (name: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void } {
    const main = this.#current.main;
    if (main === undefined) throw new SvcError('InternalError', `no default certificate in ${this.dir}`);
    return {
      ...serverContextOptions(main),
      SNICallback: (name, cb) => cb(null, this.#contextFor(name)),
    };
  }

  /** Keeps `server`'s default context current across reloads. */
  attach(server: Server): void {
    this.#servers.add(server);
  }

  onReload(fn: (d: CertificateDir) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * Reads the directory again and applies it when it changed and is valid.
   * Resolves true when a new set was applied. Concurrent calls share one read.
   */
  reload(): Promise<boolean> {
    if (this.#reloading !== undefined) {
      this.#again = true;
      return this.#reloading;
    }
    const run = async (): Promise<boolean> => {
      let applied = false;
      do {
        this.#again = false;
        applied = (await this.#reloadOnce()) || applied;
      } while (this.#again && !this.#closed);
      return applied;
    };
    this.#reloading = run().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  /** The directory's re-read (polled besides the file watch) and the expiry check. */
  workers(): Worker<PeriodicProgress>[] {
    return [this.#poll, this.#expiry].filter((w): w is Worker<PeriodicProgress> => w !== undefined);
  }

  close(): void {
    this.#closed = true;
    void this.#poll?.stop();
    void this.#expiry?.stop();
    if (this.#debounce !== undefined) clearTimeout(this.#debounce);
    for (const w of this.#watchers.splice(0)) w.close();
  }

  async #reloadOnce(): Promise<boolean> {
    const log = this.#o.logger;
    let next: CertificateDir;
    try {
      next = await readCertificateDir(this.dir, this.#o.clock.now());
      if (!next.exists) throw new SvcError('TlsCertificateInvalid', `TLS: the certificate directory ${this.dir} is gone`);
      if (this.serving && next.main === undefined) throw new SvcError('TlsCertificateInvalid', `TLS: ${this.dir} no longer holds public.crt and private.key`);
    } catch (err) {
      const e = toSvcError(err);
      if (e.message !== this.#lastProblem) {
        this.#lastProblem = e.message;
        log.warn({ event: 'tls_reload_failed', dir: this.dir, err: e.message }, `${e.message}; keeping the certificates in force`);
      }
      return false;
    }
    this.#lastProblem = undefined;
    if (next.digest === this.#current.digest) return false;
    if (!this.serving && next.main !== undefined) {
      log.warn({ event: 'tls_restart_needed', dir: this.dir }, `a certificate appeared in ${this.dir}; restart the node to serve TLS (the listeners started in plain HTTP)`);
    }
    this.#current = next;
    this.#buildContexts();
    this.#version++;
    if (next.main !== undefined) for (const s of this.#servers) s.setSecureContext(serverContextOptions(next.main));
    log.info(
      { event: 'tls_certificates_reloaded', dir: this.dir, certificates: this.certificates().map((c) => ({ file: c.file, notAfter: new Date(c.notAfter).toISOString(), fingerprint: c.fingerprint })) },
      'TLS certificates reloaded; new connections use them',
    );
    this.#checkExpiry();
    for (const l of this.#listeners) l(next);
    return true;
  }

  #buildContexts(): void {
    const m = new Map<CertificatePair, SecureContext>();
    for (const p of allPairs(this.#current)) m.set(p, createSecureContext(serverContextOptions(p)));
    this.#contexts = m;
  }

  /** The SNI pair whose certificate covers `name`, else the default pair. */
  #contextFor(name: string): SecureContext | undefined {
    const d = this.#current;
    const host = name.toLowerCase();
    for (const p of d.sni) if (p.leaf.checkHost(host) !== undefined) return this.#contexts.get(p);
    return d.main === undefined ? undefined : this.#contexts.get(d.main);
  }

  #start(): void {
    const log = this.#o.logger;
    const d = this.#current;
    if (d.main !== undefined) {
      log.info(
        {
          event: 'tls_enabled',
          dir: this.dir,
          certificates: allPairs(d).map((p) => ({ file: p.certFile, names: p.names, notAfter: new Date(p.notAfter).toISOString() })),
          cas: d.cas.length,
        },
        `serving TLS with the certificates in ${this.dir}`,
      );
    } else {
      log.info({ event: 'tls_disabled', dir: this.dir, cas: d.cas.length }, `no public.crt and private.key in ${this.dir}: listeners serve plain HTTP`);
    }
    this.#checkExpiry();
    const loop = (name: string, everyMs: number, tick: () => unknown) => {
      const w = periodicWorker({ name, everyMs, atStart: false, tick, clock: this.#o.clock, logger: log });
      w.start();
      return w;
    };
    this.#expiry = loop('tls-expiry-check', this.#o.expiryCheckMs ?? 6 * 3_600_000, () => this.#checkExpiry());
    if (this.#o.watch === false) return;
    this.#poll = loop('tls-reload', this.#o.pollMs ?? 5_000, () => this.reload());
    this.#watchTree();
  }

  /** Watches the directory and its (non-hidden) subdirectories; a failing watch leaves the poll. */
  #watchTree(): void {
    const onChange = () => {
      if (this.#debounce !== undefined) clearTimeout(this.#debounce);
      this.#debounce = setTimeout(() => {
        this.#debounce = undefined;
        void this.reload();
      }, 200);
      this.#debounce.unref();
    };
    const dirs = [this.dir, join(this.dir, CAS_DIR), ...this.#current.sni.map((p) => join(this.dir, p.name))];
    for (const dir of dirs) {
      try {
        const w = watch(dir, { persistent: false }, onChange);
        w.on('error', () => w.close());
        this.#watchers.push(w);
      } catch {
        // not there (CAs/ is optional) or no inotify watches left: the poll covers it
      }
    }
  }

  #checkExpiry(): void {
    const now = this.#o.clock.now();
    const warnBefore = this.warnBeforeMs;
    const list = this.certificates();
    const msg: TlsCertificatesMessage = { certificates: list.map((c) => ({ file: c.file, kind: c.kind, notAfter: c.notAfter })) };
    if (tlsCertificates.hasSubscribers) tlsCertificates.publish(msg);
    for (const c of list) {
      const left = c.notAfter - now;
      if (left > warnBefore) continue;
      const key = c.fingerprint;
      const last = this.#warned.get(key);
      if (last !== undefined && now - last < DAY_MS) continue;
      this.#warned.set(key, now);
      const fields = { event: left <= 0 ? 'tls_certificate_expired' : 'tls_certificate_expiring', file: c.file, kind: c.kind, subject: c.subject, notAfter: new Date(c.notAfter).toISOString(), daysLeft: Math.floor(left / DAY_MS) };
      if (left <= 0) this.#o.logger.error(fields, `TLS certificate ${c.file} expired on ${fields.notAfter}; replace it`);
      else this.#o.logger.warn(fields, `TLS certificate ${c.file} expires on ${fields.notAfter} (in ${fields.daysLeft} days); renew it`);
    }
  }
}
