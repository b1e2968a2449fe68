/**
 * Walkthroughs of the docs, run as written, the way a new user follows them
 * (each check here stands for a failure first met by someone doing that):
 *
 * - docs/tls.md's quick start: its shell block, run by bash in a fresh HOME,
 *   leaves a certificate directory `svc server` starts with on https (a
 *   serial file OpenSSL wrote into `CAs/` used to stop the start), ends back
 *   in the folder it started in (where `npx svc` finds the workspace's svc),
 *   and the block's own `svc ping` trusts the server through ~/.svc/certs/CAs.
 * - README's Kubernetes steps: the image build it gives tags the images the
 *   charts and the sample cluster name (the script's default tag did not).
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runSvc, runSvcCommand, type SvcRun, tempDir } from './svc-process.ts';

const exec = promisify(execFile);

/** The first ```sh block after `heading` in a doc, as lines. */
async function shellBlock(doc: string, heading: string): Promise<string[]> {
  const text = await readFile(join(REPO, doc), 'utf8');
  const from = text.indexOf(`\n${heading}\n`);
  expect(from, `${doc} has no "${heading}"`).toBeGreaterThan(0);
  const open = text.indexOf('```sh\n', from);
  const close = text.indexOf('\n```', open + 6);
  return text.slice(open + 6, close).split('\n');
}

describe('docs/tls.md quick start, as written', () => {
  let root: string;
  let run: SvcRun | undefined;
  beforeAll(() => {
    root = tempDir('docs-tls');
  });
  afterAll(async () => {
    await run?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('makes a certificate directory svc serves https from, and the svc client trusts', async () => {
    const home = join(root, 'home');
    const safe = join(root, 'safe');
    await mkdir(home);
    await mkdir(safe);
    const lines = await shellBlock('docs/tls.md', '## Quick start');
    const serverAt = lines.findIndex((l) => l.startsWith('npx svc server '));
    expect(serverAt).toBeGreaterThan(0);
    // Everything before the server runs as written (the CA key goes to a folder of the test's).
    const script = `${lines.slice(0, serverAt).join('\n').replaceAll('/somewhere/safe/', `${safe}/`)}\npwd\n`;
    const { stdout } = await exec('bash', ['-euo', 'pipefail', '-c', script], { cwd: REPO, env: { PATH: process.env.PATH ?? '', HOME: home } });
    expect(stdout.trim().split('\n').at(-1), 'the block ends in the folder it started in').toBe(REPO);
    expect((await readdir(join(home, '.svc', 'certs', 'CAs'))).sort()).toEqual(['ca.crt']);
    expect(await readdir(safe)).toEqual(['ca.key']);

    const drives = join(root, 'drives');
    for (let i = 1; i <= 4; i++) await mkdir(join(drives, `disk${i}`), { recursive: true });
    run = await runSvc(['server', `${drives}/disk{1...4}`], { HOME: home });
    expect(await run.started, run.stderr()).toBe(true);
    expect(run.logs().find((l) => l.event === 'startup_address')).toMatchObject({ scheme: 'https' });

    const ping = lines.find((l) => l.startsWith('npx svc ping '));
    expect(ping).toBeDefined();
    const target = /npx svc ping (\S+)/.exec(ping!)![1]!.replace(':9000', `:${run.port}`);
    const r = await runSvcCommand(['ping', target], { HOME: home });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('alive');
  }, 60_000);
});

describe('README Kubernetes steps, as written', () => {
  it('the image build tags what the charts and the sample cluster name', async () => {
    const readme = await readFile(join(REPO, 'README.md'), 'utf8');
    const tag = /SVC_IMAGE_TAG=(\S+) e2e\/build-images\.sh/.exec(readme)?.[1];
    expect(tag, 'README builds the images with an explicit SVC_IMAGE_TAG').toBeDefined();
    for (const chart of ['svc-operator', 'svc-cluster']) {
      const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(await readFile(join(REPO, 'charts', chart, 'Chart.yaml'), 'utf8'))?.[1];
      expect(appVersion, `charts/${chart} appVersion (its default image tag)`).toBe(tag);
    }
    for (const sample of ['cluster.yaml', 'cluster-tls.yaml']) {
      const images = [...(await readFile(join(REPO, 'config', 'samples', sample), 'utf8')).matchAll(/^\s*image: (\S+)$/gm)].map((m) => m[1]);
      expect(images.length, sample).toBeGreaterThan(0);
      for (const image of images) expect(image, `config/samples/${sample}`).toBe(`svc-node:${tag}`);
    }
  });
});
