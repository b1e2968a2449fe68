import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerAvailable } from './docker-available.ts';

// The storage-node image, built from Dockerfile.node and run as a user would:
// four drive folders inside the container, default credentials.
const haveDocker = await dockerAvailable();
if (!haveDocker) console.log('skipped: no Docker (the storage-node image test needs a container engine)');

describe.skipIf(!haveDocker)('storage-node image', () => {
  let container: StartedTestContainer;

  beforeAll(async () => {
    const image = await GenericContainer.fromDockerfile(new URL('..', import.meta.url).pathname, 'Dockerfile.node').build(
      'svc-node:e2e',
      { deleteOnExit: true },
    );
    container = await image
      .withExposedPorts(9000, 9001)
      .withCommand(['server', '/data/d{1...4}'])
      .withWaitStrategy(Wait.forHttp('/health/ready', 9000).forStatusCode(200))
      .start();
  }, 600_000);

  afterAll(async () => {
    await container?.stop();
  });

  it('answers liveness, readiness and the console health path', async () => {
    const base = `http://${container.getHost()}:${container.getMappedPort(9000)}`;
    const live = await fetch(`${base}/health`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { ready: boolean; status: string };
    expect(body.ready).toBe(true);
    expect(body.status).toBe('ok');
    const consoleBase = `http://${container.getHost()}:${container.getMappedPort(9001)}`;
    expect((await fetch(`${consoleBase}/svc/console/health`)).status).toBe(200);
  });
});
