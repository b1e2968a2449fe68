/** Buckets: the list, creating one (with versioning on or off) and deleting an empty one. */
import type { BucketDetails, BucketEntry, SessionInfo } from '../../../src/api/console/wire.ts';
import { api } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { href } from '../router.js';
import { confirmDialog, errorBox, loading, pageHeader, section, table, time } from '../ui.js';

/** S3's bucket naming rules, checked before asking the server (which checks them too). */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return 'A bucket name has 3 to 63 characters.';
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(name)) return 'Use lowercase letters, digits, dots and hyphens; start and end with a letter or digit.';
  if (name.includes('..') || name.includes('.-') || name.includes('-.')) return 'Dots may not be next to each other or to a hyphen.';
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return 'A bucket name may not look like an IP address.';
  if (name.startsWith('xn--') || name.startsWith('sthree-') || name.endsWith('-s3alias') || name.endsWith('--ol-s3')) return 'That prefix or suffix is reserved.';
  return undefined;
}

export function renderBuckets(main: HTMLElement, _route?: unknown, app?: { session: SessionInfo }): void {
  // what the identity's own policies allow (bucket policies and ownership may allow more; the server decides)
  const perms = app?.session.permissions ?? {};
  const canCreate = perms['s3:CreateBucket'] !== false;
  const canDelete = perms['s3:DeleteBucket'] !== false;
  const list = h('div', { id: 'bucket-list' }, loading('the buckets'));
  const result = h('div', { class: 'action-result', id: 'bucket-result' });
  const name = h('input', { id: 'bucket-name', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off', 'aria-describedby': 'bucket-name-hint', pattern: '[a-z0-9][a-z0-9.\\-]{1,61}[a-z0-9]' });
  const versioning = h('input', { id: 'bucket-versioning', type: 'checkbox' });
  const create = h(
    'form',
    { id: 'create-bucket', class: 'form form-inline', novalidate: true },
    h('p', { class: 'field' }, h('label', { for: 'bucket-name' }, 'Name'), name, h('span', { class: 'hint', id: 'bucket-name-hint' }, '3–63 lowercase letters, digits, dots and hyphens.')),
    h('p', { class: 'check' }, versioning, ' ', h('label', { for: 'bucket-versioning' }, 'Keep every version of every object (versioning)')),
    h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'create-bucket-submit' }, 'Create bucket')),
  );
  const load = async () => {
    try {
      const buckets = await api<BucketEntry[]>('GET', 'buckets');
      replaceContent(
        list,
        buckets.length === 0
          ? h('p', { class: 'muted' }, 'No buckets yet. Create one above.')
          : table(
              'Buckets',
              ['Name', 'Created', ''],
              buckets.map((b) => [
                h('a', { href: href({ page: 'bucket', bucket: b.name, prefix: '' }), class: 'bucket-link' }, b.name),
                time(b.created),
                h(
                  'button',
                  { type: 'button', class: 'button button-quiet', id: `delete-bucket-${b.name}`, disabled: !canDelete, ...(canDelete ? {} : { title: 'Your policies do not allow deleting buckets' }), onclick: () => void remove(b.name) },
                  'Delete…',
                  h('span', { class: 'visually-hidden' }, ` bucket ${b.name}`),
                ),
              ]),
              { id: 'buckets-table' },
            ),
      );
    } catch (err) {
      replaceContent(list, errorBox(err, () => void load()));
    }
  };
  const remove = async (bucket: string) => {
    const ok = await confirmDialog({
      title: `Delete bucket ${bucket}?`,
      body: 'Only an empty bucket can be deleted: delete its objects first (on a versioned bucket also every version and delete marker).',
      confirmLabel: 'Delete bucket',
      danger: true,
      typeToConfirm: bucket,
    });
    if (!ok) return;
    try {
      await api('DELETE', `buckets/${encodeURIComponent(bucket)}`);
      result.replaceChildren(h('p', { role: 'status', class: 'success' }, `Bucket ${bucket} deleted.`));
      announce(`Bucket ${bucket} deleted.`);
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
    await load();
  };
  create.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const n = name.value.trim();
    const problem = bucketNameProblem(n);
    if (problem !== undefined) {
      name.setAttribute('aria-invalid', 'true');
      result.replaceChildren(h('div', { class: 'error-box', role: 'alert' }, h('p', null, h('strong', null, 'Invalid name: '), problem), h('p', null, h('strong', null, 'What to do: '), 'Change the name and try again.')));
      name.focus();
      return;
    }
    name.removeAttribute('aria-invalid');
    void (async () => {
      try {
        const b = await api<BucketDetails>('POST', 'buckets', { name: n, versioning: versioning.checked });
        result.replaceChildren(h('p', { role: 'status', class: 'success' }, `Bucket ${b.name} created${b.versioning === 'Enabled' ? ' with versioning' : ''}. `, h('a', { href: href({ page: 'bucket', bucket: b.name, prefix: '' }) }, `Open ${b.name}`)));
        announce(`Bucket ${b.name} created.`);
        name.value = '';
        await load();
      } catch (err) {
        result.replaceChildren(errorBox(err));
      }
    })();
  });
  main.replaceChildren(pageHeader('Buckets', canCreate ? 'Create, open and delete buckets.' : 'Open the buckets you may read.'), ...(canCreate ? [section('Create a bucket', 'create-title', create, result)] : [result]), section('All buckets', 'list-title', list));
  void load();
}
