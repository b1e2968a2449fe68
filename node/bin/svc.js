#!/usr/bin/env node
// The `svc` command. Node 24 runs the TypeScript sources directly (type
// stripping), so this shim only refuses older runtimes and loads the CLI.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `svc needs Node.js 24 or newer (this is ${process.version}). ` +
      'Run it through the repository (npm start, npx svc) after `npm ci`, which installs Node 24 locally.\n',
  );
  process.exit(1);
}
const heap = await import('../src/util/heap.ts');
// A server restarts itself once, in place, with V8 heap options that can only be set at start-up.
const command = process.argv[2];
if (command === undefined || command === 'server' || command === 'local') heap.restartWithServerHeap();
// Before any I/O: libuv sizes its worker pool on first use.
(await import('../src/util/threadpool.ts')).sizeThreadpool();
// Before the heap grows: a young generation that stays small frees dead socket buffers sooner.
heap.capYoungGeneration();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// Output to a pipe must be out before the process goes (`svc … --json | cat` lost all past 64 KiB).
await (await import('../src/cli/exit.ts')).exitAfterFlush(code);
