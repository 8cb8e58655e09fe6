// Overview: cluster figures, results/s trend, the slot grid (owner and state, or backlog, or lag),
// workers, the slots with the most backlog and lag, and the probes' outboxes.
import { h, fill, fmtInt, fmtRate, fmtMs, describe, badge, table, setOwners, ownerColour, timeCell } from './core.js';
import { workersTable } from './workers.js';
import { TrendChart } from './charts.js';

const TRANSITION = new Set(['MOVING', 'DRAINING_OLD', 'LOADING_NEW']);
const STATES = ['ACTIVE', 'MOVING', 'DRAINING_OLD', 'LOADING_NEW', 'ORPHANED', 'FREE'];
const MODES = { owner: 'owner and state', backlog: 'backlog', lag: 'lag' };

// results/s and backlog as seen by this page, kept while the console is open (10 minutes)
const trend = { t: [], rps: [], backlog: [] };
const TREND_POINTS = 300;

let mode = 'owner';
try {
  mode = localStorage.getItem('console.grid.mode') || 'owner';
  if (!MODES[mode]) mode = 'owner';
} catch (e) { /* storage may be disabled */ }

export default {
  title: 'Overview',
  nav: 'overview',

  mount(ctx) {
    const modeButtons = Object.entries(MODES).map(([k, label]) => h('button', {
      type: 'button', class: 'seg' + (k === mode ? ' on' : ''), dataset: { mode: k }, 'aria-pressed': String(k === mode),
      onclick: () => {
        mode = k;
        try { localStorage.setItem('console.grid.mode', k); } catch (e) { /* ignore */ }
        ctx.root.querySelectorAll('[data-mode]').forEach(b => { b.classList.toggle('on', b.dataset.mode === k); b.setAttribute('aria-pressed', String(b.dataset.mode === k)); });
        if (ctx.state.slots) paintGrid(ctx, ctx.state.slots);
      },
    }, label));
    fill(ctx.root,
      h('div', { id: 'cards', class: 'cards' }),
      h('div', { class: 'columns' },
        h('section', { class: 'panel grid-panel' },
          h('div', { class: 'panel-head' }, h('h2', null, 'Slots'), h('span', { id: 'slot-summary', class: 'muted' }),
            h('div', { class: 'segmented', role: 'group', 'aria-label': 'colour the slots by' }, h('span', { class: 'muted' }, 'colour by '), modeButtons)),
          h('div', { id: 'slot-grid', class: 'slot-grid', 'aria-label': 'slot grid' }),
          h('div', { id: 'grid-legend', class: 'legend' }),
          h('p', { id: 'slot-detail', class: 'slot-detail muted' }, 'Point at a slot for its owner, epoch, backlog and lag; click it for its lease history.'),
          h('div', { id: 'slot-history' })),
        h('div', { class: 'side' },
          h('section', { class: 'panel' }, h('div', { class: 'panel-head' }, h('h2', null, 'Results per second and backlog'),
            h('span', { class: 'muted' }, 'since this page opened')), h('div', { id: 'trend-chart', class: 'chart' })),
          h('section', { class: 'panel' }, h('div', { class: 'panel-head' }, h('h2', null, 'Workers'), h('a', { href: '#/workers' }, 'all workers')),
            h('div', { id: 'workers' })),
          h('section', { class: 'panel' }, h('h2', null, 'Busiest slots'), h('div', { id: 'hot-slots' })),
          h('section', { class: 'panel' }, h('h2', null, 'Probes'), h('div', { id: 'probes' })))));
    ctx.state.trend = new TrendChart(ctx.root.querySelector('#trend-chart'), [
      { label: 'results/s', stroke: '#3fbf6f', scale: 'rps' },
      { label: 'backlog', stroke: '#f5a524', scale: 'backlog' },
    ]);
    ctx.state.trend.setData([trend.t, trend.rps, trend.backlog]);
  },

  unmount(ctx) {
    if (ctx.state.trend) ctx.state.trend.destroy();
  },

  async refresh(ctx) {
    let probeError = null;
    const [o, s, w, p, shed, map] = await Promise.all([
      ctx.load('/overview'),
      ctx.load('/slots'),
      ctx.load('/workers'),
      ctx.load('/probes', { quiet: true, onError: e => { probeError = e; } }),
      ctx.load('/shed', { quiet: true }),
      ctx.load('/slot-map', { quiet: true }),
    ]);
    if (!ctx.alive) return;
    const slots = s ? s.slots || [] : null;
    const workers = w ? w.workers || [] : null;
    if (workers) setOwners(workers.map(x => x.worker_id));
    if (slots) {
      setOwners([...(workers || []).map(x => x.worker_id), ...slots.map(x => x.owner)]);
      ctx.state.slots = slots;
      paintGrid(ctx, slots);
      paintHotSlots(ctx, slots);
    }
    paintCards(ctx, o, slots, workers, shed, map);
    if (o) addTrend(o);
    ctx.state.trend.setData([trend.t, trend.rps, trend.backlog]);
    if (workers) fill(ctx.root.querySelector('#workers'), workersTable(workers, { compact: true }));
    paintProbes(ctx, p, probeError);
    if (ctx.state.pinned !== undefined && ctx.state.pinned !== null) await loadSlotHistory(ctx);
  },
};

