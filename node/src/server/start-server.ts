/**
 * Composition root: `startServer(config, deps)`.
 *
 * Start-up order (SPEC "Startup failures"), each step logged with a stable
 * `event`:
 *   1. storage-class check and pool layout   (`startup_storage_class`)  - no disk touched yet
 *   2. local disks: every local drive root must exist (`startup_local_disks`)
 *   3. lock clients (`startup_lock_clients`)
 *   4. format quorum per pool, formatting fresh pools (`startup_format_quorum`)
 *   5. services on top of the formatted drives (object layer, S3/admin handlers)
 *   6. listeners (`startup_listening`), then IAM and finalization (the
 *      services' `finalize`: the bucket sync) → ready
 *
 * When format quorum cannot be reached yet (drives unreachable), the
 * listeners start anyway and the node stays up degraded (S3 503), retrying
 * in the background; `SVC_STARTUP_READINESS_MAX_WAIT_SECS` bounds how long
 * start-up waits before it says it continues degraded. Permanent problems
 * (`VolumeNotFound`, `PoolTopologyMismatch`, …) throw, or reach `onFatal`
 * when found by a background retry.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { type ConsoleApp, createConsoleApp } from '../api/console/console-handler.ts';
import type { ConsoleOpenId } from '../api/console/sso.ts';
import {
  type DriveFormatState,
  decideFormat,
  ensurePoolFormat,
  type FormatFile,
  type FormatIO,
  localFormatIO,
  type PoolGeometry,
  type SlotStatus,
} from '../storage/format.ts';
import type { CertificateStore } from '../tls/cert-store.ts';
import { buildPoolLayouts, type Endpoint, isLocalEndpoint, parseParity, type PoolLayout } from 'svc-topology';
import type { Clock } from '../util/clock.ts';
import type { Config, ListenAddress } from '../util/config.ts';
import { connectionCaps } from '../util/net-config.ts';
import { SvcError, toSvcError } from '../util/errors.ts';
import { eventual, mapEventual } from '../util/eventual.ts';
import type { Logger } from '../util/logger.ts';
import { openDescriptors, raiseFileLimit } from './descriptors.ts';
import { createDispatcher, type RouteHandlers, routeOf } from './dispatcher.ts';
import { HttpGuard } from './http-guard.ts';
import { runIamBootstrap } from './iam-bootstrap.ts';
import { createListener, type Listener } from './listener.ts';
import { addResolvedLocalHosts, localHostSet } from './local-hosts.ts';
import { Readiness } from './readiness.ts';
import { countStart } from './start-counter.ts';
import { evaluateStorage } from './storage-health.ts';

/** What the services built on top of the formatted drives get. */
export interface StorageContext {
  readonly config: Config;
  readonly pools: readonly PoolLayout[];
  readonly deploymentId: string;
  /** Per pool: the format in force and each drive's slot status (command-line order). */
  readonly formats: readonly { readonly reference: FormatFile; readonly slots: readonly SlotStatus[] }[];
  /** Per pool, per endpoint: served by this node. */
  readonly local: readonly (readonly boolean[])[];
  readonly readiness: Readiness;
  readonly logger: Logger;
  readonly clock: Clock;
}

export interface ServiceBundle {
  readonly handlers?: RouteHandlers;
  /**
   * One attempt to load the IAM state from storage (`iam-bootstrap.ts`);
   * failures are retried in the background. Without it IAM is the root
   * credential of the configuration alone.
   */
  loadIam?(): Promise<string>;
  /** A graceful stop began: long-lived responses (live notification listeners) end now, so the drain does not wait for them. */
  beginShutdown?(): void;
  /** Stops the services (called on shutdown, once the listeners drained). */
  close?(): Promise<void>;
  /**
   * Start-up work that must succeed before the node reports ready (the
   * bucket sync giving a joining pool every bucket). Resolves undefined when
   * done, else why not yet; start-up awaits the first attempt, then retries
   * in the background (1 s doubling to 30 s) while `startup_finalization`
   * stays pending.
   */
  finalize?(): Promise<string | undefined>;
  /** More storage detail for the readiness report (e.g. which pool lacks which bucket, and why). */
  storageNote?(): string | undefined;
  /** True while some erasure set cannot take writes although its drives are online (full, read-only): the write probe fails. */
  writeBlocked?(): boolean;
}

