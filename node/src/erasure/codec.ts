/**
 * Reed-Solomon codec contract (systematic, GF(2^8), Cauchy matrix as built by
 * ISA-L's gf_gen_cauchy1_matrix). Implementations: the native addon
 * (GFNI → AVX2 → scalar dispatch) and the pure-TypeScript oracle/fallback.
 *
 * All calls are synchronous and operate in place on equal-length shards:
 * encode+bitrot of a 1 MiB block costs ~0.25 ms native, cheaper than any
 * thread hop (see PERFORMANCE.md).
 */
export interface ErasureCodec {
  readonly dataShards: number;
  readonly parityShards: number;
  /** Name of the kernel in use, e.g. `native-gfni`, `native-avx2`, `native-scalar`, `ts`. */
  readonly kernel: string;
  /**
   * Fills `shards[K..K+M-1]` from `shards[0..K-1]`. Every shard has the same
   * length; `shards.length === K + M`.
   */
  encode(shards: Uint8Array[]): void;
  /**
   * Rebuilds the shards marked missing (`present[i] === false`) in place from
   * any K present ones. Throws ErasureReadQuorum-class errors when fewer than K
   * are present. `dataOnly` skips rebuilding parity.
   */
  reconstruct(shards: Uint8Array[], present: boolean[], dataOnly?: boolean): void;
}
