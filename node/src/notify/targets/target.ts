/**
 * What every notification target is to the rest of svc: a named
 * destination that takes one message at a time and throws when it did not
 * take it (the delivery loop keeps the event and retries). Each protocol
 * lives in its own module over the ecosystem's client library.
 */

/** One event as a target receives it. */
export interface TargetMessage {
  /** `s3:ObjectCreated:Put` (MinIO's `EventName`). */
  eventName: string;
  /** `bucket/key` (MinIO's `Key`): the namespace formats index by it. */
  key: string;
  /** Unix ms of the event. */
  time: number;
  /** True when the object is gone (removed or expired): the namespace formats delete their entry. */
  removal: boolean;
  /** The AWS S3 event message. */
  message: { Records: Record<string, unknown>[] };
}

export interface Target {
  /** `<id>:<type>` (what ARNs name). */
  readonly key: string;
  readonly id: string;
  readonly type: string;
  /** Delivers one message; resolves once the destination acknowledged it, throws otherwise. */
  send(m: TargetMessage): Promise<void>;
  /** Cheap reachability check for the status (connects when not connected). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The body MinIO's targets send: `EventName`, `Key`, `Records`. */
export function targetBody(m: TargetMessage): string {
  return JSON.stringify({ EventName: m.eventName, Key: m.key, Records: m.message.Records });
}

/** Namespace or access format of the key-value and SQL targets. */
export type TargetFormat = 'namespace' | 'access';
