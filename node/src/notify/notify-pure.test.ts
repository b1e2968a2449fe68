import { describe, expect, it } from 'vitest';
import { parseXml } from '../api/s3/xml.ts';
import { decodeNotificationConfig, encodeNotificationConfig, matchRules, notificationConfigXml, parseNotificationConfig, parseTargetArn } from './bucket-config.ts';
import { encodeEventKey, eventMessage, isKnownEventPattern, patternMatches, Sequencer } from './event.ts';

const known = (t: { id: string; type: string }) => ['1:webhook', '2:webhook', '1:redis'].includes(`${t.id}:${t.type}`);

function parse(xml: string) {
  return parseNotificationConfig(parseXml(xml, 'NotificationConfiguration'), known, 'us-east-1');
}

function queue(arn: string, events: string[], filter = '', id = ''): string {
  return `<QueueConfiguration>${id ? `<Id>${id}</Id>` : ''}<Queue>${arn}</Queue>${events.map((e) => `<Event>${e}</Event>`).join('')}${filter}</QueueConfiguration>`;
}

function filter(rules: [string, string][]): string {
  return `<Filter><S3Key>${rules.map(([n, v]) => `<FilterRule><Name>${n}</Name><Value>${v}</Value></FilterRule>`).join('')}</S3Key></Filter>`;
}

describe('event names and keys', () => {
  it('accepts the event types svc emits and refuses the others', () => {
    for (const p of ['s3:ObjectCreated:*', 's3:ObjectCreated:Put', 's3:ObjectCreated:CompleteMultipartUpload', 's3:ObjectRemoved:DeleteMarkerCreated', 's3:ObjectAccessed:*', 's3:LifecycleExpiration:*']) {
      expect(isKnownEventPattern(p), p).toBe(true);
    }
    for (const p of ['s3:ObjectCreated:Nope', 'ObjectCreated:Put', 's3:Replication:*', 's3:ObjectRestore:Completed', 's3:*', 's3:LifecycleTransition']) {
      expect(isKnownEventPattern(p), p).toBe(false);
    }
    expect(patternMatches('s3:ObjectCreated:*', 'ObjectCreated:Copy')).toBe(true);
    expect(patternMatches('s3:ObjectCreated:Put', 'ObjectCreated:Copy')).toBe(false);
    expect(patternMatches('s3:ObjectRemoved:*', 'ObjectCreated:Put')).toBe(false);
  });

  it('URL-encodes keys as a form does, keeping slashes', () => {
    expect(encodeEventKey('photos/2024/a b+c=d&é.jpg')).toBe('photos/2024/a+b%2Bc%3Dd%26%C3%A9.jpg');
    expect(decodeURIComponent(encodeEventKey('x y/ü~!').replace(/\+/g, ' '))).toBe('x y/ü~!');
  });

  it('gives each key increasing sequencers even within one millisecond', () => {
    const s = new Sequencer(4);
    const a = s.next('b', 'k', 1000);
    const b = s.next('b', 'k', 1000);
    const c = s.next('b', 'k', 999);
    expect(a).toMatch(/^[0-9A-F]{16}$/);
    expect(a < b && b < c).toBe(true);
    expect(s.next('b', 'other', 1000)).toBe(a);
  });

  it('builds the AWS record', () => {
    const m = eventMessage(
      {
        name: 'ObjectCreated:Put',
        bucket: 'b',
        key: 'a b',
        time: Date.UTC(2024, 0, 2, 3, 4, 5, 6),
        versionId: 'null',
        size: 3,
        etag: 'abc',
        sequencer: '00',
        origin: { principalId: 'svcadmin', sourceIp: '127.0.0.1', requestId: 'R', hostId: 'H' },
      },
      'cfg',
      { region: 'us-east-1', ownerId: 'svcadmin' },
    );
    expect(m.Records[0]).toEqual({
      eventVersion: '2.1',
      eventSource: 'aws:s3',
      awsRegion: 'us-east-1',
      eventTime: '2024-01-02T03:04:05.006Z',
      eventName: 'ObjectCreated:Put',
      userIdentity: { principalId: 'svcadmin' },
      requestParameters: { sourceIPAddress: '127.0.0.1' },
      responseElements: { 'x-amz-request-id': 'R', 'x-amz-id-2': 'H' },
      s3: {
        s3SchemaVersion: '1.0',
        configurationId: 'cfg',
        bucket: { name: 'b', ownerIdentity: { principalId: 'svcadmin' }, arn: 'arn:aws:s3:::b' },
        object: { key: 'a+b', size: 3, eTag: 'abc', sequencer: '00' },
      },
    });
  });
});

