// Shared plumbing of the console: DOM building, API calls, formatting, error and notice banners.
// No framework: each view builds its DOM once and updates it on every poll.

export const POLL_MS = 2000;

/** Builds an element: h('a', {href: '#/x', class: 'y', dataset: {k: 'v'}}, 'text', child, [more]). Text is never parsed as HTML. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'dataset') Object.entries(v).forEach(([dk, dv]) => { if (dv !== null && dv !== undefined) el.dataset[dk] = String(dv); });
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (v === true) el.setAttribute(k, '');
      else el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

// ------------------------------------------------------------------ API

export class ApiError extends Error {
  constructor(status, message, method, path) {
    super(message);
    this.status = status;
    this.method = method;
    this.path = path;
  }

  /** One readable line: what was asked, what came back, and what it means. */
  describe() {
    const what = `${this.method} ${this.path}`;
    if (this.status === 0) return `${what}: the server does not answer (${this.message}). Retrying every ${POLL_MS / 1000} s.`;
    if (this.status === 404 && /^no route/.test(this.message)) return `${what}: this server has no such API (${this.message}).`;
    return `${what} → ${this.status}: ${this.message}`;
  }
}

let leaving = false;

/** The session is gone: remember where the user was and go to the login page. */
export function toLogin() {
  if (leaving) return;
  leaving = true;
  try {
    if (location.hash && location.hash !== '#/') sessionStorage.setItem('console.return', location.hash);
  } catch (e) { /* storage may be disabled */ }
  location.assign('/login');
}

/**
 * A JSON API call under /api/v1 with the session cookie. Resolves to the parsed body; rejects with an
 * ApiError carrying the server's {"error": ...} text. 401 (or a redirect to the login page) leaves for /login.
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  const init = { method, credentials: 'same-origin', headers: { Accept: 'application/json' }, signal, cache: 'no-store' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch('/api/v1' + path, init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, e.message || 'network error', method, path);
  }
  if (res.status === 401 || (res.redirected && new URL(res.url).pathname === '/login')) {
    toLogin();
    throw new ApiError(401, 'not logged in (the session ended): going to the login page', method, path);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    if (res.ok) throw new ApiError(res.status, 'the answer is not JSON: ' + text.slice(0, 120), method, path);
  }
  if (!res.ok) {
    const msg = data && data.error ? data.error : (text.trim().slice(0, 200) || res.statusText || 'no message');
    const err = new ApiError(res.status, msg, method, path);
    err.body = data;
    throw err;
  }
  return data;
}

// ------------------------------------------------------------------ banners

const errorBox = () => document.getElementById('error');

/** Shows the poll's errors (one line each) or hides the banner when there are none. */
export function showErrors(errors) {
  const box = errorBox();
  if (!errors.length) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  fill(box, h('strong', null, errors.length === 1 ? 'Problem: ' : `${errors.length} problems:`),
    errors.length === 1 ? errors[0] : h('ul', null, errors.map(e => h('li', null, e))));
  box.hidden = false;
}

/** A message about an action the user took (drain, ack, replay): stays until dismissed or the page changes. */
export function notify(message, kind = 'error') {
  const box = document.getElementById('notice');
  fill(box, h('span', { class: 'notice-text' }, message),
    h('button', { type: 'button', class: 'link', 'aria-label': 'dismiss', onclick: () => { box.hidden = true; } }, '✕'));
  box.className = 'notice ' + kind;
  box.hidden = false;
}

export function clearNotice() {
  const box = document.getElementById('notice');
  if (box) box.hidden = true;
}

/** Describes any failure as one readable line. */
export function describe(e) {
  if (e instanceof ApiError) return e.describe();
  return String(e && e.message ? e.message : e);
}

// ------------------------------------------------------------------ formatting

export function fmtInt(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

export function fmtRate(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return n >= 100 ? fmtInt(n) : (Math.round(n * 10) / 10).toLocaleString('en-US');
}

/** Milliseconds as a short age: 0.4 s, 12 s, 3 min, 2.5 h, 4 d. */
export function fmtMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 0) ms = 0;
  if (ms < 10_000) return (Math.round(ms / 100) / 10) + ' s';
  if (ms < 120_000) return Math.round(ms / 1000) + ' s';
  if (ms < 7_200_000) return Math.round(ms / 60_000) + ' min';
  if (ms < 172_800_000) return (Math.round(ms / 360_000) / 10) + ' h';
  return Math.round(ms / 86_400_000) + ' d';
}

