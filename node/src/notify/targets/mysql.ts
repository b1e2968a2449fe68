/**
 * MySQL / MariaDB target (mysql2). The table is created when missing.
 * `namespace`: `(key_name VARCHAR(3072), key_hash CHAR(64) primary key,
 * value JSON)`, one row per object (the key's SHA-256 as its primary key:
 * keys are too long to index), upserted and deleted with it; `access`:
 * `(event_time DATETIME(3) NOT NULL, event_data JSON)`, one row per event.
 * The hash is computed here rather than by a generated column, which
 * MariaDB and MySQL declare differently.
 */
import { createHash } from 'node:crypto';
import mysql, { type Pool } from 'mysql2/promise';
import { onceSucceeded } from './lazy-client.ts';
import { type Target, type TargetFormat, type TargetMessage, targetBody } from './target.ts';

export interface MysqlOptions {
  id: string;
  /** `user:password@tcp(host:port)/database` (MinIO's DSN) or a `mysql://` URL. */
  dsn: string;
  table: string;
  format: TargetFormat;
  maxConnections?: number;
  timeoutMs?: number;
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** MinIO's (Go) DSN `user:pass@tcp(host:port)/db` as a URL mysql2 takes. */
export function mysqlUrl(dsn: string): string {
  if (/^mysql:\/\//.test(dsn)) return dsn;
  const m = /^(?:([^:@]*)(?::([^@]*))?@)?(?:tcp\(([^)]+)\))?\/([^?]*)(\?.*)?$/.exec(dsn);
  if (!m) throw new Error('mysql dsn_string must be user:password@tcp(host:port)/database or a mysql:// URL');
  const auth = m[1] ? `${encodeURIComponent(m[1])}${m[2] !== undefined ? `:${encodeURIComponent(m[2])}` : ''}@` : '';
  return `mysql://${auth}${m[3] ?? '127.0.0.1:3306'}/${m[4]}`;
}

export class MysqlTarget implements Target {
  readonly id: string;
  readonly type = 'mysql';
  readonly key: string;
  readonly #o: MysqlOptions;
  readonly #pool: Pool;
  readonly #setup: () => Promise<void>;

  constructor(o: MysqlOptions) {
    if (!TABLE.test(o.table)) throw new Error(`mysql table name ${JSON.stringify(o.table)} must be an identifier`);
    this.id = o.id;
    this.key = `${o.id}:mysql`;
    this.#o = o;
    this.#pool = mysql.createPool({ uri: mysqlUrl(o.dsn), connectionLimit: o.maxConnections ?? 2, connectTimeout: o.timeoutMs ?? 10_000 });
    const t = o.table;
    const sql =
      o.format === 'access'
        ? `CREATE TABLE IF NOT EXISTS ${t} (event_time DATETIME(3) NOT NULL, event_data JSON)`
        : `CREATE TABLE IF NOT EXISTS ${t} (key_name VARCHAR(3072) NOT NULL, key_hash CHAR(64) NOT NULL PRIMARY KEY, value JSON)`;
    // The table is created on first use (and again after a failure).
    this.#setup = onceSucceeded(() => this.#pool.query(sql));
  }

  async send(m: TargetMessage): Promise<void> {
    await this.#setup();
    const t = this.#o.table;
    if (this.#o.format === 'access') {
      await this.#pool.query(`INSERT INTO ${t} (event_time, event_data) VALUES (?, ?)`, [new Date(m.time), targetBody(m)]);
    } else if (m.removal) {
      await this.#pool.query(`DELETE FROM ${t} WHERE key_hash = ?`, [sha256(m.key)]);
    } else {
      await this.#pool.query(`INSERT INTO ${t} (key_name, key_hash, value) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`, [m.key, sha256(m.key), targetBody(m)]);
    }
  }

  async ping(): Promise<void> {
    await this.#pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