describe('notification configuration', () => {
  it('parses, stores and renders a document with every configuration kind', () => {
    const c = parse(
      `<NotificationConfiguration>${queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['prefix', 'img/'], ['Suffix', '.jpg']]), 'q1')}` +
        `<TopicConfiguration><Id>t1</Id><Topic>arn:minio:sqs:us-east-1:1:redis</Topic><Event>s3:ObjectRemoved:*</Event></TopicConfiguration>` +
        `<CloudFunctionConfiguration><CloudFunction>arn:svc:sqs::2:webhook</CloudFunction><Event>s3:ObjectRemoved:Delete</Event></CloudFunctionConfiguration></NotificationConfiguration>`,
    );
    expect(c.rules.map((r) => [r.kind, r.id.length > 0, r.prefix, r.suffix])).toEqual([
      ['QueueConfiguration', true, 'img/', '.jpg'],
      ['TopicConfiguration', true, undefined, undefined],
      ['CloudFunctionConfiguration', true, undefined, undefined],
    ]);
    expect(decodeNotificationConfig(encodeNotificationConfig(c))).toEqual(c);
    const x = notificationConfigXml(c) as { QueueConfiguration: { Filter: unknown }[] };
    expect(x.QueueConfiguration[0]!.Filter).toEqual({ S3Key: { FilterRule: [{ Name: 'prefix', Value: 'img/' }, { Name: 'suffix', Value: '.jpg' }] } });
    expect(matchRules(c, 'ObjectCreated:Put', 'img/a.jpg')).toEqual([{ id: 'q1', target: '1:webhook' }]);
    expect(matchRules(c, 'ObjectCreated:Put', 'img/a.png')).toEqual([]);
    expect(matchRules(c, 'ObjectCreated:Put', 'doc/a.jpg')).toEqual([]);
    expect(matchRules(c, 'ObjectRemoved:Delete', 'x').map((m) => m.target)).toEqual(['1:redis', '2:webhook']);
    expect(matchRules(c, 'ObjectRemoved:DeleteMarkerCreated', 'x').map((m) => m.target)).toEqual(['1:redis']);
  });

  it('refuses what S3 refuses, with its codes', () => {
    const code = (xml: string) => {
      try {
        parse(`<NotificationConfiguration>${xml}</NotificationConfiguration>`);
        return 'ok';
      } catch (err) {
        return `${(err as { code: string }).code}: ${(err as Error).message}`;
      }
    };
    expect(code(queue('arn:svc:sqs::9:webhook', ['s3:ObjectCreated:*']))).toMatch(/^InvalidArgument: Unable to validate/);
    expect(code(queue('not-an-arn', ['s3:ObjectCreated:*']))).toMatch(/^InvalidArgument: A specified destination ARN/);
    expect(code(queue('arn:svc:sqs:eu-west-1:1:webhook', ['s3:ObjectCreated:*']))).toMatch(/^InvalidArgument: A specified destination is in a different region/);
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:Nope']))).toMatch(/^InvalidArgument: A specified event is not supported/);
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['prefix', 'a'], ['prefix', 'b']])))).toMatch(/^InvalidArgument: Cannot specify more than one prefix/);
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['other', 'a']])))).toMatch(/^InvalidArgument: filter rule name/);
    expect(code(queue('arn:svc:sqs::1:webhook', []))).toMatch(/^MalformedXML/);
    // same destination, shared event type, overlapping filters
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['prefix', 'a/']])) + queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:Put'], filter([['prefix', 'a/b']])))).toMatch(
      /^InvalidArgument: Configurations overlap/,
    );
    // disjoint prefixes, disjoint events, or different destinations: fine
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['prefix', 'a/']])) + queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['prefix', 'b/']])))).toBe('ok');
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*']) + queue('arn:svc:sqs::1:webhook', ['s3:ObjectRemoved:*']))).toBe('ok');
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*']) + queue('arn:svc:sqs::2:webhook', ['s3:ObjectCreated:*']))).toBe('ok');
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['suffix', '.jpg']])) + queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], filter([['suffix', '.png']])))).toBe('ok');
    expect(code(queue('arn:svc:sqs::1:webhook', ['s3:ObjectCreated:*'], '', 'x') + queue('arn:svc:sqs::1:webhook', ['s3:ObjectRemoved:*'], '', 'x'))).toMatch(/^InvalidArgument: Two configurations/);
  });

  it('parses ARNs in both partitions', () => {
    expect(parseTargetArn('arn:svc:sqs::primary:webhook')).toEqual({ region: '', id: 'primary', type: 'webhook' });
    expect(parseTargetArn('arn:minio:sqs:us-east-1:1:nats')).toEqual({ region: 'us-east-1', id: '1', type: 'nats' });
    expect(parseTargetArn('arn:aws:sqs:us-east-1:1:q')).toBeUndefined();
  });
});

