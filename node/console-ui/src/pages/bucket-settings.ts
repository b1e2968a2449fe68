/**
 * A bucket's settings, edited: object lock's default retention, lifecycle
 * rules (a form for the common rule, and the whole configuration as JSON),
 * the bucket policy with anonymous-access presets, default encryption, CORS
 * and tags. Documents are the JSON the AWS CLI uses; the node's S3 API
 * checks each one as it checks any client's, and its refusal is shown with
 * its reason. Every change says what it did; every removal asks first.
 */
import type { BucketSetting, ObjectLockView } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { h } from '../dom.js';
import { keyValueLines } from '../format.js';
import { confirmDialog, errorBox, showDone } from '../ui.js';

type Kind = BucketSetting['kind'];

const TITLES: Record<Kind, string> = {
  'object-lock': 'Object lock',
  lifecycle: 'Lifecycle rules',
  policy: 'Bucket policy and anonymous access',
  encryption: 'Default encryption',
  cors: 'CORS',
  tagging: 'Tags',
};

interface Editor {
  readonly el: HTMLElement;
  readonly out: HTMLElement;
  /** The setting as the server has it now (null: unset). */
  current: unknown;
  show(value: unknown): void;
  save(value: unknown, done: string): Promise<void>;
  remove(what: string): Promise<void>;
}

