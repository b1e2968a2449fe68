/**
 * The storage server's own topology rules, imported (never copied): ellipsis
 * expansion, pool layout, set width and storage-class (parity) rules. The
 * operator validates a spec with exactly the code every node runs at start-up,
 * so a change the operator accepts is one the nodes accept.
 *
 * This is the only file that reaches into `node/src/`; `Dockerfile.operator`
 * copies `node/src/topology/` and `node/src/util/errors.ts` for it, and
 * `server-topology.test.ts` fails if those files start importing anything else.
 */
export { expandEllipsis, hasEllipsis } from '../../../node/src/topology/ellipsis.ts';
export { buildPoolLayouts, type PoolLayout } from '../../../node/src/topology/pool-layout.ts';
export { parseParity, quorums, type StorageClassSettings } from '../../../node/src/topology/storage-class.ts';
export { SvcError } from '../../../node/src/util/errors.ts';