export interface ServerDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  /** Handlers available from the first request (e.g. internode RPC, needed before format quorum). */
  readonly handlers?: RouteHandlers;
  /** Builds the object layer and its handlers once format quorum is reached. */
  readonly buildServices?: (ctx: StorageContext) => Promise<ServiceBundle>;
  /**
   * Drive access for format quorum. Default: local roots; non-local
   * endpoints read as offline until a transport for them is supplied.
   */
  readonly formatIO?: (pool: PoolLayout, local: readonly boolean[]) => FormatIO;
  /** This machine's names/IPs; default from `os`. */
  readonly localHosts?: ReadonlySet<string>;
  /** Called when a background retry hits a permanent error. */
  readonly onFatal?: (err: SvcError) => void;
  readonly version?: string;
  /** Storage re-check period (default 10 s). */
  readonly storageCheckMs?: number;
  /** The certificate directory: its default pair makes both listeners serve TLS (`tls/cert-store.ts`). */
  readonly tls?: CertificateStore | undefined;
  /** More storage detail for readiness from below the services (e.g. peers refused for their TLS certificate). */
  readonly storageNote?: () => string | undefined;
  /** Addresses exempt from the S3 listener's connection caps (cluster peers). */
  readonly exemptAddress?: (address: string) => boolean;
  /** The node's readiness, when the composition built it first (its admin plane reads it); default: a fresh one. */
  readonly readiness?: Readiness;
  /** Creates the distributed lock clients: start-up step 3, after the local disks and before format quorum (SPEC). */
  readonly initLockClients?: () => void;
  /** The OpenID provider behind the console's "Sign in with SSO" (from the identity store). */
  readonly consoleOpenId?: () => ConsoleOpenId | undefined;
  /** Whether the identity store has an LDAP server configured (the console then offers LDAP sign-in). */
  readonly consoleLdap?: () => boolean;
}

export interface RunningServer {
  /** Bound address of the S3 listener. */
  readonly address: AddressInfo;
  /** Bound address of the console listener, when enabled. */
  readonly consoleAddress: AddressInfo | undefined;
  /** `https` when the listeners serve TLS. */
  readonly scheme: 'http' | 'https';
  readonly readiness: Readiness;
  readonly pools: readonly PoolLayout[];
  /** Limits of the S3 listener (connection caps, timeouts) and what they caught. */
  readonly guard: HttpGuard;
  /** Re-evaluates storage readiness now (after a peer went offline or came back) instead of at the next 10 s tick. */
  recheckStorage(): void;
  deploymentId(): string | undefined;
  /**
   * Graceful stop: not ready, listeners stop accepting, requests in flight
   * get `graceMs` (default `SVC_SHUTDOWN_TIMEOUT`) to finish before their
   * connections are cut, then the services (their jobs, the object layer).
   * `shutdown_complete` is logged at the end unless `more` says the caller
   * has more to stop (the node's own jobs) and logs it itself.
   */
  close(graceMs?: number, more?: boolean): Promise<void>;
}

const geometry = (p: PoolLayout): PoolGeometry => ({ cmdline: p.cmdline, setCount: p.setCount, setDriveCount: p.setDriveCount });

function drivePath(ep: Endpoint): string {
  return ep.path;
}

function hostsOf(set: readonly Endpoint[]): Set<string> {
  return new Set(set.map((e) => (e.kind === 'url' ? `${e.host}:${e.port}` : 'this host')));
}

