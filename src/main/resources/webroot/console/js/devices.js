// Devices: search by id prefix, and one device's page: current status, derived state, a chart of its
// recent results and per-minute rollups, its alert events and history.
import { h, fill, fmtInt, fmtMs, badge, table, timeCell, facts, ago, describe, severityBadge, encodeId, api, progressBar } from './core.js';
import { HistoryChart, RollupChart } from './charts.js';

export const devicesView = {
  title: 'Devices',
  nav: 'devices',

  mount(ctx) {
    const q = ctx.query.q || '';
    let timer = null;
    const input = h('input', {
      id: 'device-q', type: 'search', value: q, placeholder: 'device id or its beginning, e.g. sim-0001', autocomplete: 'off', spellcheck: 'false',
      'aria-label': 'device id prefix',
      oninput: () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          history.replaceState(null, '', '#/devices' + (input.value.trim() ? '?q=' + encodeURIComponent(input.value.trim()) : ''));
          ctx.query.q = input.value.trim();
          ctx.refreshNow();
        }, 250);
      },
    });
    fill(ctx.root, h('section', { class: 'panel' },
      h('h1', null, 'Devices'),
      h('form', {
        class: 'search', onsubmit: ev => {
          ev.preventDefault();
          const v = input.value.trim();
          if (!v) return;
          // Enter on an exact id opens the device
          const exact = (ctx.state.found || []).find(d => d.device_id === v);
          if (exact || !(ctx.state.found || []).length) location.hash = '#/devices/' + encodeId(v);
          else ctx.refreshNow();
        },
      }, input, h('button', { type: 'submit' }, 'Open')),
      h('p', { class: 'muted small' }, 'Type the beginning of an id: devices with stored results and devices in the inventory. Enter opens the device with exactly that id.'),
      h('div', { id: 'device-results' })),
      importPanel());
    input.focus();
  },

  async refresh(ctx) {
    const q = (ctx.query.q || '').trim();
    const out = ctx.root.querySelector('#device-results');
    if (!q) {
      ctx.state.found = [];
      fill(out, h('p', { class: 'empty' }, 'Type to search.'));
      return;
    }
    let err = null;
    const r = await ctx.load('/devices?q=' + encodeURIComponent(q) + '&limit=50', { quiet: true, onError: e => { err = e; } });
    if (!ctx.alive || (ctx.query.q || '').trim() !== q) return;
    const found = r ? r.devices || [] : [];
    ctx.state.found = found;
    const openExact = found.some(d => d.device_id === q) ? null
      : h('p', null, h('a', { href: '#/devices/' + encodeId(q), id: 'open-exact' }, `Open device “${q}”`), h('span', { class: 'muted' }, ' (by its exact id, if it has sent results)'));
    fill(out,
      err ? h('p', { class: 'error-inline' }, 'Search failed: ' + describe(err)) : null,
      openExact,
      r ? table([
        { title: 'device', cell: d => h('a', { href: '#/devices/' + encodeId(d.device_id), class: 'device-link', dataset: { device: d.device_id } }, d.device_id) },
        { title: 'status', cell: d => (d.status ? badge(d.status) : h('span', { class: 'muted' }, 'no result')) },
        { title: 'last result', cell: d => (d.collected_at ? h('span', { title: d.collected_at }, ago(d.collected_at)) : '—') },
        { title: 'slot', cell: d => (d.slot_id === null || d.slot_id === undefined ? '—' : String(d.slot_id)), class: 'num' },
        { title: 'priority', cell: d => (d.priority === null || d.priority === undefined ? '—' : 'P' + d.priority), class: 'num' },
        { title: 'group', cell: d => d.probe_group || '—' },
        { title: 'check', cell: d => d.check_type || '—' },
        { title: 'profile', cell: d => d.payload_profile || '—' },
      ], found, { empty: `No device starts with “${q}” (neither in the inventory nor with a stored result).` }) : null,
      found.length >= 50 ? h('p', { class: 'muted small' }, 'First 50 shown; type more of the id.') : null);
  },
};

// ------------------------------------------------------------------ import