function addTrend(o) {
  const now = Date.now() / 1000;
  const last = trend.t.length ? trend.t[trend.t.length - 1] : null;
  if (last !== null && now - last > 6) {
    // the page was away: break the line instead of drawing across the gap
    trend.t.push(last + 0.001);
    trend.rps.push(null);
    trend.backlog.push(null);
  }
  trend.t.push(now);
  trend.rps.push(o.results_per_s ?? null);
  trend.backlog.push(o.backlog_total ?? null);
  while (trend.t.length > TREND_POINTS) {
    trend.t.shift();
    trend.rps.shift();
    trend.backlog.shift();
  }
}

function card(key, label, value, { tone, href, title, sub, text } = {}) {
  const body = [h('div', { class: 'card-label' }, label), h('div', { class: 'card-value' + (text ? ' text' : ''), dataset: { value: key } }, value),
    sub ? h('div', { class: 'card-sub' }, sub) : null];
  return href
    ? h('a', { class: 'card' + (tone ? ' ' + tone : ''), href, dataset: { card: key }, title }, body)
    : h('div', { class: 'card' + (tone ? ' ' + tone : ''), dataset: { card: key }, title }, body);
}

function paintCards(ctx, o, slots, workers, shed, map) {
  const el = ctx.root.querySelector('#cards');
  if (!o && !slots && !workers) return; // keep the last figures; the banner says why
  const notActive = slots ? slots.filter(x => x.state !== 'ACTIVE').length : null;
  const total = o ? o.slots_total : slots ? slots.length : null;
  const active = o ? o.workers_active : workers ? workers.filter(x => x.state === 'ACTIVE').length : null;
  const backlog = o ? o.backlog_total : null;
  fill(el,
    card('leader', 'Leader', o ? (o.leader_id || 'none') : '—', { tone: o && !o.leader_id ? 'bad' : null, title: o ? `term ${o.term}` : null, text: true }),
    card('term', 'Term', o ? fmtInt(o.term) : '—'),
    fleetCard(o && o.fleet_mode),
    card('slots', 'Slots', total === null ? '—' : fmtInt(total),
      { tone: notActive ? 'warn' : null, sub: notActive ? `${fmtInt(notActive)} not ACTIVE` : null }),
    card('workers', 'Workers active', active === null ? '—' : fmtInt(active), { tone: active === 0 ? 'bad' : null, href: '#/workers' }),
    card('rate', 'Results/s', o ? fmtRate(o.results_per_s) : '—'),
    card('backlog', 'Backlog', backlog === null || backlog === undefined ? '—' : fmtInt(backlog), { title: 'messages waiting in the slot queues and mailboxes' }),
    card('alerts', 'Alerts active', o ? fmtInt(o.alerts_active) : '—', { tone: o && o.alerts_active > 0 ? 'warn' : null, href: '#/alerts' }),
    card('dead', 'Dead letters pending', o ? fmtInt(o.dead_letters_pending) : '—', { tone: o && o.dead_letters_pending > 0 ? 'warn' : null, href: '#/dead-letters' }),
    shedCard(shed),
    slotMapCard(map));
}

