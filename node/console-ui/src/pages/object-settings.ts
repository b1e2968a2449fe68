/**
 * One object's settings on its page: tags, legal hold and retention (with
 * the governance bypass where the identity may use it), and a preview of
 * images, text and PDF. Previews come from the console's `preview` route,
 * which answers only those types, inline but sandboxed (no script of the
 * object can run, in the console's origin or anywhere); text is read and
 * shown as text, never as markup.
 */
import type { ObjectDetails, ObjectTag } from '../../../src/api/console/wire.ts';
import { api, apiUrl } from '../api.js';
import { h } from '../dom.js';
import { formatBytes, keyValueLines } from '../format.js';
import { confirmDialog, errorBox, showDone } from '../ui.js';

export function tagsEditor(bucket: string, key: string): HTMLElement {
  const b = encodeURIComponent(bucket);
  // Off until the current tags are in: typed earlier, an edit would be replaced by them when they
  // arrive, and saving would then write the old tags (or none) while the user meant theirs.
  const lines = h('textarea', { id: 'object-tags', rows: 3, spellcheck: 'false', 'aria-describedby': 'object-tags-hint', disabled: true });
  const save = h('button', { type: 'submit', class: 'button', id: 'object-tags-save', disabled: true }, 'Save tags');
  const out = h('div', { class: 'action-result', id: 'object-tags-result' });
  const form = h(
    'form',
    { class: 'form', id: 'object-tags-form' },
    h('label', { for: 'object-tags' }, 'Tags of the current version, one key=value a line'),
    lines,
    h('p', { class: 'hint', id: 'object-tags-hint' }, 'Up to 10 tags. Lifecycle rules and policies can select objects by tag.'),
    save,
    out,
  );
  const show = (tags: readonly ObjectTag[]) => {
    lines.value = tags.map((t) => `${t.key}=${t.value}`).join('\n');
  };
  // A load that failed leaves the editor off: saving replaces the whole tag set, unseen tags included.
  void api<ObjectTag[]>('GET', `buckets/${b}/object/tags`, undefined, { key }).then(
    (tags) => {
      show(tags);
      lines.disabled = false;
      save.disabled = false;
    },
    (err: unknown) => out.replaceChildren(errorBox(err)),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const tags = keyValueLines(lines.value);
    void api<ObjectTag[]>('PUT', `buckets/${b}/object/tags`, { tags }, { key }).then(
      (t) => {
        show(t);
        showDone(out, t.length === 0 ? 'Tags removed.' : `${t.length} tag${t.length === 1 ? '' : 's'} saved.`);
      },
      (err: unknown) => out.replaceChildren(errorBox(err)),
    );
  });
  return form;
}