const pretty = (v: unknown) => (v === null ? '' : typeof v === 'string' ? prettyJson(v) : JSON.stringify(v, null, 2));

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A setting's card: the JSON document in a text area, saved or removed, and whatever quick form `extra` adds. */
function editor(bucket: string, kind: Kind, hint: string, template: unknown, onValue: (v: unknown) => void = () => {}): Editor {
  const b = encodeURIComponent(bucket);
  const id = `setting-${kind}`;
  const out = h('div', { class: 'action-result', id: `${id}-result` });
  const text = h('textarea', { id: `${id}-json`, spellcheck: 'false', 'aria-describedby': `${id}-hint`, rows: 8 });
  const state = h('p', { class: 'muted', id: `${id}-state` }, 'Loading…');
  // nothing can be saved before the current document is known (a save would race the load)
  const saveButton = h('button', { type: 'submit', class: 'button', id: `${id}-save`, disabled: true }, 'Save JSON');
  const removeButton = h('button', { type: 'button', class: 'button button-quiet', id: `${id}-remove` }, 'Remove…');
  const form = h(
    'form',
    { id: `${id}-form` },
    h('label', { for: `${id}-json` }, `${TITLES[kind]} as JSON`),
    text,
    h('p', { class: 'hint', id: `${id}-hint` }, hint),
    h('div', { class: 'button-row' }, saveButton, kind === 'object-lock' ? null : removeButton),
  );
  const ed: Editor = {
    el: h('div', { class: 'setting', id }, h('h3', null, TITLES[kind]), state, form, out),
    out,
    current: null,
    show(value) {
      ed.current = value;
      text.value = pretty(value);
      if (value === null && template !== null) text.placeholder = pretty(template);
      state.textContent = value === null ? 'Not set.' : 'Set (the document below is what the bucket has now).';
      removeButton.disabled = value === null;
      saveButton.disabled = false;
      for (const b of ed.el.querySelectorAll<HTMLButtonElement>('button[type="submit"]')) b.disabled = false;
      onValue(value);
    },
    async save(value, done) {
      out.replaceChildren();
      try {
        const r = await api<BucketSetting>('PUT', `buckets/${b}/settings/${kind}`, { value });
        ed.show(r.value);
        showDone(out, done);
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    },
    async remove(what) {
      if (!(await confirmDialog({ title: `Remove ${what} of ${bucket}?`, body: `The bucket's ${what} is removed: ${removalMeaning(kind)}`, confirmLabel: 'Remove', danger: true }))) return;
      out.replaceChildren();
      try {
        const r = await api<BucketSetting>('DELETE', `buckets/${b}/settings/${kind}`);
        ed.show(r.value);
        const done = `${what[0]!.toUpperCase()}${what.slice(1)} removed.`;
        showDone(out, done);
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    },
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    let value: unknown;
    if (kind === 'policy') value = text.value;
    else {
      try {
        value = JSON.parse(text.value);
      } catch (err) {
        out.replaceChildren(errorBox(new Error(`That is not JSON: ${(err as Error).message}`)));
        text.focus();
        return;
      }
    }
    void ed.save(value, `${TITLES[kind]} saved.`);
  });
  removeButton.addEventListener('click', () => void ed.remove(TITLES[kind].toLowerCase()));
  void api<BucketSetting>('GET', `buckets/${b}/settings/${kind}`).then(
    (r) => ed.show(r.value),
    (err: unknown) => {
      state.replaceChildren(errorBox(err));
    },
  );
  return ed;
}

function removalMeaning(kind: Kind): string {
  switch (kind) {
    case 'lifecycle':
      return 'nothing expires or is cleaned up automatically any more.';
    case 'policy':
      return 'only the bucket owner and identities whose own policies allow it keep access; anonymous access ends.';
    case 'encryption':
      return 'new objects are no longer encrypted by default (stored ones stay as they are).';
    case 'cors':
      return 'web pages on other sites can no longer call this bucket from a browser.';
    case 'tagging':
      return 'every tag of the bucket is removed.';
    case 'object-lock':
      return '';
  }
}

const field = (id: string, label: string, input: HTMLElement, hint?: string) =>
  h('p', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('span', { class: 'hint' }, hint) : null);

/** The policy document for an anonymous-access preset (MinIO's download, upload and public). */
export function anonymousPolicy(bucket: string, access: 'download' | 'upload' | 'public'): string {
  const read = { Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`] };
  const list = { Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:ListBucket', 's3:GetBucketLocation'], Resource: [`arn:aws:s3:::${bucket}`] };
  const write = { Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'], Resource: [`arn:aws:s3:::${bucket}/*`] };
  const statements = access === 'download' ? [list, read] : access === 'upload' ? [write] : [list, read, write];
  return JSON.stringify({ Version: '2012-10-17', Statement: statements }, null, 2);
}

function lockEditor(bucket: string): HTMLElement {
  const mode = h('select', { id: 'lock-mode' }, h('option', { value: '' }, 'No default retention'), h('option', { value: 'GOVERNANCE' }, 'GOVERNANCE'), h('option', { value: 'COMPLIANCE' }, 'COMPLIANCE'));
  const days = h('input', { type: 'number', id: 'lock-days', min: 1, max: 36500, inputmode: 'numeric' });
  const ed = editor(bucket, 'object-lock', 'Object lock cannot be turned off. GOVERNANCE retention can be bypassed by users allowed to; COMPLIANCE cannot be shortened by anyone.', null, (v) => {
    const rule = (v as { Rule?: { DefaultRetention?: { Mode?: string; Days?: number } } } | null)?.Rule?.DefaultRetention;
    mode.value = rule?.Mode ?? '';
    days.value = rule?.Days !== undefined ? String(rule.Days) : '';
  });
  const form = h(
    'form',
    { class: 'form-inline', id: 'lock-form' },
    field('lock-mode', 'Default retention of new versions', mode),
    field('lock-days', 'Days', days),
    h('button', { type: 'submit', class: 'button button-primary', id: 'lock-save', disabled: true }, 'Save retention'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const m = mode.value;
    const value = m === '' ? { ObjectLockEnabled: 'Enabled' } : { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: m, Days: Number(days.value) } } };
    const go = async () => {
      if (m === 'COMPLIANCE' && !(await confirmDialog({ title: 'Keep new versions under COMPLIANCE?', body: `Every new version in ${bucket} can then not be deleted by anyone, the root included, for ${days.value} days.`, confirmLabel: 'Set COMPLIANCE retention', danger: true }))) return;
      await ed.save(value, m === '' ? 'Default retention removed: new versions are not retained unless they ask for it.' : `New versions are now kept ${days.value} days (${m}).`);
    };
    void go();
  });
  ed.el.insertBefore(form, ed.el.querySelector('form'));
  return ed.el;
}

function lifecycleEditor(bucket: string): HTMLElement {
  const ed = editor(
    bucket,
    'lifecycle',
    'Rules as PutBucketLifecycleConfiguration takes them: {"Rules": [{"ID", "Status", "Filter": {"Prefix"}, "Expiration": {"Days"}, "NoncurrentVersionExpiration": {"NoncurrentDays"}, "AbortIncompleteMultipartUpload": {"DaysAfterInitiation"}}]}. Rules run on the scanner cycle.',
    { Rules: [{ ID: 'expire-tmp', Status: 'Enabled', Filter: { Prefix: 'tmp/' }, Expiration: { Days: 7 } }] },
  );
  const id = h('input', { type: 'text', id: 'rule-id', autocomplete: 'off', spellcheck: 'false' });
  const prefix = h('input', { type: 'text', id: 'rule-prefix', autocomplete: 'off', spellcheck: 'false', placeholder: 'every object' });
  const expire = h('input', { type: 'number', id: 'rule-expire-days', min: 1, inputmode: 'numeric' });
  const noncurrent = h('input', { type: 'number', id: 'rule-noncurrent-days', min: 1, inputmode: 'numeric' });
  const abort = h('input', { type: 'number', id: 'rule-abort-days', min: 1, inputmode: 'numeric' });
  const form = h(
    'form',
    { class: 'form', id: 'rule-form' },
    h('h4', null, 'Add a rule'),
    field('rule-id', 'Name', id),
    field('rule-prefix', 'Objects whose names start with', prefix),
    field('rule-expire-days', 'Expire current versions after (days)', expire),
    field('rule-noncurrent-days', 'Delete older versions after (days)', noncurrent),
    field('rule-abort-days', 'Abort unfinished uploads after (days)', abort),
    h('button', { type: 'submit', class: 'button button-primary', id: 'rule-add', disabled: true }, 'Add rule'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const n = (i: HTMLInputElement) => (i.value.trim() === '' ? undefined : Number(i.value));
    const rule: Record<string, unknown> = { ID: id.value.trim() || `rule-${Date.now()}`, Status: 'Enabled', Filter: { Prefix: prefix.value } };
    if (n(expire) !== undefined) rule.Expiration = { Days: n(expire) };
    if (n(noncurrent) !== undefined) rule.NoncurrentVersionExpiration = { NoncurrentDays: n(noncurrent) };
    if (n(abort) !== undefined) rule.AbortIncompleteMultipartUpload = { DaysAfterInitiation: n(abort) };
    const rules = ((ed.current as { Rules?: unknown[] } | null)?.Rules ?? []).filter((r) => (r as { ID?: string }).ID !== rule.ID);
    void ed.save({ Rules: [...rules, rule] }, `Rule ${String(rule.ID)} added: ${rules.length + 1} rule${rules.length === 0 ? '' : 's'} now.`);
  });
  ed.el.insertBefore(form, ed.el.querySelector('form'));
  return ed.el;
}

function policyEditor(bucket: string): HTMLElement {
  const access = h(
    'select',
    { id: 'anonymous-access' },
    h('option', { value: 'private' }, 'Private: no anonymous access'),
    h('option', { value: 'download' }, 'Download: anyone can list and read'),
    h('option', { value: 'upload' }, 'Upload: anyone can write'),
    h('option', { value: 'public' }, 'Public: anyone can list, read and write'),
  );
  const ed = editor(bucket, 'policy', 'A bucket policy (JSON, as PutBucketPolicy takes it). The node checks it; a policy it cannot use is refused with the reason.', null);
  const form = h('form', { class: 'form-inline', id: 'anonymous-form' }, field('anonymous-access', 'Anonymous access', access), h('button', { type: 'submit', class: 'button button-primary', id: 'anonymous-save', disabled: true }, 'Apply'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = access.value as 'private' | 'download' | 'upload' | 'public';
    void (async () => {
      if (v === 'private') {
        await ed.remove('the bucket policy');
        return;
      }
      if (!(await confirmDialog({ title: `Open ${bucket} to anyone?`, body: `Anyone who can reach the S3 API, without keys, will be able to ${v === 'download' ? 'list and download its objects' : v === 'upload' ? 'upload objects to it' : 'list, download and upload its objects'}. This replaces the bucket's policy.`, confirmLabel: 'Apply', danger: true }))) return;
      await ed.save(anonymousPolicy(bucket, v), `Anonymous access set to ${v}.`);
    })();
  });
  ed.el.insertBefore(form, ed.el.querySelector('form'));
  return ed.el;
}

function encryptionEditor(bucket: string): HTMLElement {
  const alg = h('select', { id: 'encryption-algorithm' }, h('option', { value: '' }, 'None'), h('option', { value: 'AES256' }, 'SSE-S3 (keys kept by the cluster)'), h('option', { value: 'aws:kms' }, 'SSE-KMS (a key of the KMS)'));
  const keyId = h('input', { type: 'text', id: 'encryption-key', autocomplete: 'off', spellcheck: 'false', placeholder: 'the default key' });
  const ed = editor(bucket, 'encryption', 'New objects are encrypted with this unless the upload asks otherwise; stored objects are not re-encrypted.', null, (v) => {
    const d = (v as { Rules?: { ApplyServerSideEncryptionByDefault?: { SSEAlgorithm?: string; KMSMasterKeyID?: string } }[] } | null)?.Rules?.[0]?.ApplyServerSideEncryptionByDefault;
    alg.value = d?.SSEAlgorithm ?? '';
    keyId.value = d?.KMSMasterKeyID ?? '';
  });
  const form = h('form', { class: 'form-inline', id: 'encryption-form' }, field('encryption-algorithm', 'Encrypt new objects', alg), field('encryption-key', 'KMS key', keyId), h('button', { type: 'submit', class: 'button button-primary', id: 'encryption-save', disabled: true }, 'Save encryption'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (alg.value === '') {
      void ed.remove('default encryption');
      return;
    }
    const d: Record<string, string> = { SSEAlgorithm: alg.value };
    if (alg.value === 'aws:kms' && keyId.value.trim() !== '') d.KMSMasterKeyID = keyId.value.trim();
    void ed.save({ Rules: [{ ApplyServerSideEncryptionByDefault: d }] }, `New objects are encrypted with ${alg.value === 'AES256' ? 'SSE-S3' : `SSE-KMS${d.KMSMasterKeyID ? ` (key ${d.KMSMasterKeyID})` : ''}`}.`);
  });
  ed.el.insertBefore(form, ed.el.querySelector('form'));
  return ed.el;
}

function tagsEditor(bucket: string): HTMLElement {
  const lines = h('textarea', { id: 'bucket-tags', rows: 4, spellcheck: 'false', 'aria-describedby': 'bucket-tags-hint' });
  const ed = editor(bucket, 'tagging', 'The tag set as PutBucketTagging takes it: {"TagSet": [{"Key", "Value"}]}.', { TagSet: [{ Key: 'team', Value: 'storage' }] }, (v) => {
    lines.value = ((v as { TagSet?: { Key: string; Value: string }[] } | null)?.TagSet ?? []).map((t) => `${t.Key}=${t.Value}`).join('\n');
  });
  const form = h(
    'form',
    { class: 'form', id: 'bucket-tags-form' },
    h('label', { for: 'bucket-tags' }, 'Tags, one key=value a line'),
    lines,
    h('p', { class: 'hint', id: 'bucket-tags-hint' }, 'Up to 50 tags.'),
    h('button', { type: 'submit', class: 'button button-primary', id: 'bucket-tags-save', disabled: true }, 'Save tags'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const tags = keyValueLines(lines.value).map((t) => ({ Key: t.key, Value: t.value }));
    if (tags.length === 0) void ed.remove('the tags');
    else void ed.save({ TagSet: tags }, `${tags.length} tag${tags.length === 1 ? '' : 's'} saved.`);
  });
  ed.el.insertBefore(form, ed.el.querySelector('form'));
  return ed.el;
}

/** The settings card of a bucket page. */
export function bucketSettings(bucket: string, lock: Promise<ObjectLockView>): HTMLElement {
  const lockSlot = h('div', { id: 'lock-slot' });
  void lock.then(
    (l) => {
      if (l.enabled) lockSlot.replaceChildren(lockEditor(bucket));
      else lockSlot.replaceChildren(h('div', { class: 'setting', id: 'setting-object-lock' }, h('h3', null, 'Object lock'), h('p', { class: 'muted' }, 'Off. Object lock can only be turned on when a bucket is created.')));
    },
    () => undefined,
  );
  return h(
    'div',
    { class: 'settings-grid', id: 'bucket-settings' },
    lockSlot,
    lifecycleEditor(bucket),
    policyEditor(bucket),
    encryptionEditor(bucket),
    editor(
      bucket,
      'cors',
      'CORS rules as PutBucketCors takes them: {"CORSRules": [{"AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposeHeaders", "MaxAgeSeconds"}]}.',
      { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET', 'PUT'], AllowedHeaders: ['*'], MaxAgeSeconds: 3600 }] },
    ).el,
    tagsEditor(bucket),
  );
}