// The slot map (D11): the version in force and a reshard with its countdown, to the switch and then to the end of its grace window.
function slotMapCard(m) {
  const cur = m ? m.current : null;
  const c = m ? m.change : null;
  const sub = !c ? null : c.state === 'PENDING'
    ? `→ ${fmtInt(c.slots)} slots (v${c.version}) in ${fmtMs(c.effective_in_ms)}`
    : c.state === 'RETIRING' ? `v${c.version}: slots ${fmtInt(c.slots)} .. ${fmtInt(c.from_slots - 1)} being drained and deleted`
    : `v${c.version}: window for v${c.version - 1} ends in ${fmtMs(c.window_ends_in_ms)}`;
  const title = m ? (m.versions || []).map(v => `v${v.version}: ${v.slots} slots, ${v.state}, effective ${v.effective_at}`
    + (v.window_until ? `, window until ${v.window_until}` : '')).join('\n') : null;
  return card('slot-map', 'Slot map', cur ? `v${cur.version} · ${fmtInt(cur.slots)}` : '—', { tone: c ? 'warn' : null, sub, title, text: true });
}

// The fleet mode (issue 12): what the leader told the probes, with its reason; amber in HIGH, red in CRITICAL.
function fleetCard(m) {
  const mode = m ? m.mode : null;
  const tone = mode === 'BACKPRESSURE_CRITICAL' ? 'bad' : mode === 'BACKPRESSURE_HIGH' ? 'warn' : null;
  const what = { NORMAL: 'every device at its rate', BACKPRESSURE_HIGH: 'normal devices at half rate, low paused',
    BACKPRESSURE_CRITICAL: 'only critical devices inspected' }[mode];
  return card('fleet-mode', 'Fleet mode', mode ? badge(mode) : '—',
    { tone, sub: m ? m.reason : null, title: m ? `${what || mode}; since ${m.since || '?'} (term ${m.term ?? '?'})` : null, text: true });
}

// Results the probes shed at their outbox watermarks in the last hour (issue 12): recorded, never silently missing.
function shedCard(shed) {
  const by = shed ? shed.by_priority || {} : null;
  const n = p => (by && by[p]) || 0;
  const total = by ? n('1') + n('2') + n('3') : null;
  return card('shed', 'Shed (last hour)', total === null ? '—' : fmtInt(total),
    { tone: n('1') > 0 ? 'bad' : total > 0 ? 'warn' : null, sub: total ? `low ${fmtInt(n('3'))} · normal ${fmtInt(n('2'))} · critical ${fmtInt(n('1'))}` : null,
      title: 'results shed at the probes\' outbox watermarks (GET /api/v1/shed)' });
}

// ------------------------------------------------------------------ slot grid

function heat(v, max) {
  if (v === null || v === undefined) return '#2a2f36';
  if (v <= 0 || max <= 0) return '#1f3326';
  const t = Math.min(1, Math.log1p(v) / Math.log1p(max));
  return `hsl(${Math.round(48 - 48 * t)}, 85%, ${Math.round(30 + 25 * t)}%)`;
}

function slotTitle(x) {
  const parts = [`slot ${x.slot_id}`, `state ${x.state}`, `owner ${x.owner || 'none'}`, `epoch ${x.epoch ?? '—'}`];
  if (x.target) parts.push(`moving to ${x.target}`);
  if (x.backlog != null) parts.push(`backlog ${fmtInt(x.backlog)}`);
  if (x.mailbox != null) parts.push(`mailbox ${fmtInt(x.mailbox)}`);
  if (x.lag_ms != null) parts.push(`lag ${fmtMs(x.lag_ms)}`);
  if (x.rate != null) parts.push(`${fmtRate(x.rate)} results/s`);
  return parts.join(' · ');
}