/** Parses a JSON array or JSON lines into device objects; throws with the line that is not JSON. */
function parseDevices(text) {
  const t = text.trim();
  if (!t) throw new Error('paste a JSON array of devices or one device object per line');
  if (t.startsWith('[')) return JSON.parse(t);
  return t.split('\n').filter(l => l.trim()).map((l, i) => {
    try {
      return JSON.parse(l);
    } catch (e) {
      throw new Error(`line ${i + 1} is not JSON: ${e.message}`);
    }
  });
}

/** Bulk import into the inventory as a job, with its progress (POST /devices/import?async=true, GET /jobs/{id}). */
function importPanel() {
  const text = h('textarea', { id: 'import-text', rows: 5, spellcheck: 'false',
    placeholder: '[{"device_id":"d1","check_type":"tcp","check_spec":{"host":"10.0.0.1","port":22},"priority":2,"interval_ms":10000}]' });
  const file = h('input', { type: 'file', accept: '.json,.jsonl,.txt', onchange: async () => {
    if (file.files.length) text.value = await file.files[0].text();
  } });
  const out = h('div', { id: 'import-status' });
  const run = async ev => {
    ev.preventDefault();
    let devices;
    try {
      devices = parseDevices(text.value);
    } catch (e) {
      fill(out, h('p', { class: 'error-inline' }, 'Not imported: ' + e.message));
      return;
    }
    try {
      const r = await api('/devices/import?async=true', { method: 'POST', body: devices });
      const rejected = r.rejected || [];
      const show = j => fill(out, progressBar('import-progress', j.percent, 'import progress'),
        h('p', { class: 'muted small' }, `${j.state}: ${fmtInt(j.done)} of ${fmtInt(j.total)} device(s) ${j.message ? '— ' + j.message : ''}`),
        rejected.length ? h('p', { class: 'error-inline' }, `${rejected.length} rejected: ` + rejected.slice(0, 5).map(x => `#${x.index} ${x.error}`).join('; ')) : null);
      show(r.job);
      const poll = async () => {
        const j = await api('/jobs/' + r.job_id);
        show(j);
        if (j.state === 'RUNNING') setTimeout(poll, 1000);
      };
      if (r.job.state === 'RUNNING') setTimeout(poll, 500);
    } catch (e) {
      fill(out, h('p', { class: 'error-inline' }, 'Import refused: ' + describe(e)));
    }
  };
  return h('section', { class: 'panel' },
    h('h2', null, 'Import devices'),
    h('p', { class: 'muted small' }, 'A JSON array or one device per line (an upsert: importing again updates). Progress is shown while it runs.'),
    h('form', { onsubmit: run }, text, h('div', null, file, h('button', { type: 'submit', id: 'import' }, 'Import'))),
    out);
}

// ------------------------------------------------------------------ one device

const DERIVED_LABELS = {
  consec_failure_count: 'consecutive failures',
  offline_state: 'offline state',
  flapping: 'flapping',
  last_states: 'last states (oldest first)',
  alerts_firing: 'alerts firing',
  last_heartbeat: 'last heartbeat',
};

function derivedValue(k, v) {
  if (v === null || v === undefined) return '—';
  if (Array.isArray(v) && v.every(x => typeof x === 'string' || typeof x === 'boolean' || typeof x === 'number') && /state/i.test(k)) {
    return h('span', { class: 'strip' }, v.map(x => {
      const up = x === 'UP' || x === true || x === 1 || x === 'U';
      return h('i', { class: up ? 'up' : 'down', title: String(x) });
    }));
  }
  if (typeof v === 'boolean') return v ? h('b', { class: 'warn-text' }, 'yes') : 'no';
  if (typeof v === 'object') return h('code', null, JSON.stringify(v));
  if (/^(HARD|SOFT|UP|DOWN)$/.test(String(v))) return badge(String(v));
  return String(v);
}

function statusOf(s) {
  return s && s.status ? String(s.status) : null;
}

