/**
 * Test helper: a private network for a test cluster, made of network
 * namespaces the test creates and removes (nothing else on the machine is
 * touched but one veth end in the test's own namespace):
 *
 *   test process ── veth ──┐
 *                          br0 (namespace `svchub…`)
 *   node K (namespace `svcnK…`) eth0 ── veth ──┘
 *
 * Addresses 10.A.B.K/24 (A, B random per run), the test side .254. Faults
 * on one node's link: `partition` (link down: nothing in or out), `slow`
 * (netem delay and loss where the kernel has it; otherwise a token bucket
 * that throttles the link plus random drops through iptables, since some
 * kernels ship without sch_netem). Needs root, iproute2 and iptables.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';

function run(cmd: string, ...args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error?.message}`);
  return r.stdout;
}

function tryRun(cmd: string, ...args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

const live = new Set<NetNamespaces>();
process.once('exit', () => {
  for (const n of [...live]) n.closeSync();
});

/** True when this process may create network namespaces, veths and a bridge. */
export function canUseNetNamespaces(): boolean {
  const probe = `svcprobe${randomBytes(3).toString('hex')}`;
  if (!tryRun('ip', 'netns', 'add', probe)) return false;
  const ok = tryRun('ip', 'netns', 'exec', probe, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
  tryRun('ip', 'netns', 'del', probe);
  return ok;
}

export type LinkFault = 'partition' | 'slow';

export class NetNamespaces {
  readonly #id = randomBytes(3).toString('hex');
  readonly #prefix: string;
  readonly #nodes: number;
  #netem: boolean | undefined;

  private constructor(nodes: number) {
    this.#nodes = nodes;
    this.#prefix = `10.${randomInt(100, 250)}.${randomInt(1, 250)}`;
  }

  /** Creates the hub, one namespace per node and the test's own link. */
  static create(nodes: number): NetNamespaces {
    const n = new NetNamespaces(nodes);
    live.add(n);
    const hub = n.#hub;
    run('ip', 'netns', 'add', hub);
    run('ip', 'netns', 'exec', hub, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
    run('ip', 'netns', 'exec', hub, 'ip', 'link', 'set', 'br0', 'up');
    // The test's side: a veth whose other end is a bridge port.
    run('ip', 'link', 'add', n.#hostIf, 'type', 'veth', 'peer', 'name', `${n.#hostIf}p`);
    run('ip', 'link', 'set', `${n.#hostIf}p`, 'netns', hub);
    run('ip', 'netns', 'exec', hub, 'ip', 'link', 'set', `${n.#hostIf}p`, 'master', 'br0', 'up');
    run('ip', 'addr', 'add', `${n.#prefix}.254/24`, 'dev', n.#hostIf);
    run('ip', 'link', 'set', n.#hostIf, 'up');
    for (let k = 1; k <= nodes; k++) {
      const ns = n.ns(k);
      const port = `sv${n.#id}p${k}`;
      run('ip', 'netns', 'add', ns);
      run('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
      run('ip', 'netns', 'exec', ns, 'ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', port);
      run('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', port, 'netns', hub);
      run('ip', 'netns', 'exec', hub, 'ip', 'link', 'set', port, 'master', 'br0', 'up');
      run('ip', 'netns', 'exec', ns, 'ip', 'addr', 'add', `${n.ip(k)}/24`, 'dev', 'eth0');
      run('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'up');
    }
    return n;
  }

  get #hub(): string {
    return `svchub${this.#id}`;
  }

  get #hostIf(): string {
    return `sv${this.#id}h`;
  }

  /** Node K's namespace. */
  ns(k: number): string {
    return `svcn${k}${this.#id}`;
  }

  /** Node K's address. */
  ip(k: number): string {
    return `${this.#prefix}.${k}`;
  }

  /** The nodes' addresses as an ellipsis (`10.A.B.{1...N}`). */
  ellipsis(first: number, last: number): string {
    return `${this.#prefix}.{${first}...${last}}`;
  }

  /** Command prefix that runs a program in node K's namespace. */
  wrap(k: number): string[] {
    return ['ip', 'netns', 'exec', this.ns(k)];
  }

  /** Whether the kernel has netem (else `slow` throttles and drops instead of delaying). */
  get netem(): boolean {
    if (this.#netem === undefined) {
      this.#netem = tryRun('ip', 'netns', 'exec', this.ns(1), 'tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '1ms');
      if (this.#netem) tryRun('ip', 'netns', 'exec', this.ns(1), 'tc', 'qdisc', 'del', 'dev', 'lo', 'root');
    }
    return this.#netem;
  }

  /** Starts a fault on node K's link; returns what was done, for reports. */
  fault(k: number, f: LinkFault): string {
    const ns = this.ns(k);
    if (f === 'partition') {
      run('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'down');
      return 'link down';
    }
    if (this.netem) {
      run('ip', 'netns', 'exec', ns, 'tc', 'qdisc', 'add', 'dev', 'eth0', 'root', 'netem', 'delay', '80ms', '20ms', 'loss', '1%');
      return 'netem delay 80ms ±20ms, loss 1%';
    }
    run('ip', 'netns', 'exec', ns, 'tc', 'qdisc', 'add', 'dev', 'eth0', 'root', 'tbf', 'rate', '40mbit', 'burst', '64kb', 'latency', '100ms');
    run('ip', 'netns', 'exec', ns, 'iptables', '-A', 'INPUT', '-m', 'statistic', '--mode', 'random', '--probability', '0.01', '-j', 'DROP');
    return 'tbf 40 Mbit/s, 1% loss (no netem in this kernel)';
  }

  /** Ends every fault on node K's link. */
  clear(k: number): void {
    const ns = this.ns(k);
    tryRun('ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'eth0', 'up');
    tryRun('ip', 'netns', 'exec', ns, 'tc', 'qdisc', 'del', 'dev', 'eth0', 'root');
    tryRun('ip', 'netns', 'exec', ns, 'iptables', '-F');
  }

  /** Removes every namespace and the test's link. */
  closeSync(): void {
    if (!live.delete(this)) return;
    tryRun('ip', 'link', 'del', this.#hostIf);
    for (let k = 1; k <= this.#nodes; k++) tryRun('ip', 'netns', 'del', this.ns(k));
    tryRun('ip', 'netns', 'del', this.#hub);
  }
}