function paintGrid(ctx, slots) {
  const grid = ctx.root.querySelector('#slot-grid');
  if (grid.children.length !== slots.length) {
    grid.replaceChildren();
    grid.style.setProperty('--cols', slots.length >= 64 ? 16 : Math.max(4, Math.ceil(Math.sqrt(slots.length))));
    for (let i = 0; i < slots.length; i++) {
      const cell = h('div', { class: 'slot', tabindex: '0' });
      cell.addEventListener('mouseenter', () => showSlot(ctx, cell));
      cell.addEventListener('focus', () => showSlot(ctx, cell));
      const pin = () => {
        ctx.state.pinned = cell.dataset.slot;
        showSlot(ctx, cell);
        loadSlotHistory(ctx);
      };
      cell.addEventListener('click', pin);
      cell.addEventListener('keydown', ev => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pin(); } });
      grid.appendChild(cell);
    }
  }
  const maxBacklog = Math.max(1, ...slots.map(x => x.backlog || 0));
  const maxLag = Math.max(1000, ...slots.map(x => x.lag_ms || 0));
  const byState = {};
  const byOwner = {};
  slots.forEach((x, i) => {
    const cell = grid.children[i];
    byState[x.state] = (byState[x.state] || 0) + 1;
    if (x.owner) byOwner[x.owner] = (byOwner[x.owner] || 0) + 1;
    cell.dataset.slot = x.slot_id;
    cell.dataset.owner = x.owner || '';
    cell.dataset.state = x.state;
    cell.dataset.epoch = x.epoch ?? '';
    if (x.target) cell.dataset.target = x.target; else delete cell.dataset.target;
    if (x.backlog != null) cell.dataset.backlog = x.backlog; else delete cell.dataset.backlog;
    if (x.lag_ms != null) cell.dataset.lag = x.lag_ms; else delete cell.dataset.lag;
    if (x.rate != null) cell.dataset.rate = x.rate; else delete cell.dataset.rate;
    cell.title = slotTitle(x);
    cell.textContent = x.slot_id;
    cell.classList.toggle('free', x.state === 'FREE' || !x.owner);
    cell.classList.toggle('moving', TRANSITION.has(x.state));
    cell.classList.toggle('orphaned', x.state === 'ORPHANED');
    cell.classList.toggle('pinned', ctx.state.pinned === String(x.slot_id));
    let bg;
    if (mode === 'backlog') bg = heat(x.backlog, maxBacklog);
    else if (mode === 'lag') bg = heat(x.lag_ms, maxLag);
    else bg = ownerColour(x.owner) || '#2a2f36';
    cell.style.setProperty('--c', bg);
    cell.style.setProperty('--t', ownerColour(x.target) || 'transparent');
    if (ctx.state.shown === String(x.slot_id)) showSlot(ctx, cell);
  });
  const notActive = slots.length - (byState.ACTIVE || 0);
  fill(ctx.root.querySelector('#slot-summary'), `${fmtInt(slots.length)} slots`,
    notActive ? h('span', { class: 'warn-text' }, ` · ${notActive} not ACTIVE`) : ' · all ACTIVE');
  const legend = ctx.root.querySelector('#grid-legend');
  if (mode === 'owner') {
    fill(legend,
      h('div', { class: 'legend-row' }, Object.keys(byOwner).sort().map(o => h('span', { class: 'legend-item', dataset: { owner: o, count: byOwner[o] } },
        h('i', { class: 'swatch', style: { background: ownerColour(o) } }), h('a', { href: '#/workers/' + encodeURIComponent(o) }, o), ` ${byOwner[o]}`)),
        (byState.FREE || slots.some(x => !x.owner)) ? h('span', { class: 'legend-item' }, h('i', { class: 'swatch free' }), `no owner ${slots.filter(x => !x.owner).length}`) : null),
      h('div', { class: 'legend-row' }, STATES.filter(st => byState[st]).map(st => h('span', { class: 'legend-item', dataset: { stateCount: st, count: byState[st] } },
        h('i', { class: 'swatch st-' + st }), `${st} ${byState[st]}`))));
  } else {
    const max = mode === 'backlog' ? maxBacklog : maxLag;
    const has = slots.some(x => (mode === 'backlog' ? x.backlog : x.lag_ms) != null);
    fill(legend, h('div', { class: 'legend-row' },
      has ? [h('span', { class: 'legend-item' }, h('i', { class: 'swatch', style: { background: heat(0, max) } }), mode === 'backlog' ? 'empty' : 'no lag'),
        h('span', { class: 'legend-item' }, h('i', { class: 'swatch', style: { background: heat(max / 30, max) } }), 'some'),
        h('span', { class: 'legend-item' }, h('i', { class: 'swatch', style: { background: heat(max, max) } }),
          `most: ${mode === 'backlog' ? fmtInt(max) + ' messages' : fmtMs(max)}`)]
        : h('span', { class: 'muted' }, `this server does not report per-slot ${mode}`)));
  }
}

function showSlot(ctx, cell) {
  ctx.state.shown = cell.dataset.slot;
  const d = cell.dataset;
  fill(ctx.root.querySelector('#slot-detail'),
    h('b', null, `Slot ${d.slot}`), ' ', badge(d.state), ' owner ',
    d.owner ? h('a', { href: '#/workers/' + encodeURIComponent(d.owner) }, d.owner) : 'none',
    ` · epoch ${d.epoch}`, d.target ? ` · moving to ${d.target}` : '',
    d.backlog !== undefined ? ` · backlog ${fmtInt(Number(d.backlog))}` : '',
    d.lag !== undefined ? ` · lag ${fmtMs(Number(d.lag))}` : '',
    d.rate !== undefined ? ` · ${fmtRate(Number(d.rate))} results/s` : '');
}