/** `2026-12-31T23:59` in the browser's zone, for a datetime-local field. */
function localInput(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function lockEditor(bucket: string, key: string, d: ObjectDetails, refresh: () => void): HTMLElement {
  const b = encodeURIComponent(bucket);
  const out = h('div', { class: 'action-result', id: 'object-lock-result' });
  let legalHold = d.legalHold;
  const hold = h('button', { type: 'button', class: 'button', id: 'legal-hold-toggle' }, legalHold ? 'Remove legal hold…' : 'Place a legal hold');
  hold.addEventListener('click', () => {
    void (async () => {
      const on = !legalHold;
      if (!on && !(await confirmDialog({ title: `Remove the legal hold of ${key}?`, body: 'Without it, this version can be deleted again once no retention keeps it.', confirmLabel: 'Remove legal hold', danger: true }))) return;
      try {
        const r = await api<{ legalHold: boolean }>('PUT', `buckets/${b}/object/legal-hold`, { on }, { key, versionId: d.versionId || undefined });
        legalHold = r.legalHold;
        hold.textContent = legalHold ? 'Remove legal hold…' : 'Place a legal hold';
        showDone(out, on ? 'Legal hold placed: this version cannot be deleted until it is removed.' : 'Legal hold removed.');
        refresh();
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    })();
  });
  const mode = h('select', { id: 'retention-mode' }, h('option', { value: '' }, 'None'), h('option', { value: 'GOVERNANCE' }, 'GOVERNANCE'), h('option', { value: 'COMPLIANCE' }, 'COMPLIANCE'));
  mode.value = d.retention?.mode ?? '';
  const until = h('input', { type: 'datetime-local', id: 'retention-until', value: d.retention ? localInput(d.retention.until) : '' });
  const bypass = h('input', { type: 'checkbox', id: 'retention-bypass' });
  const form = h(
    'form',
    { class: 'form-inline', id: 'retention-form' },
    h('label', { for: 'retention-mode' }, 'Retention'),
    mode,
    h('label', { for: 'retention-until' }, 'until'),
    until,
    h('span', { class: 'check' }, bypass, ' ', h('label', { for: 'retention-bypass' }, 'Bypass governance retention')),
    h('button', { type: 'submit', class: 'button', id: 'retention-save' }, 'Save retention'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      const m = mode.value;
      if (m !== '' && until.value === '') {
        until.focus();
        return;
      }
      const iso = m === '' ? null : new Date(until.value).toISOString();
      if (m === 'COMPLIANCE' && !(await confirmDialog({ title: 'Set COMPLIANCE retention?', body: `No one, the root included, can delete this version or shorten its retention before ${new Date(iso!).toLocaleString()}.`, confirmLabel: 'Set COMPLIANCE retention', danger: true }))) return;
      try {
        await api('PUT', `buckets/${b}/object/retention`, { mode: m === '' ? null : m, until: iso, bypassGovernance: bypass.checked }, { key, versionId: d.versionId || undefined });
        showDone(out, m === '' ? 'Retention removed.' : `Retention set: ${m} until ${new Date(iso!).toLocaleString()}.`);
        refresh();
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    })();
  });
  return h(
    'div',
    { id: 'object-lock-box' },
    h('p', { class: 'hint' }, 'A GOVERNANCE retention can be shortened or removed with the bypass (by users allowed s3:BypassGovernanceRetention); a COMPLIANCE one can only be extended.'),
    form,
    h('p', { class: 'button-row' }, hold),
    out,
  );
}

const IMAGE = /^image\/(png|jpeg|gif|webp|avif|bmp|svg\+xml)$/;
const TEXT = /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-ndjson)$)/;
const TEXT_LIMIT = 256 * 1024;

/** What the object looks like, when it is an image, text or a PDF. */
export function preview(bucket: string, key: string, d: ObjectDetails): HTMLElement | null {
  const type = d.contentType.split(';')[0]!.trim().toLowerCase();
  const src = apiUrl(`buckets/${encodeURIComponent(bucket)}/preview`, { key, versionId: d.versionId || undefined });
  if (IMAGE.test(type)) return h('div', { id: 'object-preview' }, h('img', { src, alt: `Preview of ${key}`, class: 'preview-image', id: 'preview-image' }));
  if (type === 'application/pdf') return h('div', { id: 'object-preview' }, h('iframe', { src, title: `Preview of ${key}`, sandbox: '', class: 'preview-frame', id: 'preview-frame', referrerpolicy: 'no-referrer' }));
  if (TEXT.test(type)) {
    const pre = h('pre', { class: 'preview-text', id: 'preview-text', tabindex: '0' }, 'Loading…');
    void fetch(src, { credentials: 'same-origin', headers: { range: `bytes=0-${TEXT_LIMIT - 1}` } }).then(
      async (r) => {
        if (!r.ok && r.status !== 206) throw new Error(`the preview answered ${r.status}`);
        pre.textContent = await r.text();
      },
      (err: unknown) => pre.replaceWith(errorBox(err)),
    );
    return h('div', { id: 'object-preview' }, pre, d.size > TEXT_LIMIT ? h('p', { class: 'hint' }, `The first ${formatBytes(TEXT_LIMIT)} of ${formatBytes(d.size)}.`) : null);
  }
  return null;
}
