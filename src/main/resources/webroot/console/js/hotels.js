// Hotels (issue 13): the rooms hotel_room devices report for a hotel, and one room's devices with their merged
// status — loops (dev_loops, by the 9-digit type/address/loop key), faults, lock state and device time.
import { h, fill, table, timeCell, badge, facts, encodeId, describe } from './core.js';

const LAST_HOTEL = 'inspection.console.hotel';
const deviceTime = ms => (typeof ms === 'number' ? timeCell(new Date(ms).toISOString()) : h('span', { class: 'muted' }, '—'));
const lockText = v => (v === null || v === undefined ? '—' : v === 1 ? 'locked' : v === 0 ? 'unlocked' : String(v));

function hotelForm(current) {
  const input = h('input', { id: 'hotel-id', type: 'search', value: current || '', placeholder: 'hotel id, e.g. 1085 or sim-hotel', autocomplete: 'off',
    spellcheck: 'false', 'aria-label': 'hotel id' });
  return h('form', { class: 'search', onsubmit: ev => {
    ev.preventDefault();
    const v = input.value.trim();
    if (v) location.hash = '#/hotels/' + encodeId(v);
  } }, input, h('button', { type: 'submit', id: 'hotel-open' }, 'Show rooms'));
}

export const hotelsView = {
  title: 'Hotels',
  nav: 'hotels',
  mount(ctx) {
    let last = '';
    try { last = localStorage.getItem(LAST_HOTEL) || ''; } catch (e) { /* storage off: no memory of the last hotel */ }
    fill(ctx.root, h('section', { class: 'panel' }, h('h1', null, 'Hotels'), hotelForm(last),
      h('p', { class: 'muted small' }, 'Rooms whose room-control units push frames (profile hotel_room) to a probe: POST /ingest/v1/hotel_room.')));
  },
};

export const hotelView = {
  title: ctx => `Hotel ${ctx.params.hotel}`,
  nav: 'hotels',
  mount(ctx) {
    try { localStorage.setItem(LAST_HOTEL, ctx.params.hotel); } catch (e) { /* fine */ }
    fill(ctx.root, h('section', { class: 'panel' },
      h('div', { class: 'panel-head' }, h('h1', null, 'Hotel ', h('span', { id: 'hotel-name' }, ctx.params.hotel), ' ', h('span', { id: 'room-count', class: 'muted' })),
        hotelForm(ctx.params.hotel)),
      h('div', { id: 'rooms' }, h('p', { class: 'empty' }, 'Loading…'))));
  },
  async refresh(ctx) {
    const hotel = ctx.params.hotel;
    const r = await ctx.load(`/hotels/${encodeId(hotel)}/rooms`);
    if (!r || !ctx.alive) return;
    const rooms = r.rooms || [];
    fill(ctx.root.querySelector('#room-count'), `(${rooms.length} rooms)`);
    fill(ctx.root.querySelector('#rooms'), table([
      { title: 'room', cell: x => h('a', { href: `#/hotels/${encodeId(hotel)}/rooms/${encodeId(x.room_id)}`, class: 'room-link' }, x.room_id) },
      { title: 'devices', cell: x => String(x.devices), class: 'num' },
      { title: 'faults', cell: x => (x.faults ? badge('DOWN', String(x.faults)) : '0'), class: 'num' },
      { title: 'devices locked', cell: x => String(x.devices_locked), class: 'num' },
      { title: 'newest device time', cell: x => deviceTime(x.ts_ms) },
    ], rooms, {
      empty: 'No device reports a room of this hotel.',
      rowAttrs: x => ({ class: 'room-row', dataset: { room: x.room_id, faults: String(x.faults) } }),
    }));
  },
};

export const roomView = {
  title: ctx => `Room ${ctx.params.room} · ${ctx.params.hotel}`,
  nav: 'hotels',
  mount(ctx) {
    fill(ctx.root, h('section', { class: 'panel' },
      h('p', { class: 'small' }, h('a', { href: '#/hotels/' + encodeId(ctx.params.hotel), id: 'back-to-hotel' }, '← hotel ' + ctx.params.hotel)),
      h('h1', null, `Room ${ctx.params.room}`),
      h('div', { id: 'room-devices' }, h('p', { class: 'empty' }, 'Loading…'))));
  },
  async refresh(ctx) {
    const { hotel, room } = ctx.params;
    let missing = false;
    const r = await ctx.load(`/hotels/${encodeId(hotel)}/rooms/${encodeId(room)}`, { quiet: true, onError: e => { missing = e.status === 404; if (!missing) ctx.errors.push(describe(e)); } });
    if (!ctx.alive) return;
    const out = ctx.root.querySelector('#room-devices');
    if (!r) {
      fill(out, h('p', { class: 'empty' }, missing ? 'No device reports this room.' : 'Could not read the room.'));
      return;
    }
    fill(out, (r.devices || []).map(d => h('section', { class: 'room-device', dataset: { device: d.device_id } },
      h('h2', null, h('a', { href: '#/devices/' + encodeId(d.device_id) }, d.device_id)),
      facts([
        ['lock', h('span', { class: 'lock' }, lockText(d.sys_lock_status))],
        ['device time', deviceTime(d.ts_ms)],
        ['faults', h('span', { class: 'fault-count' }, String((d.faults || []).length))],
        ['last frame', d.guid],
        ['probe seq', d.seq === undefined ? '' : String(d.seq)],
      ]),
      (d.faults || []).length ? table([
        { title: 'faulty device', cell: f => [f.dev_type, f.dev_addr, f.dev_loop].map(v => String(v ?? '?')).join(' / ') },
        { title: 'error', cell: f => String(f.error_type ?? '—') },
        { title: 'data', cell: f => String(f.error_data ?? '—') },
      ], d.faults, { rowAttrs: () => ({ class: 'fault-row' }) }) : null,
      loopsTable(d.dev_loops || {}))));
  },
};

function loopsTable(loops) {
  const keys = Object.keys(loops).sort();
  const fields = [...new Set(keys.flatMap(k => Object.keys(loops[k] || {})))].sort();
  return table([
    { title: 'loop (type / address / loop)', cell: k => `${k.slice(0, 3)} / ${k.slice(3, 6)} / ${k.slice(6, 9)}` },
    ...fields.map(f => ({ title: f, cell: k => { const v = (loops[k] || {})[f]; return v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v); }, class: 'num' })),
  ], keys, { empty: 'No loop reported yet.', rowAttrs: k => ({ class: 'loop-row', dataset: { loop: k } }) });
}
