/**
 * Volume arguments → pool layouts. One argument = one pool (SPEC "Volume
 * arguments"); endpoints in expansion order; consecutive chunks of the set
 * width form the sets (reference §4.1). Pure.
 */
import { TopologyError } from './errors.ts';
import { expandPattern, hasEllipsis, parseArgPattern } from './ellipsis.ts';
import { type Endpoint, endpointKey, parseEndpoint } from './endpoint.ts';
import { chooseSetWidth } from './set-width.ts';
import { type ResolvedParity, resolveStorageClass, type StorageClassSettings } from './storage-class.ts';

export interface PoolLayout {
  /** Zero-based position in the pool list. */
  readonly index: number;
  /** The argument exactly as typed; the pool's identity for admin calls. */
  readonly cmdline: string;
  /** false for a plain path (the single-drive layout). */
  readonly ellipsis: boolean;
  /** Every drive endpoint, in expansion order. */
  readonly endpoints: readonly Endpoint[];
  readonly setCount: number;
  readonly setDriveCount: number;
  /** `sets[s][d]`: endpoint of drive slot d of set s. */
  readonly sets: readonly (readonly Endpoint[])[];
  /** Parity for this pool after the storage-class rules. */
  readonly parity: ResolvedParity;
}

export interface LayoutOptions {
  /** SVC_ERASURE_SET_DRIVE_COUNT, when set. */
  readonly setDriveCount?: number | undefined;
  readonly storageClass: StorageClassSettings;
  /** Base directory for relative local paths. */
  readonly cwd: string;
}

function topo(message: string, details?: Record<string, unknown>): TopologyError {
  return new TopologyError('InvalidTopology', message, details);
}

interface PlannedPool {
  cmdline: string;
  ellipsis: boolean;
  endpoints: Endpoint[];
  rangeSizes: number[];
}

function planPool(arg: string, multiPool: boolean, cwd: string): PlannedPool {
  const cmdline = arg;
  if (arg.trim() === '') throw topo('empty volume argument');
  const ellipsis = hasEllipsis(arg);
  if (multiPool && !ellipsis) {
    throw topo(
      `volume argument "${arg}" has no ellipsis: with more than one argument every argument describes a pool and must carry a range, e.g. /mnt/d{1...4} or http://host{1...4}:9000/mnt/d{1...4} (a single-drive pool cannot join a multi-pool deployment)`,
      { pool: arg },
    );
  }
  const pattern = parseArgPattern(arg);
  const raws = expandPattern(pattern);
  const endpoints = raws.map((r) => parseEndpoint(r, cwd));
  const seen = new Set<string>();
  for (const ep of endpoints) {
    const k = endpointKey(ep);
    if (seen.has(k)) throw topo(`volume argument "${arg}" names drive ${ep.raw} more than once`, { pool: arg, endpoint: ep.raw });
    seen.add(k);
  }
  if (ellipsis && endpoints.length < 2) {
    throw topo(`volume argument "${arg}" expands to ${endpoints.length} drive; a pool needs at least two distinct drive endpoints (a singleton range does not count)`, {
      pool: arg,
    });
  }
  if (!ellipsis && endpoints[0]?.kind !== 'path') {
    throw topo(`volume argument "${arg}": a single-drive layout must be a local path; use a range for URL endpoints, e.g. http://host:9000/mnt/d{1...4}`, {
      pool: arg,
    });
  }
  return { cmdline, ellipsis, endpoints, rangeSizes: pattern.ranges.map((r) => r.values.length) };
}

/**
 * Builds every pool's layout from the volume arguments and validates the
 * deployment as a whole. Throws `InvalidTopology` (arguments, set width) or
 * `InvalidStorageClassConfig` (storage-class rules).
 */
export function buildPoolLayouts(args: readonly string[], opts: LayoutOptions): PoolLayout[] {
  if (args.length === 0) throw topo('no volume arguments: pass them to `svc server` or set SVC_VOLUMES');
  const multi = args.length > 1;
  const planned = args.map((a) => planPool(a, multi, opts.cwd));

  const kinds = new Set(planned.flatMap((p) => p.endpoints.map((e) => e.kind)));
  if (kinds.size > 1) throw topo('volume arguments mix local paths and URL endpoints; use one form for every pool');
  // Internode traffic is TLS exactly when the endpoints say https: all of them or none.
  const schemes = new Map<string, string>();
  for (const ep of planned.flatMap((p) => p.endpoints)) if (ep.kind === 'url' && !schemes.has(ep.scheme)) schemes.set(ep.scheme, ep.raw);
  if (schemes.size > 1) {
    throw topo(
      `volume arguments mix http:// (${schemes.get('http')}) and https:// (${schemes.get('https')}) endpoints; internode traffic is TLS for every node or for none: use https:// everywhere (with certificates on every node) or http:// everywhere`,
    );
  }

  const owner = new Map<string, string>();
  for (const p of planned) {
    for (const ep of p.endpoints) {
      const k = endpointKey(ep);
      const prev = owner.get(k);
      if (prev !== undefined) throw topo(`drive ${ep.raw} appears in pool "${prev}" and pool "${p.cmdline}"`, { endpoint: ep.raw });
      owner.set(k, p.cmdline);
    }
  }

  // Exclusive ownership: no drive may live inside another drive's folder.
  const byHost = new Map<string, { path: string; raw: string }[]>();
  for (const p of planned) {
    for (const ep of p.endpoints) {
      const host = ep.kind === 'url' ? `${ep.host}:${ep.port}` : '';
      const list = byHost.get(host) ?? [];
      list.push({ path: ep.path, raw: ep.raw });
      byHost.set(host, list);
    }
  }
  for (const list of byHost.values()) {
    const sorted = [...list].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1]!;
      for (let j = i; j < sorted.length && sorted[j]!.path.startsWith(prev.path); j++) {
        if (sorted[j]!.path.startsWith(`${prev.path}/`)) {
          throw topo(`drive ${sorted[j]!.raw} lies inside drive ${prev.raw}; every drive path must be owned exclusively by one drive`, {
            endpoint: sorted[j]!.raw,
          });
        }
      }
    }
  }

  const widths = planned.map((p) => {
    if (p.endpoints.length === 1) {
      if (opts.setDriveCount !== undefined && opts.setDriveCount !== 1) {
        throw topo(`SVC_ERASURE_SET_DRIVE_COUNT=${opts.setDriveCount} does not apply to the single-drive pool "${p.cmdline}"`);
      }
      return 1;
    }
    return chooseSetWidth(p.cmdline, p.endpoints.length, p.rangeSizes, opts.setDriveCount);
  });

  const parities = resolveStorageClass(opts.storageClass, widths);

  return planned.map((p, index) => {
    const setDriveCount = widths[index]!;
    const setCount = p.endpoints.length / setDriveCount;
    const sets: Endpoint[][] = [];
    for (let s = 0; s < setCount; s++) sets.push(p.endpoints.slice(s * setDriveCount, (s + 1) * setDriveCount));
    return Object.freeze({
      index,
      cmdline: p.cmdline,
      ellipsis: p.ellipsis,
      endpoints: Object.freeze(p.endpoints),
      setCount,
      setDriveCount,
      sets: Object.freeze(sets.map((s) => Object.freeze(s))),
      parity: Object.freeze(parities[index]!),
    });
  });
}

/** True for the single-drive layout (one local path, no ellipsis). */
export function isSingleDrive(pool: PoolLayout): boolean {
  return pool.endpoints.length === 1;
}
