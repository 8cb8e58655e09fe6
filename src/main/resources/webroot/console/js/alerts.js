// Alerts: current alerts (ACTIVE by default), most severe first, with acknowledgement.
import { h, fill, badge, table, timeCell, ago, severityBadge, api, describe, notify, encodeId, SEVERITY } from './core.js';

const STATES = ['ACTIVE', 'RESOLVED', 'all'];

function go(ctx, change) {
  const q = { state: ctx.query.state || 'ACTIVE', min: ctx.query.min || '0', ...change };
  const qs = new URLSearchParams();
  if (q.state !== 'ACTIVE') qs.set('state', q.state);
  if (q.min !== '0') qs.set('min', q.min);
  location.hash = '#/alerts' + (qs.toString() ? '?' + qs : '');
}

export default {
  title: 'Alerts',
  nav: 'alerts',

  mount(ctx) {
    const state = STATES.includes(ctx.query.state) ? ctx.query.state : 'ACTIVE';
    const min = /^[0-4]$/.test(ctx.query.min || '') ? ctx.query.min : '0';
    ctx.state.filterText = '';
    fill(ctx.root, h('section', { class: 'panel' },
      h('div', { class: 'panel-head' },
        h('h1', null, 'Alerts ', h('span', { id: 'alert-count', class: 'muted' })),
        h('div', { class: 'filters' },
          h('div', { class: 'segmented', role: 'group', 'aria-label': 'alert state' },
            STATES.map(s => h('button', { type: 'button', class: 'seg' + (s === state ? ' on' : ''), 'aria-pressed': String(s === state), dataset: { filterState: s },
              onclick: () => go(ctx, { state: s }) }, s))),
          h('label', null, 'severity at least ',
            h('select', { id: 'alert-min', onchange: ev => go(ctx, { min: ev.target.value }) },
              SEVERITY.map((name, i) => h('option', { value: String(i), selected: String(i) === min }, `${i} ${name}`)))),
          h('input', { type: 'search', id: 'alert-filter', placeholder: 'filter by device or alert', 'aria-label': 'filter',
            oninput: ev => { ctx.state.filterText = ev.target.value.trim().toLowerCase(); if (ctx.state.last) paint(ctx, ctx.state.last); } }))),
      h('div', { id: 'alerts' }, h('p', { class: 'empty' }, 'Loading…'))));
    ctx.state.query = { state, min };
  },

  async refresh(ctx) {
    const { state, min } = ctx.state.query;
    const r = await ctx.load(`/alerts?state=${encodeURIComponent(state)}&min_severity=${min}&limit=1000`);
    if (!r || !ctx.alive) return;
    ctx.state.last = r.alerts || [];
    if (!ctx.state.acking) paint(ctx, ctx.state.last);
  },
};

function paint(ctx, all) {
  const f = ctx.state.filterText;
  const rows = f ? all.filter(a => String(a.device_id).toLowerCase().includes(f) || String(a.alert_key).toLowerCase().includes(f)) : all;
  fill(ctx.root.querySelector('#alert-count'), rows.length === all.length ? `(${all.length})` : `(${rows.length} of ${all.length})`);
  fill(ctx.root.querySelector('#alerts'), table([
    { title: 'severity', cell: a => severityBadge(a.severity) },
    { title: 'device', cell: a => h('a', { href: '#/devices/' + encodeId(a.device_id), class: 'device-link' }, a.device_id) },
    { title: 'alert', cell: a => a.alert_key },
    { title: 'state', cell: a => badge(a.state) },
    { title: 'first fired', cell: a => [timeCell(a.first_fired_at), h('div', { class: 'muted small' }, ago(a.first_fired_at))] },
    { title: 'last event', cell: a => timeCell(a.last_event_at) },
    { title: 'acknowledged', cell: a => ackCell(ctx, a) },
  ], rows, {
    empty: ctx.state.query.state === 'ACTIVE' ? 'No active alert.' : 'No alert matches.',
    rowAttrs: a => ({ class: 'sevrow' + a.severity + (a.state === 'ACTIVE' ? '' : ' dim'), dataset: { device: a.device_id, alertKey: a.alert_key, state: a.state } }),
  }));
}

const keyOf = a => a.device_id + '\u0000' + a.alert_key;

function ackCell(ctx, a) {
  if (a.acked_at) {
    return h('span', { class: 'acked', title: a.acked_at }, `by ${a.acked_by || '?'} `, h('span', { class: 'muted small' }, ago(a.acked_at)),
      a.ack_note ? h('div', { class: 'small' }, '“' + a.ack_note + '”') : null);
  }
  if (a.state !== 'ACTIVE') return h('span', { class: 'muted' }, '—');
  if (ctx.state.acking === keyOf(a)) {
    // the note form: the table is not repainted while it is open
    const note = h('input', { type: 'text', class: 'ack-note', placeholder: 'note (optional)', maxlength: '500', 'aria-label': 'acknowledgement note' });
    const send = async () => {
      form.querySelectorAll('button, input').forEach(x => { x.disabled = true; });
      try {
        const body = note.value.trim() ? { note: note.value.trim() } : {};
        await api(`/alerts/${encodeId(a.device_id)}/${encodeId(a.alert_key)}/ack`, { method: 'POST', body });
        notify(`Acknowledged ${a.alert_key} on ${a.device_id}.`, 'ok');
      } catch (e) {
        notify(`Could not acknowledge ${a.alert_key} on ${a.device_id}: ${describe(e)}`, 'error');
      }
      ctx.state.acking = null;
      ctx.refreshNow();
    };
    const form = h('form', { class: 'ack-form', onsubmit: ev => { ev.preventDefault(); send(); } },
      note, h('button', { type: 'submit', class: 'ack-confirm' }, 'Ack'),
      h('button', { type: 'button', class: 'link ack-cancel', onclick: () => { ctx.state.acking = null; paint(ctx, ctx.state.last); } }, 'cancel'));
    setTimeout(() => note.focus(), 0);
    return form;
  }
  return h('button', {
    type: 'button', class: 'ack', dataset: { device: a.device_id, alertKey: a.alert_key },
    onclick: () => { ctx.state.acking = keyOf(a); paint(ctx, ctx.state.last); },
  }, 'Ack…');
}
