// Dead letters: what was set aside and why, replay (selected or every pending one) with the replay
// job's live progress, and discard.
import { h, fill, fmtInt, badge, table, timeCell, progressBar, api, describe, notify, $ } from './core.js';

const STATES = ['PENDING', 'REPLAYED', 'DISCARDED', 'all'];
const JOB_KEY = 'console.deadletters.job';

function savedJob() {
  try { return sessionStorage.getItem(JOB_KEY); } catch (e) { return null; }
}

function saveJob(id) {
  try {
    if (id === null) sessionStorage.removeItem(JOB_KEY); else sessionStorage.setItem(JOB_KEY, String(id));
  } catch (e) { /* storage may be disabled */ }
}

export default {
  title: 'Dead letters',
  nav: 'dead-letters',

  interval: ctx => (ctx.state.job && ctx.state.job.state === 'RUNNING') || ctx.state.jobStarting ? 1000 : 2000,

  mount(ctx) {
    const state = STATES.includes(ctx.query.state) ? ctx.query.state : 'PENDING';
    ctx.state.query = state;
    ctx.state.selected = new Map(); // String(id) -> id
    ctx.state.jobId = savedJob();
    fill(ctx.root,
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' },
          h('h1', null, 'Dead letters ', h('span', { id: 'dl-count', class: 'muted' })),
          h('div', { class: 'segmented', role: 'group', 'aria-label': 'dead letter state' },
            STATES.map(s => h('button', { type: 'button', class: 'seg' + (s === state ? ' on' : ''), 'aria-pressed': String(s === state), dataset: { filterState: s },
              onclick: () => { location.hash = '#/dead-letters' + (s === 'PENDING' ? '' : '?state=' + s); } }, s)))),
        h('p', { class: 'muted small' }, 'Messages a worker could not store (malformed, oversized, unknown schema, unreadable payload, or past the delivery limit). Replay publishes them to their slot queue again; discard marks them as dealt with.'),
        h('div', { class: 'actions' },
          h('button', { type: 'button', id: 'replay-selected', disabled: true, onclick: () => replay(ctx, 'selected') }, 'Replay selected'),
          h('button', { type: 'button', id: 'replay-all', onclick: () => confirmAll(ctx) }, 'Replay all pending…'),
          h('button', { type: 'button', id: 'discard-selected', class: 'danger', disabled: true, onclick: () => confirmDiscard(ctx) }, 'Discard selected…')),
        h('div', { id: 'dl-confirm', class: 'confirm', hidden: true }),
        h('div', { id: 'replay-panel', class: 'drain-panel', hidden: true },
          h('div', { class: 'panel-head' }, h('h2', { id: 'replay-title' }, 'Replay'),
            h('button', { type: 'button', class: 'link', id: 'replay-hide', onclick: () => { saveJob(null); ctx.state.jobId = null; ctx.state.job = null; $('#replay-panel', ctx.root).hidden = true; } }, 'hide')),
          h('div', { id: 'replay-slot' }), h('p', { id: 'replay-detail' }))),
      h('section', { class: 'panel' }, h('div', { id: 'dead-letters' }, h('p', { class: 'empty' }, 'Loading…'))));
  },

  async refresh(ctx) {
    const [r, job] = await Promise.all([
      ctx.load('/dead-letters?state=' + encodeURIComponent(ctx.state.query)),
      ctx.state.jobId ? ctx.load('/jobs/' + encodeURIComponent(ctx.state.jobId), { quiet: true, onError: e => {
        if (e.status === 404) { saveJob(null); ctx.state.jobId = null; } else ctx.errors.push(describe(e));
      } }) : null,
    ]);
    if (!ctx.alive) return;
    if (job) {
      ctx.state.job = job;
      ctx.state.jobStarting = false;
      paintJob(ctx, job);
    } else if (!ctx.state.jobId) {
      $('#replay-panel', ctx.root).hidden = true;
    }
    if (r) paintTable(ctx, r.dead_letters || []);
  },
};

function paintJob(ctx, j) {
  $('#replay-panel', ctx.root).hidden = false;
  fill($('#replay-title', ctx.root), `${j.kind === 'discard' ? 'Discard' : 'Replay'} job ${j.id} `, badge(j.state, { id: 'replay-state' }));
  fill($('#replay-slot', ctx.root), progressBar('replay-progress', j.state === 'DONE' && !j.total ? 100 : j.percent, 'replay progress'));
  const counts = `${fmtInt(j.done)} of ${fmtInt(j.total)} message(s)`;
  fill($('#replay-detail', ctx.root),
    j.state === 'RUNNING' ? `${counts} done so far.` : j.state === 'DONE' ? h('b', { class: 'ok-text' }, `Done: ${counts}.`) : h('b', { class: 'bad-text' }, `Failed after ${counts}.`),
    j.message ? ' ' + j.message : '');
}

