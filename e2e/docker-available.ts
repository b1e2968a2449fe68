import { getContainerRuntimeClient } from 'testcontainers';

/**
 * Whether a container engine answers here. testcontainers probes the usual
 * strategies (DOCKER_HOST, the default socket, rootless sockets); we bound the
 * probe so a machine without an engine decides quickly.
 */
export async function dockerAvailable(timeoutMs = 10_000): Promise<boolean> {
  const probe = getContainerRuntimeClient().then(
    () => true,
    () => false,
  );
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref());
  return Promise.race([probe, timeout]);
}
