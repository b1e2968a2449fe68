/**
 * What the object layer's write paths share for data governance: a bucket's
 * object-lock and default-encryption documents, the lock clock (server time
 * plus the cluster's skew allowance), the key store, and the guards that
 * keep a locked version from disappearing under a write.
 */
import type { Kms } from '../crypto/kms.ts';
import type { Clock } from '../util/clock.ts';
import { SvcError } from '../util/errors.ts';
import type { ErasureSet } from './erasure-set.ts';
import { assertRemovable, type BucketLockConfig, decodeLockConfig, type LockClock } from './object-lock.ts';
import { type BucketEncryption, decodeBucketEncryption } from './sse.ts';

export interface GovernanceOptions {
  clock: Clock;
  /** A bucket's configuration document (cached by the bucket module). */
  config: (bucket: string, kind: 'object-lock' | 'encryption') => Promise<Uint8Array | undefined>;
  kms?: Kms | undefined;
  /** How long past its date a retention still holds (clock-skew allowance of a cluster; 0 on one node). */
  lockGraceMs?: number | undefined;
}

export class Governance {
  readonly kms: Kms | undefined;
  readonly #o: GovernanceOptions;

  constructor(o: GovernanceOptions) {
    this.#o = o;
    this.kms = o.kms;
  }

  lockClock(): LockClock {
    return { now: this.#o.clock.now(), graceMs: this.#o.lockGraceMs ?? 0 };
  }

  async lockConfig(bucket: string): Promise<BucketLockConfig | undefined> {
    return decodeLockConfig(await this.#o.config(bucket, 'object-lock'));
  }

  async encryption(bucket: string): Promise<BucketEncryption | undefined> {
    return decodeBucketEncryption(await this.#o.config(bucket, 'encryption'));
  }

  /** A bucket default encryption document must name what the key store has (a configured store, a known key). */
  checkDefaultEncryption(raw: Uint8Array): void {
    let c: ReturnType<typeof decodeBucketEncryption>;
    try {
      c = decodeBucketEncryption(raw);
    } catch {
      c = undefined;
    }
    if (!c) throw new SvcError('InvalidArgument', 'not a default encryption document (AES256 or aws:kms)');
    if (!this.kms) throw new SvcError('XSvcKMSNotConfigured');
    if (c.kmsKeyId !== undefined) this.kms.key(c.kmsKeyId);
    else this.kms.defaultKey();
  }

  /** The bucket must have object lock (retention and legal hold operations). */
  async requireLock(bucket: string): Promise<BucketLockConfig> {
    const c = await this.lockConfig(bucket);
    if (!c) throw new SvcError('InvalidRequest', 'Bucket is missing Object Lock Configuration.');
    return c;
  }

  /**
   * A write that replaces the null version of `path` (an unversioned or
   * suspended bucket: PUT, complete, copy, a null delete marker) must not
   * replace a locked one. Called under the object's namespace lock. Only a
   * bucket with object lock can hold locked versions, so others skip the read.
   */
  async guardNullReplace(set: ErasureSet, bucket: string, path: string, versionId: string, lock: BucketLockConfig | undefined): Promise<void> {
    if (versionId !== 'null' || !lock) return;
    const { res } = await set.resolve(bucket, path, 'null');
    if (res.kind === 'quorum') throw new SvcError('ErasureReadQuorum');
    if (res.kind === 'found' && res.group.version.type === 'object') assertRemovable(res.group.version.sysMeta, this.lockClock());
  }
}