export const deviceView = {
  title: ctx => 'Device ' + ctx.params.id,
  nav: 'devices',

  mount(ctx) {
    const id = ctx.params.id;
    fill(ctx.root,
      h('section', { class: 'panel' },
        h('h1', null, h('a', { href: '#/devices', class: 'crumb' }, 'Devices'), ' / ', h('span', { id: 'device-id' }, id), ' ', h('span', { id: 'device-status' }),
          ' ', h('span', { id: 'device-age', class: 'muted small' })),
        h('div', { id: 'device-facts' }, h('p', { class: 'empty' }, 'Loading…'))),
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' }, h('h2', null, 'Recent results'), h('span', { class: 'muted' }, 'latency and UP/DOWN of the newest results')),
        h('div', { id: 'history-chart', class: 'chart', 'aria-label': 'status history chart' })),
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' }, h('h2', null, 'Per minute, last hour'), h('span', { class: 'muted' }, 'results, DOWN results and state changes')),
        h('div', { id: 'rollup-chart', class: 'chart' }), h('p', { id: 'rollup-note', class: 'muted small' })),
      h('div', { class: 'columns even' },
        h('section', { class: 'panel' }, h('h2', null, 'Derived state'), h('div', { id: 'device-derived' })),
        h('section', { class: 'panel' }, h('h2', null, 'Alert events'), h('div', { id: 'device-alerts' }))),
      h('section', { class: 'panel' }, h('h2', null, 'History'), h('div', { id: 'device-history' })),
      h('section', { class: 'panel' }, h('details', null, h('summary', null, 'Current payload and inventory (raw)'), h('pre', { id: 'device-raw' }))));
    ctx.state.chart = new HistoryChart(ctx.root.querySelector('#history-chart'));
    ctx.state.rollups = new RollupChart(ctx.root.querySelector('#rollup-chart'));
    ctx.state.ticks = 0;
  },

  unmount(ctx) {
    if (ctx.state.chart) ctx.state.chart.destroy();
    if (ctx.state.rollups) ctx.state.rollups.destroy();
  },

  async refresh(ctx) {
    const id = ctx.params.id;
    const enc = encodeId(id);
    const withRollups = ctx.state.ticks++ % 5 === 0; // every 10 s: minutes change slowly
    const to = new Date();
    const from = new Date(to.getTime() - 3600_000);
    let notFound = false;
    const [d, ev, ro] = await Promise.all([
      ctx.load('/devices/' + enc + '?history=200', { quiet: true, onError: e => { if (e.status === 404) notFound = true; else ctx.errors.push(describe(e)); } }),
      ctx.load('/devices/' + enc + '/alerts'),
      withRollups ? ctx.load(`/devices/${enc}/rollups?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`) : null,
    ]);
    if (!ctx.alive) return;
    if (notFound) {
      fill(ctx.root.querySelector('#device-facts'), h('p', { class: 'error-inline', id: 'device-missing' },
        `No device “${id}” is known: it is not in the inventory and no result of it has been stored (yet). Checking again every 2 s.`));
    }
    if (d) paintDevice(ctx, d);
    if (ev) paintAlerts(ctx, ev.events || []);
    if (ro) {
      ctx.state.rollups.setWindow(from.getTime() / 1000 - 30, to.getTime() / 1000 + 30);
      paintRollups(ctx, ro.minutes || []);
    }
  },
};

