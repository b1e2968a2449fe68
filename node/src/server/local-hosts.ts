/**
 * This machine's host names and addresses, for deciding which URL endpoints
 * are local (`topology/endpoint.ts` `isLocalEndpoint`).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { hostname, networkInterfaces } from 'node:os';
import { normaliseHost } from 'svc-topology';

const WILDCARD = new Set(['', '0.0.0.0', '::']);

/**
 * Names that mean "this node" for a listener bound to `bindHost`. A specific
 * bind address is the node's identity (several nodes may share a machine on
 * different loopback addresses); a wildcard bind means every interface
 * address, the host name and `localhost`.
 */
export function localHostSet(bindHost: string): Set<string> {
  const bind = normaliseHost(bindHost);
  if (!WILDCARD.has(bind)) return new Set([bind]);
  const out = new Set<string>(['localhost', normaliseHost(hostname())]);
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) out.add(normaliseHost(a.address));
  }
  return out;
}

export type LookupAll = (host: string) => Promise<readonly string[]>;

const defaultLookup: LookupAll = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address);

/**
 * Adds to `local` every name in `hosts` that resolves to one of this
 * machine's addresses (e.g. a fully qualified pod name). Names that do not
 * resolve (yet) stay remote: an absent peer's DNS must not stop start-up.
 * Each lookup is bounded by `timeoutMs`.
 */
export async function addResolvedLocalHosts(
  hosts: readonly string[],
  local: Set<string>,
  opts: { lookup?: LookupAll; timeoutMs?: number } = {},
): Promise<{ resolvedLocal: string[]; unresolved: string[] }> {
  const lookup = opts.lookup ?? defaultLookup;
  const timeoutMs = opts.timeoutMs ?? 2000;
  const resolvedLocal: string[] = [];
  const unresolved: string[] = [];
  const todo = [...new Set(hosts.map(normaliseHost))].filter((h) => !local.has(h));
  await Promise.all(
    todo.map(async (h) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const addrs = await Promise.race([
          lookup(h),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
            timer.unref();
          }),
        ]);
        if (addrs.some((a) => local.has(normaliseHost(a)))) resolvedLocal.push(h);
      } catch {
        unresolved.push(h);
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  for (const h of resolvedLocal) local.add(h);
  return { resolvedLocal: resolvedLocal.sort(), unresolved: unresolved.sort() };
}