/** Start-up warnings derived from the layout (pure). */
export function layoutWarnings(pools: readonly PoolLayout[]): { event: string; message: string; pool: number }[] {
  const out: { event: string; message: string; pool: number }[] = [];
  for (const p of pools) {
    if (p.endpoints.length > 1) {
      const singleHost = p.sets.every((s) => hostsOf(s).size === 1);
      out.push({
        event: 'host_failure_data_unavailable',
        pool: p.index,
        message: singleHost
          ? `pool ${p.index} ("${p.cmdline}"): every drive of each erasure set is on one host; losing that host makes the pool's data unavailable`
          : `pool ${p.index} ("${p.cmdline}"): each set tolerates ${p.parity.standard} failed drives; losing a host that holds more of a set's drives makes data unavailable`,
      });
    }
    if (p.parity.standardAuto && p.parity.standard === 0) {
      out.push({
        event: 'zero_redundancy',
        pool: p.index,
        message: `pool ${p.index} ("${p.cmdline}") is a single drive: data has no redundancy; any drive failure loses data`,
      });
    }
  }
  return out;
}

/**
 * TLS and the volume arguments must agree (pure): https:// endpoints need
 * this node's certificate, and a node serving TLS cannot be reached by peers
 * told to use http://.
 */
export function checkTransport(pools: readonly PoolLayout[], tls: { readonly serving: boolean; readonly dir: string } | undefined): void {
  const urls = pools.flatMap((p) => p.endpoints).filter((e) => e.kind === 'url');
  const https = urls.find((e) => e.scheme === 'https');
  const http = urls.find((e) => e.scheme === 'http');
  const serving = tls?.serving === true;
  if (https !== undefined && !serving) {
    throw new SvcError(
      'TlsCertificateInvalid',
      `TLS: the volume arguments use https:// (${https.raw}) but ${tls === undefined ? 'there is no certificate directory' : `${tls.dir} holds no public.crt and private.key`}; put this node's certificate there (--certs-dir / SVC_CERTS_DIR) or use http:// endpoints`,
    );
  }
  if (http !== undefined && serving) {
    throw new SvcError(
      'TlsCertificateInvalid',
      `TLS: this node serves TLS (certificates in ${tls!.dir}) but the volume arguments use http:// (${http.raw}); peers would call it in plain HTTP: use https:// endpoints on every node`,
    );
  }
}