/** How long ago an ISO instant was, e.g. "12 s ago". */
export function ago(iso) {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  return fmtMs(Date.now() - t) + ' ago';
}

/** An ISO instant in the browser's local time, with seconds: 2026-11-30 03:14:05. */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const p = n => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A time element: local time as text, the age and the raw value on hover. */
export function timeCell(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: `${iso} (${ago(iso)})` }, fmtTime(iso));
}

const STATE_CLASS = {
  ACTIVE: 'ok', UP: 'ok', DONE: 'ok', RESOLVED: 'ok', REPLAYED: 'ok',
  WARMING: 'info', REGISTERED: 'info', LOADING_NEW: 'info', MOVING: 'info', RUNNING: 'info', PENDING: 'warn',
  DRAINING: 'warn', DRAINING_OLD: 'warn', SUSPECTED: 'warn', QUARANTINE: 'warn', SOFT: 'warn', DISCARDED: 'muted',
  DEAD: 'bad', DOWN: 'bad', ORPHANED: 'bad', FAILED: 'bad', HARD: 'bad',
  OFFLINE: 'muted', FREE: 'muted',
  NORMAL: 'ok', BACKPRESSURE_HIGH: 'warn', BACKPRESSURE_CRITICAL: 'bad', DEGRADED: 'warn', HISTORY_LOCKED: 'warn',
};

/** A coloured state label; the text is always the state's own name. */
export function badge(state, extra) {
  const s = state === null || state === undefined ? '—' : String(state);
  return h('span', { class: 'badge ' + (STATE_CLASS[s] || 'plain'), dataset: { state: s }, ...(extra || {}) }, s);
}

export const SEVERITY = ['info', 'low', 'medium', 'high', 'critical'];

export function severityBadge(sev) {
  const n = Number(sev);
  const name = SEVERITY[n] || String(sev);
  return h('span', { class: 'sev sev' + n, dataset: { severity: n }, title: `severity ${n} of 4` }, `${n} ${name}`);
}

/** A progress bar whose text is the percent; data-percent carries the number. */
export function progressBar(id, percent, label) {
  const p = Math.max(0, Math.min(100, Math.round(Number(percent) || 0)));
  return h('div', { class: 'progress' + (p >= 100 ? ' complete' : ''), id, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100,
      'aria-valuenow': p, 'aria-label': label || 'progress', dataset: { percent: p } },
    h('div', { class: 'bar', style: { width: p + '%' } }),
    h('span', { class: 'pct' }, p + '%'));
}

/** A simple table: columns [{title, cell: row => node|text, class}], rows. */
export function table(columns, rows, { empty = 'Nothing to show.', rowAttrs } = {}) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('table', { class: 'grid' },
    h('thead', null, h('tr', null, columns.map(c => h('th', { class: c.class }, c.title)))),
    h('tbody', null, rows.map(r => h('tr', rowAttrs ? rowAttrs(r) : null, columns.map(c => h('td', { class: c.class }, c.cell(r)))))));
}

/** Key/value facts as a definition list. */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v === null || v === undefined || v === '' ? '—' : v)]));
}

export function encodeId(id) {
  return encodeURIComponent(id);
}

// ------------------------------------------------------------------ owner colours

// Twelve colours that stay apart on a dark background; workers sorted by id take them in turn, so the
// colours do not change while the set of workers stays the same.
const PALETTE = ['#4e9ff5', '#f5a524', '#3fbf6f', '#d66bd8', '#e5534b', '#39c5cf', '#c9b43a', '#8f7df0', '#f07fa0', '#7fbf3f', '#b8855a', '#6c8ebf'];
let ownerOrder = [];

/** Tells the palette which workers exist (any order). */
export function setOwners(ids) {
  ownerOrder = [...new Set(ids.filter(Boolean))].sort();
}

export function ownerColour(id) {
  if (!id) return null;
  let i = ownerOrder.indexOf(id);
  if (i < 0) {
    // not (yet) in the worker list: a stable colour from the id
    let hsh = 0;
    for (const ch of id) hsh = (hsh * 31 + ch.charCodeAt(0)) >>> 0;
    i = hsh;
  }
  return PALETTE[i % PALETTE.length];
}
