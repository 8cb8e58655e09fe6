// Workers: the list, and one worker's page with its slots, state history, the drain and quarantine
// buttons and the drain's live progress.
import { h, fill, fmtInt, fmtMs, badge, table, timeCell, progressBar, facts, api, describe, notify, ownerColour, setOwners, encodeId } from './core.js';

const GONE = new Set(['OFFLINE', 'DEAD']);
const STATE_ORDER = ['ACTIVE', 'DRAINING', 'WARMING', 'REGISTERED', 'SUSPECTED', 'QUARANTINE', 'DEAD', 'OFFLINE'];

function heartbeatCell(w) {
  const ms = w.heartbeat_age_ms;
  const cls = GONE.has(w.state) ? 'muted' : ms > 15000 ? 'bad-text' : ms > 5000 ? 'warn-text' : null;
  return h('span', { class: cls, title: 'time since its last heartbeat' }, fmtMs(ms));
}

function mailbox(w) {
  return w.backlog && w.backlog.mailbox !== undefined && w.backlog.mailbox !== null ? fmtInt(w.backlog.mailbox) : '—';
}

/** The workers as a table; links to each worker's page. */
export function workersTable(workers, { compact = false } = {}) {
  const rank = s => { const i = STATE_ORDER.indexOf(s); return i < 0 ? STATE_ORDER.length : i; };
  let rows = [...workers].sort((a, b) => rank(a.state) - rank(b.state) || String(a.worker_id).localeCompare(String(b.worker_id)));
  let hidden = 0;
  if (compact) {
    // the overview keeps to the workers that matter now: gone for more than ten minutes is history
    const keep = rows.filter(w => !(GONE.has(w.state) && w.state_age_ms > 600_000));
    hidden = rows.length - keep.length;
    rows = keep;
  }
  const t = table([
    { title: 'worker', cell: w => h('a', { href: '#/workers/' + encodeId(w.worker_id), class: 'worker-link', dataset: { worker: w.worker_id } },
      h('i', { class: 'swatch', style: { background: ownerColour(w.worker_id) } }), w.worker_id) },
    { title: 'state', cell: w => badge(w.state) },
    { title: 'heartbeat', cell: heartbeatCell, class: 'num' },
    { title: 'in state for', cell: w => fmtMs(w.state_age_ms), class: 'num' },
    { title: 'slots', cell: w => fmtInt(w.slots_held), class: 'num' },
    { title: 'mailbox', cell: mailbox, class: 'num' },
    // the worker's DB-degraded write mode (issue 12), from its heartbeat: DEGRADED writes history for critical results only;
    // HISTORY_LOCKED: a lock on history held a batch past worker.degraded.history.lock.timeout.ms, and every history row is spilled
    { title: 'writes', cell: w => { const d = w.backlog && w.backlog.degraded; return !d || !d.mode ? '—' : [badge(d.mode, { title: d.reason || '' }),
      d.history_locked ? [' ', badge('HISTORY_LOCKED', { title: 'history is locked: current status and alerts are written, every history row goes to the back-fill queue' })] : ''];
    } },
    { title: 'drain', cell: w => (w.drain && (w.state === 'DRAINING' || w.drain.percent < 100)) ? progressBar(null, w.drain.percent, 'drain of ' + w.worker_id) : '' },
  ], rows, { empty: 'No worker has registered.', rowAttrs: w => ({ class: GONE.has(w.state) ? 'dim' : null, dataset: { worker: w.worker_id, state: w.state } }) });
  return hidden ? [t, h('p', { class: 'muted small' }, `${hidden} worker(s) OFFLINE or DEAD for more than 10 minutes not shown; `, h('a', { href: '#/workers' }, 'see all'), '.')] : t;
}

