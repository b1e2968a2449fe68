/**
 * This machine's host names and addresses, for deciding which URL endpoints
 * are local (`topology/endpoint.ts` `isLocalEndpoint`).
 */
import { hostname, networkInterfaces } from 'node:os';
import { normaliseHost } from '../topology/endpoint.ts';

export function localHostSet(extra: readonly string[] = []): Set<string> {
  const out = new Set<string>(['localhost', '127.0.0.1', '::1']);
  out.add(normaliseHost(hostname()));
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) out.add(normaliseHost(a.address));
  }
  for (const h of extra) if (h) out.add(normaliseHost(h));
  return out;
}