function paintTable(ctx, rows) {
  const sel = ctx.state.selected;
  const pending = rows.filter(d => d.state === 'PENDING');
  // forget selections that are no longer pending
  const pendingIds = new Set(pending.map(d => String(d.id)));
  for (const k of [...sel.keys()]) if (!pendingIds.has(k)) sel.delete(k);
  fill($('#dl-count', ctx.root), `(${fmtInt(rows.length)})`);
  const allBox = h('input', {
    type: 'checkbox', id: 'dl-select-all', 'aria-label': 'select every pending one shown', disabled: !pending.length,
    onchange: ev => {
      pending.forEach(d => { if (ev.target.checked) sel.set(String(d.id), d.id); else sel.delete(String(d.id)); });
      paintTable(ctx, rows);
    },
  });
  allBox.checked = pending.length > 0 && pending.every(d => sel.has(String(d.id)));
  const t = table([
    { title: allBox, cell: d => d.state === 'PENDING' ? h('input', {
      type: 'checkbox', class: 'dl-select', dataset: { id: d.id }, checked: sel.has(String(d.id)), 'aria-label': 'select ' + d.id,
      onchange: ev => { if (ev.target.checked) sel.set(String(d.id), d.id); else sel.delete(String(d.id)); updateButtons(ctx); },
    }) : '' },
    { title: 'when', cell: d => timeCell(d.at) },
    { title: 'reason', cell: d => h('b', null, d.reason || '—') },
    { title: 'detail', cell: d => h('span', { class: 'detail', title: d.detail || '' }, d.detail && d.detail.length > 140 ? d.detail.slice(0, 137) + '…' : (d.detail || '—')) },
    { title: 'queue', cell: d => h('code', null, d.queue || '—') },
    { title: 'routing key', cell: d => h('code', null, d.routing_key || '—') },
    { title: 'state', cell: d => [badge(d.state), d.handled_by ? h('div', { class: 'muted small', title: d.handled_at || '' }, 'by ' + d.handled_by) : null] },
  ], rows, { empty: ctx.state.query === 'PENDING' ? 'No dead letter is pending.' : 'None.', rowAttrs: d => ({ dataset: { id: d.id, state: d.state } }) });
  fill($('#dead-letters', ctx.root), t);
  ctx.state.pendingCount = pending.length;
  updateButtons(ctx);
}

function updateButtons(ctx) {
  const n = ctx.state.selected.size;
  const busy = ctx.state.job && ctx.state.job.state === 'RUNNING';
  const rs = $('#replay-selected', ctx.root);
  const ds = $('#discard-selected', ctx.root);
  rs.disabled = !n || busy;
  ds.disabled = !n || busy;
  rs.textContent = n ? `Replay selected (${n})` : 'Replay selected';
  ds.textContent = n ? `Discard selected (${n})…` : 'Discard selected…';
  $('#replay-all', ctx.root).disabled = busy || (ctx.state.query === 'PENDING' && !ctx.state.pendingCount);
}

function confirmBox(ctx, text, label, id, action) {
  const box = $('#dl-confirm', ctx.root);
  fill(box, h('p', null, text),
    h('button', { type: 'button', id, class: 'danger', onclick: () => { box.hidden = true; action(); } }, label), ' ',
    h('button', { type: 'button', id: 'dl-cancel', onclick: () => { box.hidden = true; } }, 'Cancel'));
  box.hidden = false;
  $('#dl-cancel', box).focus();
}

function confirmAll(ctx) {
  confirmBox(ctx, h('span', null, h('b', null, 'Replay every pending dead letter?'),
    ' Each is published to its slot queue again; the ones that fail again come back here.'), 'Replay all pending', 'replay-all-confirm', () => replay(ctx, 'all'));
}

function confirmDiscard(ctx) {
  const n = ctx.state.selected.size;
  confirmBox(ctx, h('span', null, h('b', null, `Discard ${n} dead letter(s)?`), ' They are marked DISCARDED and will not be replayed.'),
    `Discard ${n}`, 'discard-confirm', () => discard(ctx));
}

async function replay(ctx, which) {
  const ids = which === 'all' ? null : [...ctx.state.selected.values()];
  try {
    const r = await api('/dead-letters/replay', { method: 'POST', body: ids ? { ids } : {} });
    ctx.state.selected.clear();
    if (r && r.job_id !== undefined && r.job_id !== null) {
      ctx.state.jobId = String(r.job_id);
      ctx.state.jobStarting = true;
      saveJob(ctx.state.jobId);
      paintJob(ctx, { id: r.job_id, kind: 'replay', state: 'RUNNING', total: ids ? ids.length : null, done: 0, percent: 0 });
    } else {
      notify('Replay accepted.', 'ok');
    }
  } catch (e) {
    notify('Replay refused: ' + describe(e), 'error');
  }
  ctx.refreshNow();
}

async function discard(ctx) {
  const ids = [...ctx.state.selected.values()];
  try {
    const r = await api('/dead-letters/discard', { method: 'POST', body: { ids } });
    ctx.state.selected.clear();
    if (r && r.job_id !== undefined && r.job_id !== null) {
      ctx.state.jobId = String(r.job_id);
      saveJob(ctx.state.jobId);
    } else {
      notify(`Discarded ${ids.length} dead letter(s).`, 'ok');
    }
  } catch (e) {
    notify('Discard refused: ' + describe(e), 'error');
  }
  ctx.refreshNow();
}