export const workersView = {
  title: 'Workers',
  nav: 'workers',
  mount(ctx) {
    fill(ctx.root, h('section', { class: 'panel' }, h('h1', null, 'Workers'), h('div', { id: 'workers' }, h('p', { class: 'empty' }, 'Loading…'))));
  },
  async refresh(ctx) {
    const w = await ctx.load('/workers');
    if (!w || !ctx.alive) return;
    setOwners(w.workers.map(x => x.worker_id));
    fill(ctx.root.querySelector('#workers'), workersTable(w.workers || []));
  },
};

// ------------------------------------------------------------------ one worker

export const workerView = {
  title: ctx => 'Worker ' + ctx.params.id,
  nav: 'workers',

  // faster while a drain runs, so the bar moves with the slots
  interval: ctx => (ctx.state.w && ctx.state.w.state === 'DRAINING') || ctx.state.drainRequested ? 1000 : 2000,

  mount(ctx) {
    const id = ctx.params.id;
    fill(ctx.root,
      h('section', { class: 'panel' },
        h('div', { class: 'panel-head' },
          h('h1', null, h('a', { href: '#/workers', class: 'crumb' }, 'Workers'), ' / ', h('span', { id: 'worker-id' }, id), ' ',
            h('span', { id: 'worker-state' })),
          h('div', { class: 'actions' },
            h('button', { type: 'button', id: 'drain', class: 'danger', disabled: true, onclick: () => askConfirm(ctx, 'drain') }, 'Drain…'),
            h('button', { type: 'button', id: 'quarantine', class: 'danger', disabled: true, onclick: () => askConfirm(ctx, 'quarantine') }, 'Quarantine…'))),
        h('div', { id: 'confirm', class: 'confirm', hidden: true }),
        h('div', { id: 'drain-panel', class: 'drain-panel', hidden: true },
          h('h2', null, 'Drain'), h('div', { id: 'drain-slot' }), h('p', { id: 'drain-detail' })),
        h('div', { id: 'worker-facts' }, h('p', { class: 'empty' }, 'Loading…'))),
      h('div', { class: 'columns even' },
        h('section', { class: 'panel' }, h('h2', null, 'Slots held'), h('div', { id: 'worker-slots' })),
        h('section', { class: 'panel' }, h('h2', null, 'State changes'), h('div', { id: 'worker-history' }))));
  },

  async refresh(ctx) {
    const id = ctx.params.id;
    const w = await ctx.load('/workers/' + encodeId(id));
    if (!ctx.alive || !w) return;
    ctx.state.w = w;
    if (w.state !== 'ACTIVE' && w.state !== 'REGISTERED' && w.state !== 'WARMING') ctx.state.drainRequested = false;
    fill(ctx.root.querySelector('#worker-state'), badge(w.state, { id: 'worker-state-badge' }));
    ctx.root.querySelector('#worker-state').dataset.state = w.state;
    ctx.root.querySelector('#drain').disabled = GONE.has(w.state) || w.state === 'DRAINING' || ctx.state.drainRequested;
    ctx.root.querySelector('#quarantine').disabled = GONE.has(w.state) || w.state === 'QUARANTINE';
    fill(ctx.root.querySelector('#worker-facts'), facts([
      ['state', badge(w.state)],
      ['in this state for', fmtMs(w.state_age_ms)],
      ['last heartbeat', heartbeatCell(w)],
      ['slots held', fmtInt(w.slots_held)],
      ['mailbox backlog', mailbox(w)],
    ]));
    paintDrain(ctx, w);
    const slots = w.slots || [];
    fill(ctx.root.querySelector('#worker-slots'), slots.length
      ? h('div', { class: 'chips' }, slots.map(s => h('span', { class: 'chip' + (s.state === 'ACTIVE' ? '' : ' moving'), dataset: { slot: s.slot_id, state: s.state },
        title: `slot ${s.slot_id} · ${s.state} · epoch ${s.epoch}`, style: { '--c': ownerColour(w.worker_id) } }, String(s.slot_id))))
      : h('p', { class: 'empty' }, 'It holds no slot.'));
    fill(ctx.root.querySelector('#worker-history'), table([
      { title: 'when', cell: x => timeCell(x.at) },
      { title: 'from', cell: x => (x.from ? badge(x.from) : '—') },
      { title: 'to', cell: x => badge(x.to) },
      { title: 'reason', cell: x => x.reason || '—' },
      { title: 'term', cell: x => fmtInt(x.term), class: 'num' },
    ], w.history || [], { empty: 'No state change recorded.' }));
  },
};

