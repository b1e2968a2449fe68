/**
 * A set of IP networks (`SVC_TRUSTED_PROXIES`): CIDRs or single addresses,
 * IPv4 and IPv6, over `node:net`'s `BlockList`. IPv4-mapped IPv6 addresses
 * (`::ffff:10.0.0.1`, what a dual-stack listener reports for IPv4 peers)
 * match as the IPv4 address they carry. Pure.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { SvcError } from './errors.ts';

/** Normalises an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) to IPv4. */
export function plainIp(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
}

/**
 * The family and prefix length of `net` with `bits` (the text after the
 * `/`; absent: the single address), or undefined when `net` is no address
 * or `bits` is no prefix length for its family. Shared by `IpSet.parse` and
 * the IAM `IpAddress` conditions.
 */
export function cidrParts(net: string, bits: string | undefined): { family: 'ipv4' | 'ipv6'; prefix: number } | undefined {
  const family = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
  if (family === undefined) return undefined;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  return prefix < 0 || prefix > max ? undefined : { family, prefix };
}

/** Shorthand accepted in the list: every loopback address. */
const LOOPBACK = ['127.0.0.0/8', '::1/128'];

export class IpSet {
  /** The networks as given (normalised `net/prefix`), for logs and docs. */
  readonly networks: readonly string[];
  readonly #list = new BlockList();

  private constructor(networks: readonly string[]) {
    this.networks = networks;
    for (const n of networks) {
      const [net, bits] = n.split('/') as [string, string];
      this.#list.addSubnet(net, Number(bits), isIPv4(net) ? 'ipv4' : 'ipv6');
    }
  }

  static readonly EMPTY = new IpSet([]);

  /**
   * Parses a comma- or space-separated list of CIDRs and addresses
   * (`10.0.0.0/8, 192.168.1.7, fd00::/8`, or `loopback`); `variable` names
   * the setting in errors. An empty list is the empty set.
   */
  static parse(raw: string | undefined, variable = 'SVC_TRUSTED_PROXIES'): IpSet {
    const items = (raw ?? '').split(/[\s,]+/).filter((s) => s !== '');
    const out: string[] = [];
    for (const item of items) {
      if (item.toLowerCase() === 'loopback') {
        out.push(...LOOPBACK);
        continue;
      }
      const [net = '', bits, extra] = item.split('/');
      const addr = plainIp(net);
      const cidr = cidrParts(addr, bits);
      if (cidr === undefined || extra !== undefined) {
        throw new SvcError('InvalidConfig', `${variable}: "${item}" is not an IP address or CIDR (e.g. 10.0.0.0/8, 192.168.1.7, fd00::/8, loopback)`, { variable });
      }
      out.push(`${addr.toLowerCase()}/${cidr.prefix}`);
    }
    return new IpSet([...new Set(out)]);
  }

  get empty(): boolean {
    return this.networks.length === 0;
  }

  has(ip: string): boolean {
    if (this.networks.length === 0) return false;
    const a = plainIp(ip.trim());
    if (isIPv4(a)) return this.#list.check(a, 'ipv4');
    if (isIPv6(a)) return this.#list.check(a, 'ipv6');
    return false;
  }
}
