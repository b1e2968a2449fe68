// The module graph's rules (dependency-cruiser), checked by `npm run lint`
// and so by `npm test`: no import cycle anywhere, and no import from a lower
// layer to a higher one (the layers of docs/architecture.md). The picture in
// docs/architecture.md is generated from the same graph
// (`npm run graph`, node/scripts/module-graph.ts).

/** node/src folders from the bottom up; a folder may import its own rank and below. */
const NODE_LAYERS = [
  ['util'],
  ['erasure', 'iam', 'replication', 'tls', 'telemetry'],
  ['crypto', 'storage'],
  ['cluster', 'object'],
  ['notify', 'replicator'],
  ['background'],
  ['api'],
  ['server'],
  ['cli'],
];

const folder = (names) => `^node/src/(${names.join('|')})/`;

const layerRules = NODE_LAYERS.slice(0, -1).map((names, i) => ({
  name: `layer-${names.join('-')}`,
  comment: `${names.join(', ')} must not import a higher layer (${NODE_LAYERS.slice(i + 1).flat().join(', ')})`,
  severity: 'error',
  from: { path: folder(names) },
  to: { path: folder(NODE_LAYERS.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle, type-only imports included: split the shared part into a leaf module.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'object-and-cluster-apart',
      comment: 'The object layer reaches other nodes only through the Drive and locker contracts; the cluster layer does not know objects.',
      severity: 'error',
      from: { path: '^node/src/(object|cluster)/' },
      to: { path: '^node/src/(object|cluster)/', pathNot: '^node/src/$1/' },
    },
    {
      name: 'pure-core-no-io',
      comment: 'The pure middle (util, erasure, iam, replication rules, the topology package) does no file, network or process I/O: it is given what it needs.',
      severity: 'error',
      from: { path: `${folder(['util', 'erasure', 'iam', 'replication'])}|^topology/src/` },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(fs|fs/promises|http|https|http2|tls|dgram|dns|dns/promises|child_process|cluster)$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'operator-uses-only-shared-node-code',
      comment: 'The operator shares the madmin wire encryption with the server, nothing else (topology rules come from the svc-topology package).',
      severity: 'error',
      from: { path: '^operator/src/' },
      to: { path: '^node/src/', pathNot: '^node/src/iam/madmin-crypto\\.ts$' },
    },
    {
      name: 'topology-package-stands-alone',
      comment: 'svc-topology is shared by the server and the operator: it imports neither (nor any npm package).',
      severity: 'error',
      from: { path: '^topology/src/' },
      to: { path: '^(node|operator)/|node_modules' },
    },
    {
      name: 'operator-pure-planning',
      comment: 'The operator\'s CRD, topology and reconcile planning are pure: no Kubernetes client, no admin HTTP client, no runtime.',
      severity: 'error',
      from: { path: '^operator/src/(crd|topology|reconcile)/' },
      to: {
        path: '^operator/src/(kube|runtime)/|^operator/src/admin/(client|iam-client)\\.ts$|node_modules/@kubernetes/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'server-only-at-the-top',
      comment: 'Nothing but the composition root and the command line imports server/ (covered by the layers; kept explicit for readers).',
      severity: 'error',
      from: { path: '^node/src/', pathNot: '^node/src/(server|cli)/' },
      to: { path: '^node/src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.test\\.ts$|^node/build/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'node/tsconfig.json' },
    // Workspace packages (svc-topology) resolve through their package.json exports to their .ts sources.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'], extensions: ['.ts', '.js', '.json'] },
    reporterOptions: {
      mermaid: { minify: false },
    },
  },
};