function paintHotSlots(ctx, slots) {
  const el = ctx.root.querySelector('#hot-slots');
  if (!slots.some(x => x.backlog != null || x.lag_ms != null)) {
    fill(el, h('p', { class: 'empty' }, 'This server does not report per-slot backlog and lag.'));
    return;
  }
  const top = [...slots].sort((a, b) => (b.backlog || 0) - (a.backlog || 0) || (b.lag_ms || 0) - (a.lag_ms || 0)).slice(0, 8);
  fill(el, table([
    { title: 'slot', cell: x => String(x.slot_id), class: 'num' },
    { title: 'owner', cell: x => x.owner ? h('a', { href: '#/workers/' + encodeURIComponent(x.owner) }, h('i', { class: 'swatch', style: { background: ownerColour(x.owner) } }), x.owner) : '—' },
    { title: 'state', cell: x => badge(x.state) },
    { title: 'backlog', cell: x => fmtInt(x.backlog), class: 'num' },
    { title: 'lag', cell: x => fmtMs(x.lag_ms), class: 'num' },
    { title: 'results/s', cell: x => fmtRate(x.rate), class: 'num' },
  ], top, { empty: 'No slots.' }));
}

function paintProbes(ctx, p, err) {
  const el = ctx.root.querySelector('#probes');
  if (!p) {
    fill(el, h('p', { class: 'empty' }, err ? 'Probe list unavailable: ' + describe(err) : 'Loading…'));
    return;
  }
  const probes = p.probes || [];
  fill(el, table([
    { title: 'probe', cell: x => x.probe_id },
    { title: 'devices', cell: x => fmtInt(x.devices), class: 'num' },
    { title: 'mode', cell: x => (x.mode ? badge(x.mode, { title: `fleet ${x.fleet_mode || '—'}, own ${x.local_mode || '—'}` }) : '—') },
    { title: 'outbox', cell: x => h('span', { class: x.outbox_depth > 10000 ? 'warn-text' : null }, fmtInt(x.outbox_depth)), class: 'num' },
    { title: 'oldest', cell: x => h('span', { class: x.oldest_age_s > 60 ? 'warn-text' : null }, x.oldest_age_s === null || x.oldest_age_s === undefined ? '—' : fmtMs(x.oldest_age_s * 1000)), class: 'num' },
    { title: 'reported', cell: x => timeCell(x.at) },
  ], probes, { empty: 'No probe has reported.' }));
}

async function loadSlotHistory(ctx) {
  const slot = ctx.state.pinned;
  const el = ctx.root.querySelector('#slot-history');
  const r = await ctx.load('/slots/' + encodeURIComponent(slot) + '/history');
  if (!ctx.alive || ctx.state.pinned !== slot) return;
  ctx.root.querySelectorAll('#slot-grid .slot').forEach(c => c.classList.toggle('pinned', c.dataset.slot === slot));
  if (!r) return;
  const rows = (r.history || []).slice(0, 10);
  fill(el, h('div', { class: 'panel-head' }, h('h2', null, `Slot ${slot}: lease history`),
      h('button', { type: 'button', class: 'link', id: 'slot-history-close', onclick: () => {
        ctx.state.pinned = null;
        el.replaceChildren();
        ctx.root.querySelectorAll('#slot-grid .slot.pinned').forEach(c => c.classList.remove('pinned'));
      } }, 'close')),
    table([
      { title: 'when', cell: x => timeCell(x.at) },
      { title: 'owner', cell: x => (x.old_owner === x.new_owner ? (x.new_owner || '—') : `${x.old_owner || '—'} → ${x.new_owner || '—'}`) },
      { title: 'epoch', cell: x => (x.old_epoch === x.new_epoch ? String(x.new_epoch) : `${x.old_epoch ?? '—'} → ${x.new_epoch}`), class: 'num' },
      { title: 'state', cell: x => [x.old_state ? badge(x.old_state) : '', ' → ', badge(x.new_state)] },
      { title: 'reason', cell: x => x.reason || '—' },
    ], rows, { empty: 'No lease change recorded for this slot.' }),
    (r.history || []).length > 10 ? h('p', { class: 'muted small' }, `newest 10 of ${(r.history || []).length} shown`) : null);
}
