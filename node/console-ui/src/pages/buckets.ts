/** Buckets: the list, creating one (with versioning on or off) and deleting an empty one. */
import type { BucketDetails, BucketEntry, BucketUsageView, SessionInfo } from '../../../src/api/console/wire.ts';
import { formatBytes, formatCount, plural } from '../format.js';
import { api } from '../api.js';
import { announce, h, replaceContent } from '../dom.js';
import { href } from '../router.js';
import { checkRow, confirmDialog, errorBox, loading, pageHeader, section, table, time } from '../ui.js';

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
  const objectLock = h('input', { id: 'bucket-object-lock', type: 'checkbox', 'aria-describedby': 'bucket-object-lock-hint' });
  const quota = h('input', { id: 'bucket-quota', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '10GiB', 'aria-describedby': 'bucket-quota-hint' });
  objectLock.addEventListener('change', () => {
    // object lock needs versioning, for good
    if (objectLock.checked) versioning.checked = true;
    versioning.disabled = objectLock.checked;
  });
  const create = h(
    'form',
    { id: 'create-bucket', class: 'form form-inline', novalidate: true },
    h('p', { class: 'field' }, h('label', { for: 'bucket-name' }, 'Name'), name, h('span', { class: 'hint', id: 'bucket-name-hint' }, '3–63 lowercase letters, digits, dots and hyphens.')),
    checkRow(versioning, 'Keep every version of every object (versioning)'),
    checkRow(objectLock, 'Object lock', 'Versions can be kept from deletion (retention, legal holds). Turns versioning on for good; cannot be turned off later.'),
    h('p', { class: 'field' }, h('label', { for: 'bucket-quota' }, 'Quota (optional)'), quota, h('span', { class: 'hint', id: 'bucket-quota-hint' }, 'A hard limit on the bytes stored, e.g. 10GiB or 500MB; empty for none.')),
    h('p', null, h('button', { type: 'submit', class: 'button button-primary', id: 'create-bucket-submit' }, 'Create bucket')),
  );
  // the scanner's count of each bucket (admin identities; others see the names only)
  const usage = api<BucketUsageView>('GET', 'bucket-usage').catch(() => undefined);
  const filter = h('input', { type: 'search', id: 'bucket-filter', autocomplete: 'off', spellcheck: 'false', placeholder: 'part of a name' });
  filter.addEventListener('input', () => void load());
  const load = async () => {
    try {
      const [all, u] = await Promise.all([api<BucketEntry[]>('GET', 'buckets'), usage]);
      const words = filter.value.trim().toLowerCase();
      const buckets = words === '' ? all : all.filter((b) => b.name.includes(words));
      const counted = (name: string) => u?.buckets[name];
      replaceContent(
        list,
        h('form', { class: 'form-inline', role: 'search', onsubmit: (ev: Event) => ev.preventDefault() }, h('label', { for: 'bucket-filter' }, 'Filter'), filter, h('span', { class: 'muted', id: 'bucket-count' }, `${buckets.length} of ${plural(all.length, 'bucket')}`)),
        all.length === 0
          ? h('p', { class: 'muted' }, 'No buckets yet. Create one above.')
          : table(
              'Buckets',
              ['Name', 'Objects', 'Size', 'Created', ''],
              buckets.map((b) => [
                h('a', { href: href({ page: 'bucket', bucket: b.name, prefix: '' }), class: 'bucket-link' }, b.name),
                h('span', { class: 'bucket-objects' }, counted(b.name) ? formatCount(counted(b.name)!.objects) : '–'),
                h('span', { class: 'bucket-size' }, counted(b.name) ? formatBytes(counted(b.name)!.size) : '–'),
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
        u === undefined
          ? null
          : h('p', { class: 'hint', id: 'bucket-usage-note' }, u.lastUpdate === '' || u.lastUpdate.startsWith('0001') ? 'Objects and sizes: not counted yet (the scanner has not finished a cycle).' : h('span', null, 'Objects and sizes as the scanner counted them at ', time(u.lastUpdate), '; writes since then are not in them.')),
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
        const b = await api<BucketDetails>('POST', 'buckets', { name: n, versioning: versioning.checked, objectLock: objectLock.checked, quota: quota.value.trim() === '' ? null : quota.value.trim() });
        const with_ = [objectLock.checked ? 'object lock' : b.versioning === 'Enabled' ? 'versioning' : '', quota.value.trim() !== '' ? `a quota of ${quota.value.trim()}` : ''].filter((x) => x !== '');
        result.replaceChildren(h('p', { role: 'status', class: 'success' }, `Bucket ${b.name} created${with_.length > 0 ? ` with ${with_.join(' and ')}` : ''}. `, h('a', { href: href({ page: 'bucket', bucket: b.name, prefix: '' }) }, `Open ${b.name}`)));
        quota.value = '';
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
