/**
 * Test helper: a mount namespace that outlives the processes run in it. A
 * holder process (`unshare --mount`, then `sleep`) keeps the namespace;
 * programs enter it with `nsenter` (`wrap`), so mounts made there (a small
 * tmpfs standing for a fuller disk, a read-only remount standing for a
 * failing drive) persist across restarts of the program and never touch the
 * host's mount table. Needs root (mount), as the cluster harness does.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';

export class MountNamespace {
  readonly #holder: ChildProcess;

  private constructor(holder: ChildProcess) {
    this.#holder = holder;
  }

  static async create(): Promise<MountNamespace> {
    const holder = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'echo up && exec sleep 100000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await once(holder.stdout!, 'data');
    return new MountNamespace(holder);
  }

  /** Command prefix that runs a program inside the namespace. */
  get wrap(): string[] {
    return ['nsenter', `--mount=/proc/${this.#holder.pid}/ns/mnt`, '--'];
  }

  /** Runs a command inside the namespace; throws with its stderr when it fails. */
  run(cmd: string, ...args: string[]): string {
    const [bin, ...pre] = this.wrap;
    const r = spawnSync(bin!, [...pre, cmd, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error?.message}`);
    return r.stdout;
  }

  /** Mounts a tmpfs of `bytes` on `dir` (an existing directory). */
  tmpfs(dir: string, bytes: number): void {
    this.run('mount', '-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir);
  }

  /** Makes `dir` read-only (a bind mount on itself, remounted read-only) or writable again. */
  readOnly(dir: string, ro: boolean): void {
    if (ro) {
      this.run('mount', '--bind', dir, dir);
      this.run('mount', '-o', 'remount,bind,ro', dir);
    } else this.run('umount', dir);
  }

  async close(): Promise<void> {
    if (this.#holder.exitCode !== null) return;
    this.#holder.kill('SIGKILL');
    await once(this.#holder, 'exit');
  }
}
