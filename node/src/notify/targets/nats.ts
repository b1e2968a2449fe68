/**
 * NATS target (@nats-io/transport-node): each event is published on the
 * subject and the connection flushed, so the server has it before the
 * entry leaves the queue (core NATS has no per-message acknowledgement;
 * a flush round trip is its delivery confirmation).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { LazyClient, within } from './lazy-client.ts';
import { type Target, type TargetMessage, targetBody } from './target.ts';

export interface NatsOptions {
  id: string;
  /** `host:port` (or a `nats://` URL). */
  address: string;
  subject: string;
  username?: string;
  password?: string;
  token?: string;
  timeoutMs?: number;
}

export class NatsTarget implements Target {
  readonly id: string;
  readonly type = 'nats';
  readonly key: string;
  readonly #subject: string;
  readonly #client: LazyClient<NatsConnection>;
  readonly #timeout: number;

  constructor(o: NatsOptions) {
    this.id = o.id;
    this.key = `${o.id}:nats`;
    this.#subject = o.subject;
    this.#timeout = o.timeoutMs ?? 10_000;
    this.#client = new LazyClient(
      () =>
        connect({
          servers: o.address,
          timeout: this.#timeout,
          reconnect: false,
          ...(o.username ? { user: o.username } : {}),
          ...(o.password ? { pass: o.password } : {}),
          ...(o.token ? { token: o.token } : {}),
        }),
      async (c) => {
        await c.close();
      },
    );
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#client.use(async (c) => {
      if (c.isClosed()) throw new Error('nats connection closed');
      c.publish(this.#subject, targetBody(m));
      await within(c.flush(), this.#timeout, 'nats flush');
    });
  }

  async ping(): Promise<void> {
    await this.#client.use((c) => within(c.flush(), this.#timeout, 'nats flush'));
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
