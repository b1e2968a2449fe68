/**
 * MQTT target (mqtt.js): each event is published on the topic at the
 * configured QoS (default 1: delivered once the broker acknowledged it).
 */
import mqtt, { type MqttClient } from 'mqtt';
import { LazyClient, within } from './lazy-client.ts';
import { type Target, type TargetMessage, targetBody } from './target.ts';

export interface MqttOptions {
  id: string;
  /** `tcp://host:port`, `mqtt://…`, `mqtts://…`, `ws(s)://…`. */
  broker: string;
  topic: string;
  qos?: 0 | 1 | 2;
  username?: string;
  password?: string;
  keepAliveSeconds?: number;
  timeoutMs?: number;
}

export class MqttTarget implements Target {
  readonly id: string;
  readonly type = 'mqtt';
  readonly key: string;
  readonly #o: MqttOptions;
  readonly #client: LazyClient<MqttClient>;
  readonly #timeout: number;

  constructor(o: MqttOptions) {
    this.id = o.id;
    this.key = `${o.id}:mqtt`;
    this.#o = o;
    this.#timeout = o.timeoutMs ?? 10_000;
    this.#client = new LazyClient(
      () =>
        within(
          mqtt.connectAsync(o.broker, {
            connectTimeout: this.#timeout,
            reconnectPeriod: 0,
            keepalive: o.keepAliveSeconds ?? 10,
            clean: true,
            ...(o.username ? { username: o.username } : {}),
            ...(o.password ? { password: o.password } : {}),
          }),
          this.#timeout,
          'mqtt connect',
        ),
      async (c) => {
        await c.endAsync(true);
      },
    );
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#client.use(async (c) => {
      if (!c.connected) throw new Error('mqtt connection lost');
      await within(c.publishAsync(this.#o.topic, targetBody(m), { qos: this.#o.qos ?? 1 }), this.#timeout, 'mqtt publish');
    });
  }

  async ping(): Promise<void> {
    await this.#client.use(async (c) => {
      if (!c.connected) throw new Error('mqtt connection lost');
    });
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
