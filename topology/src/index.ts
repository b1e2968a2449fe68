/**
 * svc's topology rules, one package for the storage server and the operator
 * (so a spec the operator accepts is one every node accepts at start-up):
 * volume-argument ellipses, endpoints, pool layout and set width, and
 * storage-class parity with its quorums. Pure: no I/O; errors are
 * `TopologyError`s.
 */
export { type ArgPattern, type EllipsisRange, expandEllipsis, expandPattern, hasEllipsis, MAX_RANGE_SIZE, parseArgPattern, patternSize } from './ellipsis.ts';
export { type Endpoint, endpointHostPort, endpointKey, isLocalEndpoint, normaliseHost, parseEndpoint, type PathEndpoint, type UrlEndpoint } from './endpoint.ts';
export { TOPOLOGY_ERRORS, TopologyError, type TopologyErrorCode } from './errors.ts';
export { buildPoolLayouts, isSingleDrive, type LayoutOptions, type PoolLayout } from './pool-layout.ts';
export { chooseSetWidth, MAX_SET_DRIVES, MIN_SET_DRIVES, validSetWidths } from './set-width.ts';
export {
  AUTO_PARITY,
  defaultRrsParity,
  defaultStandardParity,
  parseParity,
  type ParitySetting,
  quorums,
  readinessParity,
  type ResolvedParity,
  resolveStorageClass,
  type StorageClassSettings,
} from './storage-class.ts';
