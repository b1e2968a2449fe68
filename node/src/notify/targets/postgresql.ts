/**
 * PostgreSQL target (pg). The table is created when missing.
 * `namespace`: `(key VARCHAR PRIMARY KEY, value JSONB)`, one row per object
 * (`bucket/key`), upserted on each event and deleted with the object;
 * `access`: `(event_time TIMESTAMPTZ NOT NULL, event_data JSONB)`, one row
 * per event. MinIO's tables, so existing consumers keep working.
 */
import pg from 'pg';
import { onceSucceeded } from './lazy-client.ts';
import { type Target, type TargetFormat, type TargetMessage, targetBody } from './target.ts';

export interface PostgresOptions {
  id: string;
  connectionString: string;
  table: string;
  format: TargetFormat;
  maxConnections?: number;
  timeoutMs?: number;
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

export class PostgresTarget implements Target {
  readonly id: string;
  readonly type = 'postgresql';
  readonly key: string;
  readonly #o: PostgresOptions;
  readonly #pool: pg.Pool;
  readonly #setup: () => Promise<void>;

  constructor(o: PostgresOptions) {
    if (!TABLE.test(o.table)) throw new Error(`postgresql table name ${JSON.stringify(o.table)} must be an identifier`);
    this.id = o.id;
    this.key = `${o.id}:postgresql`;
    this.#o = o;
    const timeout = o.timeoutMs ?? 10_000;
    this.#pool = new pg.Pool({ connectionString: o.connectionString, max: o.maxConnections ?? 2, connectionTimeoutMillis: timeout, query_timeout: timeout, statement_timeout: timeout });
    this.#pool.on('error', () => undefined);
    const sql =
      o.format === 'access'
        ? `CREATE TABLE IF NOT EXISTS ${o.table} (event_time TIMESTAMP WITH TIME ZONE NOT NULL, event_data JSONB)`
        : `CREATE TABLE IF NOT EXISTS ${o.table} (key VARCHAR PRIMARY KEY, value JSONB)`;
    // The table is created on first use (and again after a failure).
    this.#setup = onceSucceeded(() => this.#pool.query(sql));
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#setup();
    const t = this.#o.table;
    if (this.#o.format === 'access') {
      await this.#pool.query(`INSERT INTO ${t} (event_time, event_data) VALUES ($1, $2)`, [new Date(m.time), targetBody(m)]);
    } else if (m.removal) {
      await this.#pool.query(`DELETE FROM ${t} WHERE key = $1`, [m.key]);
    } else {
      await this.#pool.query(`INSERT INTO ${t} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [m.key, targetBody(m)]);
    }
  }

  async ping(): Promise<void> {
    await this.#pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