function paintDevice(ctx, d) {
  const cur = d.current;
  const inv = d.inventory;
  const st = cur ? statusOf(cur.status) : null;
  fill(ctx.root.querySelector('#device-status'), st ? badge(st) : badge('NO RESULT'));
  ctx.root.querySelector('#device-status').dataset.status = st || '';
  fill(ctx.root.querySelector('#device-age'), cur ? 'last result ' + ago(cur.collected_at) : '');
  fill(ctx.root.querySelector('#device-facts'), h('div', { class: 'columns even' },
    facts([
      ['status', st ? badge(st) : 'no result yet'],
      ['collected', cur ? timeCell(cur.collected_at) : null],
      ['latency', cur && cur.status && cur.status.latency_ms !== undefined ? cur.status.latency_ms + ' ms' : null],
      ['slot', cur ? String(cur.slot_id) : null],
      ['seq · cycle', cur ? `${cur.seq} · ${cur.cycle_id}` : null],
    ]),
    facts([
      ['priority', inv ? 'P' + inv.priority : 'not in the inventory'],
      ['probe group', inv ? inv.probe_group : null],
      ['check', inv ? inv.check_type : (cur && cur.status && cur.status.check) || null],
      ['payload profile', inv ? inv.payload_profile : null],
      ['interval', inv && inv.interval_ms ? fmtMs(inv.interval_ms) : null],
    ])));

  const derived = cur && cur.derived && typeof cur.derived === 'object' ? cur.derived : null;
  const keys = derived ? [...Object.keys(DERIVED_LABELS).filter(k => k in derived), ...Object.keys(derived).filter(k => !(k in DERIVED_LABELS)).sort()] : [];
  fill(ctx.root.querySelector('#device-derived'), derived
    ? facts(keys.map(k => [DERIVED_LABELS[k] || k.replace(/_/g, ' '), derivedValue(k, derived[k])]))
    : h('p', { class: 'empty' }, 'No derived state yet.'));

  const hist = [...(d.history || [])].sort((a, b) => (a.cycle_id - b.cycle_id) || (a.seq - b.seq));
  const xs = [];
  const lat = [];
  const up = [];
  for (const r of hist) {
    const t = Date.parse(r.collected_at) / 1000;
    if (Number.isNaN(t)) continue;
    xs.push(t);
    lat.push(r.status && typeof r.status.latency_ms === 'number' ? r.status.latency_ms : null);
    const s = statusOf(r.status);
    up.push(s === 'UP' ? 1 : s === null ? null : 0);
  }
  ctx.state.chart.setData([xs, lat, up]);

  fill(ctx.root.querySelector('#device-history'), table([
    { title: 'collected', cell: r => timeCell(r.collected_at) },
    { title: 'status', cell: r => badge(statusOf(r.status)) },
    { title: 'latency', cell: r => (r.status && r.status.latency_ms !== undefined ? r.status.latency_ms + ' ms' : '—'), class: 'num' },
    { title: 'seq', cell: r => String(r.seq), class: 'num' },
    { title: 'details', cell: r => h('code', { class: 'small' }, summarise(r.status)) },
  ], [...hist].reverse(), { empty: 'No result stored yet.' }));
  fill(ctx.root.querySelector('#device-raw'), JSON.stringify({ current: cur, inventory: inv }, null, 2));
}

function summarise(status) {
  if (!status) return '';
  const rest = Object.entries(status).filter(([k]) => k !== 'status' && k !== 'latency_ms');
  const s = rest.map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ');
  return s.length > 160 ? s.slice(0, 157) + '…' : s;
}

function paintAlerts(ctx, events) {
  fill(ctx.root.querySelector('#device-alerts'), table([
    { title: 'when', cell: e => timeCell(e.event_time || e.at) },
    { title: 'alert', cell: e => e.alert_key },
    { title: 'event', cell: e => badge(e.type) },
    { title: 'severity', cell: e => severityBadge(e.severity) },
  ], events.slice(0, 20), { empty: 'No alert events.' }));
}

function paintRollups(ctx, minutes) {
  const rows = [...minutes].sort((a, b) => Date.parse(a.minute) - Date.parse(b.minute));
  ctx.state.rollups.setData([
    rows.map(m => Date.parse(m.minute) / 1000),
    rows.map(m => m.samples ?? null),
    rows.map(m => m.down ?? null),
    rows.map(m => (m.state_changes ? m.state_changes : null)),
  ]);
  const total = rows.reduce((n, m) => n + (m.samples || 0), 0);
  const down = rows.reduce((n, m) => n + (m.down || 0), 0);
  fill(ctx.root.querySelector('#rollup-note'), rows.length
    ? `${fmtInt(total)} results in ${rows.length} minute(s), ${fmtInt(down)} DOWN (${total ? Math.round(1000 * down / total) / 10 : 0} %).`
    : 'No rollup in the last hour.');
}
