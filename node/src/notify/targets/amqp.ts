/**
 * AMQP 0-9-1 target (amqplib), for RabbitMQ: each event is published to
 * the exchange with the routing key on a confirm channel and counts as
 * delivered once the broker confirmed it (publisher confirms are always
 * on: without them a message lost in the broker would leave the queue).
 * A named exchange is declared (durable by default) before the first
 * publish; messages are persistent (delivery mode 2) unless set otherwise.
 */
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { LazyClient, within } from './lazy-client.ts';
import { type Target, type TargetMessage, targetBody } from './target.ts';

export interface AmqpOptions {
  id: string;
  url: string;
  exchange?: string;
  exchangeType?: string;
  routingKey?: string;
  durable?: boolean;
  mandatory?: boolean;
  /** 1 transient, 2 persistent (default). */
  deliveryMode?: number;
  timeoutMs?: number;
}

interface Conn {
  model: ChannelModel;
  channel: ConfirmChannel;
}

export class AmqpTarget implements Target {
  readonly id: string;
  readonly type = 'amqp';
  readonly key: string;
  readonly #o: AmqpOptions;
  readonly #client: LazyClient<Conn>;
  readonly #timeout: number;

  constructor(o: AmqpOptions) {
    this.id = o.id;
    this.key = `${o.id}:amqp`;
    this.#o = o;
    this.#timeout = o.timeoutMs ?? 10_000;
    this.#client = new LazyClient(
      async () => {
        const model = await within(amqp.connect(o.url, { timeout: this.#timeout }), this.#timeout, 'amqp connect');
        model.on('error', () => undefined);
        const channel = await model.createConfirmChannel();
        channel.on('error', () => undefined);
        if (o.exchange) await channel.assertExchange(o.exchange, o.exchangeType ?? 'direct', { durable: o.durable ?? true });
        return { model, channel };
      },
      async (c) => {
        await c.model.close();
      },
    );
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#client.use(async ({ channel }) => {
      const body = Buffer.from(targetBody(m));
      await within(
        new Promise<void>((resolve, reject) => {
          channel.publish(this.#o.exchange ?? '', this.#o.routingKey ?? '', body, { contentType: 'application/json', deliveryMode: this.#o.deliveryMode ?? 2, mandatory: this.#o.mandatory === true }, (err) =>
            err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(),
          );
        }),
        this.#timeout,
        'amqp publish confirm',
      );
    });
  }

  async ping(): Promise<void> {
    await this.#client.use(async ({ channel }) => {
      if (this.#o.exchange) await channel.checkExchange(this.#o.exchange);
    });
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
