/**
 * Redis target (node-redis). `namespace` format: a hash at `key` holding
 * one field per object (`bucket/key` → the event log JSON), removed when
 * the object is; `access` format: every event appended to the list at
 * `key` (`RPUSH` of `[{"Event":[record],"EventTime":...}]`, MinIO's shape).
 */
import { createClient } from 'redis';
import { LazyClient, within } from './lazy-client.ts';
import { type Target, type TargetFormat, type TargetMessage, targetBody } from './target.ts';

export interface RedisOptions {
  id: string;
  /** `host:port`, or a `redis://` / `rediss://` URL. */
  address: string;
  key: string;
  format: TargetFormat;
  user?: string;
  password?: string;
  timeoutMs?: number;
}

type Client = ReturnType<typeof createClient>;

export class RedisTarget implements Target {
  readonly id: string;
  readonly type = 'redis';
  readonly key: string;
  readonly #o: RedisOptions;
  readonly #client: LazyClient<Client>;
  readonly #timeout: number;

  constructor(o: RedisOptions) {
    this.id = o.id;
    this.key = `${o.id}:redis`;
    this.#o = o;
    this.#timeout = o.timeoutMs ?? 10_000;
    const url = /^rediss?:\/\//.test(o.address) ? o.address : `redis://${o.address}`;
    this.#client = new LazyClient(
      async () => {
        const c = createClient({
          url,
          ...(o.user ? { username: o.user } : {}),
          ...(o.password ? { password: o.password } : {}),
          socket: { connectTimeout: this.#timeout, reconnectStrategy: false },
          disableOfflineQueue: true,
        });
        c.on('error', () => undefined);
        await within(c.connect(), this.#timeout, 'redis connect');
        return c as Client;
      },
      async (c) => {
        c.destroy();
      },
    );
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#client.use(async (c) => {
      if (this.#o.format === 'access') {
        await within(c.rPush(this.#o.key, JSON.stringify([{ Event: m.message.Records, EventTime: new Date(m.time).toISOString() }])), this.#timeout, 'redis RPUSH');
      } else if (m.removal) {
        await within(c.hDel(this.#o.key, m.key), this.#timeout, 'redis HDEL');
      } else {
        await within(c.hSet(this.#o.key, m.key, targetBody(m)), this.#timeout, 'redis HSET');
      }
    });
  }

  async ping(): Promise<void> {
    await this.#client.use((c) => within(c.ping(), this.#timeout, 'redis PING'));
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