function listen(server: Listener, addr: ListenAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen({ host: addr.host === '' ? undefined : addr.host, port: addr.port }, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

function closeServer(server: Listener, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    const t = setTimeout(() => server.closeAllConnections(), graceMs);
    t.unref();
    server.close(() => {
      clearTimeout(t);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** How often a draining listener closes the connections whose request finished. */
const DRAIN_POLL_MS = 50;

/**
 * A graceful stop's drain of one listener: it stops accepting (a new
 * connection is refused), closes connections with no request in progress,
 * answers the requests in flight (and any that still arrive on an open
 * connection) with `Connection: close`, closes each connection as soon as
 * its request is done, and cuts whatever is still open after `graceMs`.
 * Resolves with how many connections were cut once every one is closed.
 */
function drainServer(server: Listener, graceMs: number): Promise<number> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve(0);
      return;
    }
    let cut = 0;
    const noKeepAlive = (_req: IncomingMessage, res: ServerResponse) => {
      res.shouldKeepAlive = false;
    };
    server.prependListener('request', noKeepAlive);
    const poll = setInterval(() => server.closeIdleConnections(), DRAIN_POLL_MS);
    const deadline = setTimeout(() => {
      server.getConnections((_err, n) => {
        cut = n;
        server.closeAllConnections();
      });
    }, graceMs);
    server.close(() => {
      clearInterval(poll);
      clearTimeout(deadline);
      server.off('request', noKeepAlive);
      resolve(cut);
    });
    server.closeIdleConnections();
  });
}

export async function startServer(config: Config, deps: ServerDeps): Promise<RunningServer> {
  const { logger: log, clock } = deps;
  const readiness = deps.readiness ?? new Readiness({ lock: true, peers: true });
  readiness.onChange((r, prev) => {
    const fields = { event: 'readiness_changed', ready: r.ready, pending: r.pending, degradedReasons: r.degradedReasons, wasReady: prev.ready };
    if (r.ready) log.info(fields, 'node is ready');
    // a stop asked for (SIGTERM) is no fault: not ready on purpose, at info
    else if (r.details['shutdown'] !== undefined) log.info({ ...fields, shutdown: true }, 'node not ready: shutting down');
    else if (prev.ready) log.warn(fields, 'node lost readiness');
    else log.info(fields, 'node not ready yet');
  });

  // 0. the listeners' ports are free: a node whose port is taken (a second start) stops before it touches a drive
  await checkListenAddresses(config, log);

  // 1. storage class + layout: pure, before any disk is touched
  const storageClass = {
    standard: parseParity('SVC_STORAGE_CLASS_STANDARD', config.storageClass.standard),
    rrs: parseParity('SVC_STORAGE_CLASS_RRS', config.storageClass.rrs),
  };
  const pools = buildPoolLayouts(config.volumes, { setDriveCount: config.erasureSetDriveCount, storageClass, cwd: config.cwd });
  log.info(
    {
      event: 'startup_storage_class',
      pools: pools.map((p) => ({
        pool: p.index,
        cmdline: p.cmdline,
        drives: p.endpoints.length,
        setCount: p.setCount,
        setDriveCount: p.setDriveCount,
        standardParity: p.parity.standard,
        rrsParity: p.parity.rrs,
      })),
      optimize: config.storageClass.optimize,
      inlineBlock: config.storageClass.inlineBlock,
    },
    'storage class and pool layout validated',
  );
  for (const w of layoutWarnings(pools)) log.warn({ event: w.event, pool: w.pool }, w.message);
  checkTransport(pools, deps.tls);
  const tls = deps.tls?.serving === true ? deps.tls : undefined;

  // 2. local disks
  let localHosts = deps.localHosts;
  if (!localHosts) {
    const set = localHostSet(config.address.host);
    const urlHosts = pools.flatMap((p) => p.endpoints.flatMap((e) => (e.kind === 'url' ? [e.host] : [])));
    if (urlHosts.length > 0) {
      const r = await addResolvedLocalHosts(urlHosts, set);
      log.info({ event: 'startup_endpoint_resolution', resolvedLocal: r.resolvedLocal, unresolved: r.unresolved }, 'endpoint host names resolved');
    }
    localHosts = set;
  }
  const local = pools.map((p) => p.endpoints.map((e) => isLocalEndpoint(e, localHosts, config.address.port)));
  const ios = pools.map((p, i) => deps.formatIO?.(p, local[i]!) ?? defaultFormatIO(p, local[i]!));
    if (!local.flat().some(Boolean)) {
      throw new SvcError('InvalidTopology', `none of the endpoints is served by this node (listen port ${config.address.port}); check --address and the host names`);
    }
    await Promise.all(pools.flatMap((p, pi) => p.endpoints.map((_e, ei) => (local[pi]![ei] ? ios[pi]!.readFormat(ei) : undefined))));
    log.info({ event: 'startup_local_disks', drives: local.flat().filter(Boolean).length, remote: local.flat().filter((l) => !l).length }, 'local drives present');
  await countStart([...new Set(pools.flatMap((p, pi) => p.endpoints.filter((_e, ei) => local[pi]![ei]).map(drivePath)))], log);

  // 3. lock clients (SPEC: local disks, lock clients, format quorum, in that order)
  deps.initLockClients?.();
  log.info({ event: 'startup_lock_clients', distributed: deps.initLockClients !== undefined }, 'lock clients created');

  // 4. format quorum
  let deploymentId: string | undefined;
  let formats: { reference: FormatFile; slots: readonly SlotStatus[] }[] | undefined;
  const tryFormat = async (): Promise<string | undefined> => {
    const states = await Promise.all(pools.map((p, i) => readAll(ios[i]!, p.endpoints.length)));
    const decisions = pools.map((p, i) => decideFormat(geometry(p), states[i]!));
    const ids = new Set<string>();
    for (const d of decisions) {
      if (d.action === 'fail') throw new SvcError(d.code, d.message);
      if (d.action === 'use') ids.add(d.reference.id);
    }
    if (ids.size > 1) throw new SvcError('CorruptedFormat', `pools belong to different deployments: ${[...ids].join(', ')}`);
    const waiting = decisions.flatMap((d) => (d.action === 'wait' ? [d.reason] : []));
    if (waiting.length > 0) return waiting.join('; ');
    let id = [...ids][0];
    const out: { reference: FormatFile; slots: readonly SlotStatus[] }[] = [];
    for (const [i, p] of pools.entries()) {
      const r = await ensurePoolFormat(geometry(p), ios[i]!, { deploymentId: id });
      if (r.action === 'wait') return r.reason;
      id = r.reference.id;
      if (r.formatted) log.info({ event: 'startup_format_written', pool: p.index, deploymentId: id, drives: p.endpoints.length }, 'fresh pool formatted');
      out.push({ reference: r.reference, slots: r.slots });
    }
    deploymentId = id;
    formats = out;
    log.info({ event: 'startup_format_quorum', deploymentId: id, pools: out.length }, 'format quorum reached');
    return undefined;
  };

  // Step 5's result: settled once, when the services over the formatted drives are built.
  const built = eventual<ServiceBundle>('the services over the formatted drives');
  let driveDetail: string | undefined;
  const storageDetail = () => [driveDetail, built.eventual.get()?.storageNote?.(), deps.storageNote?.()].filter((d) => d !== undefined && d !== '').join('; ');
  let lastStates: DriveFormatState[][] | undefined;
  const refreshStorage = async () => {
    const states = await Promise.all(pools.map((p, i) => readAll(ios[i]!, p.endpoints.length, lastStates?.[i])));
    lastStates = states;
    const rep = evaluateStorage(
      pools.map((p, i) => ({ setDriveCount: p.setDriveCount, standardParity: p.parity.standard, reference: formats?.[i]?.reference, drives: states[i]! })),
    );
    driveDetail = rep.detail;
    readiness.update({ storageRead: rep.read, storageWrite: rep.write && built.eventual.get()?.writeBlocked?.() !== true }, { storage: storageDetail() });
  };

  // The dispatcher answers the services' routes 503 until they are built (the RPC, peer and
  // admin handlers answer from the first request).
  const dispatcher = createDispatcher({
    health: readiness,
    healthEnabled: config.healthEndpointEnable,
    logger: log,
    handlers: deps.handlers,
    later: mapEventual(built.eventual, (b) => b.handlers ?? {}),
  });
  // `Expect: 100-continue` requests reach the dispatcher too (the S3 handler sends 100 only once the request is authorised);
  // any other Expect value is ignored, as S3 does (node:http would answer 417)
  // Descriptors: the soft limit raised to the hard one; connection caps and shedding follow from it.
  const fileLimit = raiseFileLimit();
  const caps = connectionCaps(config.http, fileLimit.soft > 0 ? fileLimit.soft : 1 << 20);
  log.info({ event: 'startup_file_limit', ...fileLimit, maxConnections: caps.global, maxConnectionsPerAddress: caps.perAddress }, `file descriptor limit ${fileLimit.soft}${fileLimit.raised ? ' (raised to the hard limit)' : ''}`);
  const descriptors = () => ({ open: openDescriptors(), limit: fileLimit.soft });
  const guard = new HttpGuard({ limits: config.http, caps, logger: log, clock, listener: 's3', descriptors, ...(deps.exemptAddress ? { exempt: deps.exemptAddress } : {}) });
  const kindOf = (req: IncomingMessage) => {
    const route = routeOf((req.url ?? '/').split('?')[0]!, config.healthEndpointEnable);
    return route === 'rpc' || route === 'peer' ? 'peer' : route === 'health' ? 'probe' : 'client';
  };
  const main = createListener({
    name: 's3',
    handler: dispatcher.handle,
    checkContinue: true,
    ignoreExpectations: true,
    tls,
    trustedProxies: config.trustedProxies,
    logger: log,
    guard,
    kindOf,
  });
  let mainAddr: AddressInfo | undefined;
  const consoleApp: ConsoleApp | undefined = config.consoleEnable
    ? createConsoleApp({
        health: readiness,
        config: config.console,
        region: config.region,
        clock,
        logger: log,
        version: deps.version ?? 'dev',
        s3Address: () => mainAddr,
        ...(tls !== undefined ? { s3Tls: tls } : {}),
        ...(deps.consoleOpenId !== undefined ? { openId: deps.consoleOpenId } : {}),
        ...(deps.consoleLdap !== undefined ? { ldap: deps.consoleLdap } : {}),
      })
    : undefined;
  if (consoleApp) readiness.onChange((r) => consoleApp.readinessChanged(r.ready));
  const consoleGuard = consoleApp ? new HttpGuard({ limits: config.http, caps, logger: log, clock, listener: 'console', descriptors }) : undefined;
  const consoleServer = consoleApp
    ? createListener({ name: 'console', handler: consoleApp.handle, tls, trustedProxies: config.trustedProxies, logger: log, guard: consoleGuard })
    : undefined;

  let consoleAddr: AddressInfo | undefined;
  const bindListeners = async () => {
    try {
      mainAddr = await listen(main, config.address);
    } catch (err) {
      throw bindFailed(log, 's3', config.address, err);
    }
    if (consoleServer) {
      try {
        consoleAddr = await listen(consoleServer, config.consoleAddress);
      } catch (err) {
        await closeServer(main, 0);
        throw bindFailed(log, 'console', config.consoleAddress, err);
      }
    }
    log.info(
      {
        event: 'startup_listening',
        address: `${mainAddr.address}:${mainAddr.port}`,
        console: consoleAddr ? `${consoleAddr.address}:${consoleAddr.port}` : 'disabled',
        scheme: tls ? 'https' : 'http',
        trustedProxies: config.trustedProxies.networks,
      },
      'listeners bound',
    );
  };

  let stopMonitor: (() => void) | undefined;
  const stopping = new AbortController();

  // Last start-up step: the services' own (awaited once, then retried in the background).
  const finalizeOnce = async (): Promise<string | undefined> => {
    try {
      return await built.eventual.get()?.finalize?.();
    } catch (err) {
      return toSvcError(err).message;
    }
  };
  const finalize = async () => {
    const reason = await finalizeOnce();
    readiness.update({ finalized: reason === undefined }, { storage: storageDetail() });
    if (reason === undefined) return;
    log.warn({ event: 'startup_finalization_wait', reason }, 'start-up finalization not done yet; retrying');
    void retryWithBackoff(clock, stopping.signal, 30_000, async () => {
      const again = await finalizeOnce();
      readiness.update({ finalized: again === undefined }, { storage: storageDetail() });
      if (again === undefined) {
        log.info({ event: 'startup_finalized' }, 'start-up finalization done');
        return true;
      }
      log.info({ event: 'startup_finalization_wait', reason: again }, 'start-up finalization still waiting');
      return false;
    });
  };

  // 5/6. services, IAM, finalization
  const finishStartup = async () => {
    await refreshStorage();
    if (deps.buildServices && deploymentId && formats) {
      const services = await deps.buildServices({ config, pools, deploymentId, formats, local, readiness, logger: log, clock });
      built.settle(services);
      log.info({ event: 'startup_services' }, 'object layer and handlers installed');
    }
    // IAM: the root credential comes with the configuration; the IAM state
    // stored in the deployment loads once storage answers, retried until it does.
    const bundle = built.eventual.get();
    if (bundle?.loadIam) {
      await runIamBootstrap({ load: () => bundle.loadIam!(), readiness, logger: log, clock, signal: stopping.signal }).first;
    } else {
      readiness.update({ iam: true }, { iam: config.credentials.isDefault ? 'root credential (default)' : 'root credential' });
    }
    await finalize();
    monitoring = true;
    stopMonitor = clock.every(deps.storageCheckMs ?? 10_000, recheckStorage);
    log.info({ event: 'startup_ready', deploymentId, ready: readiness.ready }, 'start-up complete');
  };

  // The storage re-check: every 10 s once started, and at once when asked (a peer went or came back).
  let monitoring = false;
  let checking = false;
  let again = false;
  const recheckStorage = (): void => {
    if (!monitoring) return;
    if (checking) {
      // Asked while a check runs (peers leaving one after the other): one more after it.
      again = true;
      return;
    }
    checking = true;
    refreshStorage()
      .catch((err: unknown) => log.error({ event: 'storage_check_failed', err: String(err) }, 'storage re-check failed'))
      .finally(() => {
        checking = false;
        if (again) {
          again = false;
          recheckStorage();
        }
      });
  };

  const waitReason = await tryFormat();
  if (waitReason === undefined) {
    // Until the listeners are bound nothing else keeps the process alive: the
    // IAM retry's timers are unref'd, so a node whose peers cannot serve IAM
    // yet would otherwise leave an empty event loop and exit mid start-up.
    const holdOpen = setInterval(() => undefined, 60_000);
    try {
      await finishStartup().catch(async (err: unknown) => {
        await built.eventual.get()?.close?.();
        throw err;
      });
      await bindListeners();
    } finally {
      clearInterval(holdOpen);
    }
  } else {
    log.warn({ event: 'startup_format_wait', reason: waitReason }, 'format quorum not reached yet; serving degraded and retrying');
    readiness.update({ storageRead: false, storageWrite: false }, { storage: [waitReason, deps.storageNote?.()].filter((d) => d !== undefined && d !== '').join('; ') });
    await bindListeners();
    void retryWithBackoff(clock, stopping.signal, 5000, async () => {
      try {
        const reason = await tryFormat();
        if (reason === undefined) {
          await finishStartup();
          return true;
        }
        log.info({ event: 'startup_format_wait', reason }, 'still waiting for format quorum');
        return false;
      } catch (err) {
        const e = toSvcError(err);
        log.error({ event: 'startup_failed', code: e.code, err: e.message }, e.message);
        deps.onFatal?.(e);
        return true;
      }
    });
  }

  // Start-up waits for readiness at most SVC_STARTUP_READINESS_MAX_WAIT_SECS,
  // then says it carries on degraded; recovery keeps running either way.
  if (!readiness.ready) {
    const waitMs = config.startupReadinessMaxWaitSecs * 1000;
    void Promise.race([readiness.whenReady(stopping.signal), clock.sleep(waitMs, stopping.signal).then(() => false)]).then(
      (ready) => {
        if (!ready && !stopping.signal.aborted) {
          log.warn(
            { event: 'startup_readiness_wait_exceeded', waitedSecs: config.startupReadinessMaxWaitSecs, pending: readiness.report().pending },
            'readiness wait exceeded SVC_STARTUP_READINESS_MAX_WAIT_SECS; continuing in degraded mode, recovery continues',
          );
        }
      },
      () => undefined,
    );
  }

  return {
    address: mainAddr!,
    consoleAddress: consoleAddr,
    scheme: tls ? 'https' : 'http',
    readiness,
    pools,
    guard,
    recheckStorage,
    deploymentId: () => deploymentId,
    async close(graceMs = config.shutdownTimeoutMs, more = false) {
      stopping.abort();
      stopMonitor?.();
      // 1. Not ready at once (load balancers and Kubernetes stop routing here), then the
      //    listeners stop accepting and the requests in flight finish, for `graceMs` at most.
      readiness.update({ stopping: true });
      log.info({ event: 'shutdown_begin', drainMs: graceMs }, `shutting down: requests in flight get ${graceMs} ms to finish`);
      const started = clock.now();
      built.eventual.get()?.beginShutdown?.();
      const [cut, consoleCut] = await Promise.all([drainServer(main, graceMs), consoleServer ? drainServer(consoleServer, graceMs) : Promise.resolve(0)]);
      if (cut + consoleCut > 0) {
        log.warn({ event: 'shutdown_drain_deadline', drainMs: graceMs, cut: cut + consoleCut }, `requests still in flight after ${graceMs} ms were cut (SVC_SHUTDOWN_TIMEOUT)`);
      } else {
        log.info({ event: 'shutdown_drained', ms: clock.now() - started }, 'requests in flight finished');
      }
      guard.close();
      consoleGuard?.close();
      // 2. Then what ran behind them: the services' background jobs (the supervisor, in
      //    reverse start order), then the object layer.
      try {
        await built.eventual.get()?.close?.();
      } catch (err) {
        log.error({ event: 'shutdown_services_failed', err: String(err) }, 'stopping services failed');
      }
      await consoleApp?.close();
      if (!more) log.info({ event: 'shutdown_complete' }, 'shut down');
    },
  };
}

/** Calls `attempt` after 1 s, the wait doubling up to `maxMs`, until it returns true or `signal` aborts. */
async function retryWithBackoff(clock: Clock, signal: AbortSignal, maxMs: number, attempt: () => Promise<boolean>): Promise<void> {
  let delay = 1000;
  while (!signal.aborted) {
    try {
      await clock.sleep(delay, signal);
    } catch {
      return;
    }
    delay = Math.min(delay * 2, maxMs);
    if (await attempt()) return;
  }
}

/**
 * Every drive's format state. A read refused for a lack of resources
 * (`SlowDown`: out of file descriptors here or on the peer) says nothing
 * about the drive: it keeps its `previous` state instead of turning offline.
 */
function readAll(io: FormatIO, n: number, previous?: readonly DriveFormatState[]): Promise<DriveFormatState[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      io.readFormat(i).catch((err: unknown): DriveFormatState => {
        const e = toSvcError(err);
        if (e.code === 'SlowDown' && previous?.[i] !== undefined) return previous[i];
        // A drive root that vanished after start-up is an offline drive, not a crash.
        return { state: 'offline', reason: e.message };
      }),
    ),
  );
}

