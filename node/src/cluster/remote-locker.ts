/**
 * A locker on another node, reached through `/svc/peer/v1/<lock-op>` on the
 * peer's small control pool (lock traffic never queues behind shard data).
 */
import type { LockArgs, Locker } from './lock-server.ts';
import type { PeerClient } from './rpc-client.ts';
import { peerPath } from './rpc-wire.ts';

/** Time a single lock RPC may take before it counts as a refusal. */
export const LOCK_RPC_TIMEOUT_MS = 5_000;

export class RemoteLocker implements Locker {
  readonly id: string;
  readonly #peer: PeerClient;

  constructor(peer: PeerClient) {
    this.#peer = peer;
    this.id = peer.origin;
  }

  isOnline(): boolean {
    return this.#peer.isOnline();
  }

  lock(args: LockArgs): Promise<boolean> {
    return this.#call('lock', args);
  }

  rlock(args: LockArgs): Promise<boolean> {
    return this.#call('rlock', args);
  }

  unlock(args: LockArgs): Promise<boolean> {
    return this.#call('unlock', args);
  }

  runlock(args: LockArgs): Promise<boolean> {
    return this.#call('runlock', args);
  }

  refresh(args: LockArgs): Promise<boolean> {
    return this.#call('refresh', args);
  }

  forceUnlock(args: LockArgs): Promise<boolean> {
    return this.#call('forceUnlock', args);
  }

  async #call(op: string, args: LockArgs): Promise<boolean> {
    const res = await this.#peer.rpcCall(peerPath(op), args, { control: true, timeoutMs: LOCK_RPC_TIMEOUT_MS });
    return res === true;
  }
}
