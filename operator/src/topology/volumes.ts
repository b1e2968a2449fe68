/**
 * Volume expressions and the launch configuration every pod shares. Pure.
 *
 * A pool `p` of cluster `c` with N servers and M volumes per server renders as
 *   http://c-p-{0...N-1}.c-hl.<ns>.svc.<domain>:9000/data/d{0...M-1}
 * (`https://` when `spec.tls` is set: internode traffic is then TLS)
 * with the host written literally (`c-p-0`) for a one-server pool and the
 * drive written literally (`/data/d0`) for one volume per server, so every
 * range the server sees has at least two values. The server's own parser and
 * layout code (the shared `svc-topology` package) turns it back into endpoints.
 */
import { createHash } from 'node:crypto';
import { buildPoolLayouts, type PoolLayout, parseParity, quorums, TopologyError } from 'svc-topology';
import type { LaunchConfigT, PoolSpec, SvcCluster } from '../crd/svccluster.ts';
import { DATA_ROOT, headlessDomain, S3_PORT, statefulSetName } from './names.ts';

export function poolExpression(c: SvcCluster, pool: Pick<PoolSpec, 'name' | 'servers' | 'volumesPerServer'>, domain: string): string {
  const hostOrdinal = pool.servers === 1 ? '0' : `{0...${pool.servers - 1}}`;
  const host = `${statefulSetName(c.metadata.name, pool.name)}-${hostOrdinal}.${headlessDomain(c, domain)}`;
  const drive = pool.volumesPerServer === 1 ? '0' : `{0...${pool.volumesPerServer - 1}}`;
  return `${c.spec.tls ? 'https' : 'http'}://${host}:${S3_PORT}${DATA_ROOT}/d${drive}`;
}

/**
 * The same pool, whatever the scheme: a pool keeps its identity when TLS is
 * switched on or off (the applied expressions still say the old scheme
 * until the coordinated restart that changes it).
 */
export function sameExpression(a: string | undefined, b: string | undefined): boolean {
  const strip = (e: string | undefined) => e?.replace(/^https?:\/\//, '');
  return a !== undefined && b !== undefined && strip(a) === strip(b);
}

/** SVC_VOLUMES for the given pools, in order: one expression per pool, space separated. */
export function renderVolumes(c: SvcCluster, pools: readonly PoolSpec[], domain: string): string {
  return pools.map((p) => poolExpression(c, p, domain)).join(' ');
}

export function shortHash(value: unknown): string {
  return createHash('sha256').update(typeof value === 'string' ? value : JSON.stringify(value)).digest('hex').slice(0, 16);
}

/**
 * Everything that must be identical on every node (SPEC "Volume arguments"),
 * plus the image under the default `imageChange: Coordinated`; `hash` covers
 * exactly those fields.
 */
export function launchConfig(c: SvcCluster, pools: readonly PoolSpec[], domain: string): LaunchConfigT {
  const base = {
    volumes: renderVolumes(c, pools, domain),
    image: c.spec.image,
    setDriveCount: c.spec.erasure?.setDriveCount,
    standardParity: c.spec.erasure?.standardParity,
    reducedParity: c.spec.erasure?.reducedParity,
  };
  const coordinatedImage = (c.spec.restartPolicy?.imageChange ?? 'Coordinated') === 'Coordinated';
  const hash = shortHash({
    volumes: base.volumes,
    setDriveCount: base.setDriveCount ?? null,
    standard: base.standardParity ?? null,
    rrs: base.reducedParity ?? null,
    image: coordinatedImage ? base.image : null,
  });
  const out: LaunchConfigT = { hash, volumes: base.volumes, image: base.image };
  if (base.setDriveCount !== undefined) out.setDriveCount = base.setDriveCount;
  if (base.standardParity !== undefined) out.standardParity = base.standardParity;
  if (base.reducedParity !== undefined) out.reducedParity = base.reducedParity;
  return out;
}

/** The expressions of a launch configuration, one per pool. */
export function volumeList(volumes: string | undefined): string[] {
  return (volumes ?? '').split(' ').filter(Boolean);
}

export const ecValue = (parity: number | undefined): string | undefined => (parity === undefined ? undefined : `EC:${parity}`);

export interface TopologyIssue {
  readonly reason: 'SetLayoutUnsupported' | 'ParityExceedsNarrowestPool' | 'SpecInvalid';
  readonly message: string;
}

/**
 * Runs the server's start-up topology checks on a launch configuration:
 * ellipsis, ≥ 2 distinct drives per pool, set width derivable (and the
 * pinned width valid for every pool), storage-class parity rules against the
 * narrowest pool. Returns the layouts, or the issue every node would refuse
 * to start with.
 */
export function checkLaunchConfig(lc: LaunchConfigT): { layouts: PoolLayout[] } | { issue: TopologyIssue } {
  try {
    const layouts = buildPoolLayouts(volumeList(lc.volumes), {
      setDriveCount: lc.setDriveCount,
      storageClass: {
        standard: parseParity('SVC_STORAGE_CLASS_STANDARD', ecValue(lc.standardParity)),
        rrs: parseParity('SVC_STORAGE_CLASS_RRS', ecValue(lc.reducedParity)),
      },
      cwd: '/',
    });
    return { layouts };
  } catch (err) {
    if (err instanceof TopologyError) {
      const reason = err.code === 'InvalidStorageClassConfig' ? 'ParityExceedsNarrowestPool' : err.code === 'InvalidTopology' ? 'SetLayoutUnsupported' : 'SpecInvalid';
      return { issue: { reason, message: err.message } };
    }
    throw err;
  }
}

const layoutCache = new Map<string, { layouts: PoolLayout[] } | { issue: TopologyIssue }>();

/** `checkLaunchConfig`, remembered per launch hash (render asks once per pool and reconcile). */
export function launchLayouts(lc: LaunchConfigT): PoolLayout[] | undefined {
  let r = layoutCache.get(lc.hash);
  if (!r) {
    if (layoutCache.size > 64) layoutCache.clear();
    layoutCache.set(lc.hash, (r = checkLaunchConfig(lc)));
  }
  return 'layouts' in r ? r.layouts : undefined;
}

/**
 * How many of a pool's servers may be down at once while every erasure set
 * of the pool keeps its write quorum (so the pool keeps taking writes and
 * serving reads), with the pool's actual set layout and parity: for every
 * set, the worst case loses the drives of its `k` most-loaded servers.
 * 0 when losing any one server already breaks a set's write quorum (e.g. two
 * servers of two drives at EC:2). Undefined when the configuration is invalid.
 */
export function poolDisruptionBudget(lc: LaunchConfigT, expression: string): number | undefined {
  const layout = launchLayouts(lc)?.find((l) => l.cmdline === expression);
  if (!layout) return undefined;
  const hostOf = (ep: PoolLayout['endpoints'][number]) => (ep.kind === 'url' ? `${ep.host}:${ep.port}` : '');
  const servers = new Set(layout.endpoints.map(hostOf)).size;
  const { write } = quorums(layout.setDriveCount, layout.parity.standard);
  const tolerated = layout.setDriveCount - write;
  const perSet = layout.sets.map((set) => {
    const counts = new Map<string, number>();
    for (const ep of set) counts.set(hostOf(ep), (counts.get(hostOf(ep)) ?? 0) + 1);
    return [...counts.values()].sort((a, b) => b - a);
  });
  let k = 0;
  while (k < servers && perSet.every((c) => c.slice(0, k + 1).reduce((a, b) => a + b, 0) <= tolerated)) k++;
  return k;
}