/** Local roots through the filesystem; remote endpoints offline until a transport is supplied. */
function defaultFormatIO(pool: PoolLayout, local: readonly boolean[]): FormatIO {
  const files = localFormatIO(pool.endpoints.map(drivePath));
  return {
    readFormat: (i) => (local[i] ? files.readFormat(i) : Promise.resolve({ state: 'offline', reason: `${pool.endpoints[i]!.raw}: remote drive, no internode transport` })),
    writeFormat: (i, f) => {
      if (!local[i]) throw new SvcError('DiskNotFound', `${pool.endpoints[i]!.raw}: remote drive, no internode transport`);
      return files.writeFormat(i, f);
    },
  };
}

const LISTENER_SETTINGS = {
  s3: { flag: '--address', variable: 'SVC_ADDRESS' },
  console: { flag: '--console-address', variable: 'SVC_CONSOLE_ADDRESS' },
} as const;

/** A listener that could not bind, logged, as the start-up error: what happened and what to do. */
function bindFailed(log: Logger, listener: keyof typeof LISTENER_SETTINGS, addr: ListenAddress, err: unknown): SvcError {
  log.error({ event: 'http_listener_bind_failed', listener, address: addr.raw, err: String(err) }, 'HTTP listener bind failed');
  const { flag, variable } = LISTENER_SETTINGS[listener];
  const other = `choose another with ${flag} or ${variable} (e.g. ${flag} :9100)`;
  const advice: Record<string, string> = {
    EADDRINUSE: `; another process listens on that port: stop it, or ${other}`,
    EACCES: `; ports below 1024 need privileges: ${other}`,
    EADDRNOTAVAIL: `; no network interface of this machine has that address: ${other}`,
  };
  return new SvcError('ListenerBindFailed', `HTTP listener bind failed on ${addr.raw}: ${(err as Error).message}${advice[(err as NodeJS.ErrnoException).code ?? ''] ?? ''}`, undefined, { cause: err });
}

/**
 * Binds each listener's address for a moment and lets it go. The listeners
 * themselves bind once start-up is done (a port taken in between fails
 * there, with the same message).
 */
async function checkListenAddresses(config: Config, log: Logger): Promise<void> {
  const wanted = [['s3', config.address], ...(config.consoleEnable ? [['console', config.consoleAddress] as const] : [])] as const;
  for (const [listener, addr] of wanted) {
    if (addr.port === 0) continue;
    // (a peer that connects in that moment is refused at once rather than left waiting)
    const probe = createNetServer((socket) => socket.destroy());
    try {
      await new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen({ host: addr.host === '' ? undefined : addr.host, port: addr.port }, resolve);
      });
    } catch (err) {
      throw bindFailed(log, listener, addr, err);
    } finally {
      await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()));
    }
  }
}
