/**
 * Format quorum across the drives of every node.
 *
 * Each node reads the `format.json` of every drive of every pool: its own
 * from disk, the others over RPC. Rules on top of `storage/format.ts`'s
 * per-pool decision:
 * - a fresh pool (every drive reachable and unformatted) is formatted only by
 *   the deployment leader (the node of the first endpoint of the first pool),
 *   and only when every peer answers with the same volume arguments (the
 *   `configDigest`): two nodes never format concurrently and a node never
 *   formats while its peers disagree. Every other node waits and re-reads;
 * - unreachable peers (refused, unresolvable names) make the pool `wait`,
 *   never fail.
 */
import { createHash } from 'node:crypto';
import { type Drive, SYS_VOL } from '../storage/drive.ts';
import type { DriveFormatState, FormatFile, FormatIO, PoolFormatResult } from '../storage/format.ts';
import { decideFormat, ensurePoolFormat, formatInProgress, FORMAT_FILE, validateFormat } from '../storage/format.ts';
import type { Endpoint } from '../topology/endpoint.ts';
import type { PoolLayout } from '../topology/pool-layout.ts';
import { SvcError } from '../util/errors.ts';
import type { ClusterPeers } from './peers.ts';
import type { RpcService } from './rpc-server.ts';
import { peerPath } from './rpc-wire.ts';

/** What a node says about itself on `/svc/peer/v1/serverInfo`. */
export interface ServerInfo {
  nodeId: string;
  /** Digest of the layout-defining settings: identical on every node of a cluster. */
  configDigest: string;
}

/**
 * Digest of everything that must be identical on every node (spec, Volume
 * arguments: launch command, endpoint order, pool order, set width and
 * storage-class variables).
 */
export function configDigest(pools: readonly PoolLayout[], storageClass: { standard?: string | undefined; rrs?: string | undefined }): string {
  const doc = {
    pools: pools.map((p) => ({ cmdline: p.cmdline, endpoints: p.endpoints.map((e) => e.raw), setDriveCount: p.setDriveCount })),
    standard: storageClass.standard ?? '',
    rrs: storageClass.rrs ?? '',
  };
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex');
}

export function serverInfoService(info: ServerInfo): RpcService {
  return { serverInfo: { kind: 'unary', handle: async () => info } };
}

/**
 * `FormatIO` over one pool through the `Drive` interface: local drives
 * (already opened by start-up, which reported a missing root as
 * `VolumeNotFound`) and remote drives alike. `driveOf` returns undefined for
 * a local drive that could not be opened (it counts as offline).
 */
export function clusterFormatIO(pool: PoolLayout, driveOf: (ep: Endpoint) => Drive | undefined): FormatIO {
  return {
    readFormat: async (i) => {
      const ep = pool.endpoints[i]!;
      const drive = driveOf(ep);
      if (drive === undefined) return { state: 'offline', reason: `${ep.raw}: drive not available` };
      let bytes: Uint8Array;
      try {
        bytes = await drive.readAll(SYS_VOL, FORMAT_FILE);
      } catch (err) {
        if (err instanceof SvcError && (err.code === 'FileNotFound' || err.code === 'VolumeNotFound')) return { state: 'unformatted' };
        return { state: 'offline', reason: `${ep.raw}: ${err instanceof Error ? err.message : String(err)}` };
      }
      try {
        return { state: 'formatted', format: validateFormat(JSON.parse(Buffer.from(bytes).toString('utf8')), `${ep.raw} format.json`) };
      } catch (err) {
        return { state: 'corrupt', reason: err instanceof Error ? err.message : String(err) };
      }
    },
    writeFormat: async (i, f: FormatFile) => {
      const ep = pool.endpoints[i]!;
      const drive = driveOf(ep);
      if (drive === undefined) throw new SvcError('DiskNotFound', `${ep.raw}: drive not available`);
      validateFormat(f, 'format to write');
      // writeAll publishes atomically (tmp, fsync, rename, dir fsync).
      await drive.writeAll(SYS_VOL, FORMAT_FILE, Buffer.from(`${JSON.stringify(f, null, 2)}\n`));
    },
  };
}

/** Asks every peer for its `ServerInfo`; returns why a fresh format must wait, or undefined when all agree. */
export async function peersDisagree(peers: ClusterPeers, digest: string): Promise<string | undefined> {
  const answers = await Promise.all(
    [...peers.peers.entries()].map(async ([hp, p]) => {
      try {
        const info = (await p.rpcCall(peerPath('serverInfo'), undefined, { control: true, timeoutMs: 5_000 })) as ServerInfo;
        return info.configDigest === digest ? undefined : `${hp} runs with different volume arguments or storage-class settings`;
      } catch (err) {
        return `${hp} unreachable (${err instanceof Error ? err.message : String(err)})`;
      }
    }),
  );
  const problems = answers.filter((a): a is string => a !== undefined);
  return problems.length > 0 ? problems.join('; ') : undefined;
}

export interface ClusterFormatOptions {
  pools: readonly PoolLayout[];
  peers: ClusterPeers;
  /** The drive (local or remote) of an endpoint; undefined when unavailable. */
  driveOf: (ep: Endpoint) => Drive | undefined;
  /** True on the node that may format a fresh pool. */
  leader: boolean;
  digest: string;
}

/**
 * One round of the cluster format quorum over every pool. Returns each
 * pool's result (`use` or `wait`); throws SvcError on permanent failures
 * (PoolTopologyMismatch, UnsupportedSnsdExpansion, CorruptedFormat).
 */
export async function clusterFormatRound(opts: ClusterFormatOptions): Promise<PoolFormatResult[]> {
  const results: PoolFormatResult[] = [];
  let deploymentId: string | undefined;
  for (const pool of opts.pools) {
    const io = clusterFormatIO(pool, opts.driveOf);
    const geo = { cmdline: pool.cmdline, setCount: pool.setCount, setDriveCount: pool.setDriveCount };
    const states: DriveFormatState[] = await Promise.all(pool.endpoints.map((_, i) => io.readFormat(i)));
    const decision = decideFormat(geo, states);
    if (decision.action === 'fail' && !opts.leader && formatInProgress(states)) {
      // Read while the first node writes the format drive by drive: not corrupt, just not done.
      const formatted = states.filter((s) => s.state === 'formatted').length;
      results.push({ action: 'wait', reason: `pool "${pool.cmdline}": ${formatted} of ${states.length} drives formatted; waiting for the first node to finish formatting` });
      continue;
    }
    if (decision.action === 'fail') throw new SvcError(decision.code, decision.message, { pool: pool.cmdline });
    if (decision.action === 'wait') {
      results.push(decision);
      continue;
    }
    if (decision.action === 'use') {
      deploymentId ??= decision.reference.id;
      results.push({ action: 'use', formatted: false, reference: decision.reference, slots: decision.slots });
      continue;
    }
    // Fresh pool.
    if (!opts.leader) {
      results.push({ action: 'wait', reason: `pool "${pool.cmdline}" is unformatted; waiting for the first node to format it` });
      continue;
    }
    const disagreement = await peersDisagree(opts.peers, opts.digest);
    if (disagreement !== undefined) {
      results.push({ action: 'wait', reason: `pool "${pool.cmdline}" is unformatted and peers do not agree yet: ${disagreement}` });
      continue;
    }
    const res = await ensurePoolFormat(geo, io, { deploymentId });
    if (res.action === 'use') deploymentId ??= res.reference.id;
    results.push(res);
  }
  return results;
}