describe('target settings from the environment', () => {
  it('reads MinIO-named variables with the SVC_ prefix, ids and defaults', async () => {
    const { targetsFromEnv } = await import('../util/notify-config.ts');
    const specs = targetsFromEnv({
      SVC_NOTIFY_WEBHOOK_ENABLE_PRIMARY: 'on',
      SVC_NOTIFY_WEBHOOK_ENDPOINT_PRIMARY: 'https://hooks.example/x',
      SVC_NOTIFY_WEBHOOK_AUTH_TOKEN_PRIMARY: 't',
      SVC_NOTIFY_WEBHOOK_QUEUE_DIR_PRIMARY: '/q',
      SVC_NOTIFY_REDIS_ENABLE: 'on',
      SVC_NOTIFY_REDIS_ADDRESS: '127.0.0.1:6379',
      SVC_NOTIFY_REDIS_KEY: 'events',
      SVC_NOTIFY_REDIS_FORMAT: 'access',
      SVC_NOTIFY_NATS_ENABLE_OFF: 'off',
      OTHER: 'x',
    });
    expect(specs).toEqual([
      { type: 'nats', id: 'OFF', enabled: false, settings: {} },
      { type: 'redis', id: '_', enabled: true, settings: { address: '127.0.0.1:6379', key: 'events', format: 'access' } },
      { type: 'webhook', id: 'PRIMARY', enabled: true, settings: { endpoint: 'https://hooks.example/x', auth_token: 't', queue_dir: '/q' } },
    ]);
    const err = (env: Record<string, string>) => {
      try {
        targetsFromEnv(env);
        return 'ok';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(err({ SVC_NOTIFY_WEBHOOK_ENDPOINT_X: 'http://a' })).toMatch(/SVC_NOTIFY_WEBHOOK_ENABLE_X is not set/);
    expect(err({ SVC_NOTIFY_WEBHOOK_ENABLE_X: 'on' })).toMatch(/endpoint is required/);
    expect(err({ SVC_NOTIFY_WEBHOOK_ENABLE_X: 'on', SVC_NOTIFY_WEBHOOK_ENDPOINT_X: 'ftp://a' })).toMatch(/http/);
    expect(err({ SVC_NOTIFY_REDIS_ENABLE: 'on', SVC_NOTIFY_REDIS_ADDRESS: 'a', SVC_NOTIFY_REDIS_KEY: 'k', SVC_NOTIFY_REDIS_FORMAT: 'x' })).toMatch(/namespace or access/);
    expect(err({ SVC_NOTIFY_FOO_ENABLE: 'on' })).toMatch(/unknown notification variables: SVC_NOTIFY_FOO_ENABLE/);
  });
});
