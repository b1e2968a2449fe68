#!/usr/bin/env node
// The `svc-operator` command. Node 24 runs the TypeScript sources directly
// (type stripping); this shim only refuses older runtimes.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`svc-operator needs Node.js 24 or newer (this is ${process.version}).\n`);
  process.exit(1);
}
const { main } = await import('../src/runtime/main.ts');
process.exit(await main(process.argv.slice(2)));