function paintDrain(ctx, w) {
  const panel = ctx.root.querySelector('#drain-panel');
  const d = w.drain;
  const show = !!d || w.state === 'DRAINING' || ctx.state.drainRequested;
  panel.hidden = !show;
  if (!show) return;
  const pct = d ? d.percent : 0;
  fill(ctx.root.querySelector('#drain-slot'), progressBar('drain-progress', pct, 'drain progress'));
  let text;
  if (w.state === 'OFFLINE' && pct >= 100) text = [h('b', { class: 'ok-text' }, 'Drain complete.'), ` ${w.worker_id} moved all ${fmtInt(d.slots_at_start)} slot(s) out and is OFFLINE; its process exits.`];
  else if (d) text = `${fmtInt(d.slots_at_start - d.remaining)} of ${fmtInt(d.slots_at_start)} slot(s) moved, ${fmtInt(d.remaining)} left · state ${w.state}`;
  else text = `Drain requested; waiting for the leader to start moving slots · state ${w.state}`;
  fill(ctx.root.querySelector('#drain-detail'), text);
  ctx.root.querySelector('#drain-detail').dataset.state = w.state;
}

const ACTIONS = {
  drain: {
    title: 'Drain',
    explain: w => `Move all ${fmtInt(w.slots_held)} slot(s) of ${w.worker_id} to other ACTIVE workers, in batches, with no redelivery. When it holds none it goes OFFLINE and its process exits.`,
    path: id => `/workers/${encodeId(id)}/drain`,
  },
  quarantine: {
    title: 'Quarantine',
    explain: w => `Take ${w.worker_id} out of service: it stops consuming at once and its ${fmtInt(w.slots_held)} slot(s) go to other workers. It gets slots again only after a new warm-up.`,
    path: id => `/workers/${encodeId(id)}/quarantine`,
  },
};

function askConfirm(ctx, kind) {
  const w = ctx.state.w;
  if (!w) return;
  const a = ACTIONS[kind];
  const box = ctx.root.querySelector('#confirm');
  fill(box,
    h('p', null, h('b', null, `${a.title} ${w.worker_id}?`), ' ', a.explain(w)),
    h('button', { type: 'button', id: kind + '-confirm', class: 'danger', onclick: () => run(ctx, kind) }, `${a.title} ${w.worker_id}`),
    ' ',
    h('button', { type: 'button', id: kind + '-cancel', onclick: () => { box.hidden = true; } }, 'Cancel'));
  box.hidden = false;
  box.querySelector('#' + kind + '-cancel').focus();
}

async function run(ctx, kind) {
  const id = ctx.params.id;
  const box = ctx.root.querySelector('#confirm');
  box.querySelectorAll('button').forEach(b => { b.disabled = true; });
  try {
    await api(ACTIONS[kind].path(id), { method: 'POST', body: {} });
    if (kind === 'drain') ctx.state.drainRequested = true;
    notify(`${ACTIONS[kind].title} of ${id} accepted.`, 'ok');
    box.hidden = true;
  } catch (e) {
    let msg = `${ACTIONS[kind].title} of ${id} refused: ${describe(e)}`;
    if (e.body && e.body.leader_url) msg += ` — open the console of the leader: ${e.body.leader_url}/console/`;
    notify(msg, 'error');
    box.hidden = true;
  }
  ctx.refreshNow();
}
