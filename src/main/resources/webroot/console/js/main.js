// The console's router and poll loop. Hash routes: #/overview, #/workers, #/workers/ID, #/devices,
// #/devices/ID, #/alerts, #/dead-letters, #/hotels, #/hotels/H, #/hotels/H/rooms/R. The current view refreshes
// every 2 s (or what it asks for)
// while the tab is visible; the header strip refreshes the cluster summary on every page.
import { api, describe, showErrors, clearNotice, fmtInt, fmtRate, POLL_MS, fill, h } from './core.js';
import overview from './overview.js';
import { workersView, workerView } from './workers.js';
import { devicesView, deviceView } from './devices.js';
import alerts from './alerts.js';
import deadLetters from './deadletters.js';
import { hotelsView, hotelView, roomView } from './hotels.js';

const routes = [
  { re: /^\/?$/, view: overview },
  { re: /^\/overview$/, view: overview },
  { re: /^\/workers$/, view: workersView },
  { re: /^\/workers\/([^/]+)$/, view: workerView, keys: ['id'] },
  { re: /^\/devices$/, view: devicesView },
  { re: /^\/devices\/([^/]+)$/, view: deviceView, keys: ['id'] },
  { re: /^\/alerts$/, view: alerts },
  { re: /^\/dead-letters$/, view: deadLetters },
  { re: /^\/hotels$/, view: hotelsView },
  { re: /^\/hotels\/([^/]+)$/, view: hotelView, keys: ['hotel'] },
  { re: /^\/hotels\/([^/]+)\/rooms\/([^/]+)$/, view: roomView, keys: ['hotel', 'room'] },
];

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/overview';
  const [path, qs] = raw.split('?');
  const query = Object.fromEntries(new URLSearchParams(qs || ''));
  for (const r of routes) {
    const m = path.match(r.re);
    if (m) {
      const params = {};
      (r.keys || []).forEach((k, i) => { params[k] = decodeURIComponent(m[i + 1]); });
      return { view: r.view, params, query, path };
    }
  }
  return { view: null, params: {}, query, path };
}

let current = null; // the mounted view's context
let lastSuccess = 0;
let seq = 0;

function stopCurrent() {
  if (!current) return;
  current.alive = false;
  clearTimeout(current.timer);
  current.abort.abort();
  if (current.view.unmount) {
    try {
      current.view.unmount(current);
    } catch (e) { /* a view that fails to clean up must not block the next one */ }
  }
  current = null;
}

function route() {
  stopCurrent();
  clearNotice();
  showErrors([]);
  const { view, params, query, path } = parseHash();
  const root = document.getElementById('view');
  document.querySelectorAll('[data-nav]').forEach(a => a.classList.toggle('current', !!view && a.dataset.nav === view.nav));
  if (!view) {
    fill(root, h('section', { class: 'panel' }, h('h1', null, 'No such page'),
      h('p', null, `There is no page at #${path}. `, h('a', { href: '#/overview' }, 'Go to the overview.'))));
    document.title = 'Not found · Inspection console';
    return;
  }
  const ctx = {
    id: ++seq, view, params, query, root, alive: true, abort: new AbortController(), timer: null, errors: [], state: {},
    /** GET (or other) under /api/v1; on failure records a readable error and resolves to null. */
    async load(path, opts = {}) {
      try {
        return await api(path, { ...opts, signal: ctx.abort.signal });
      } catch (e) {
        if (e.name === 'AbortError' || !ctx.alive) return null;
        if (!opts.quiet) ctx.errors.push(describe(e));
        if (opts.onError) opts.onError(e);
        return null;
      }
    },
    /** Runs a refresh now instead of waiting for the next tick. */
    refreshNow() {
      if (!ctx.alive) return;
      clearTimeout(ctx.timer);
      tick(ctx);
    },
  };
  current = ctx;
  root.replaceChildren();
  document.title = (typeof view.title === 'function' ? view.title(ctx) : view.title) + ' · Inspection console';
  try {
    view.mount(ctx);
  } catch (e) {
    showErrors(['the page could not be built: ' + describe(e)]);
    return;
  }
  if (view.refresh) tick(ctx);
}

let ticking = new Set();

async function tick(ctx) {
  if (!ctx.alive) return;
  if (ticking.has(ctx.id)) {
    ctx.again = true; // asked for while a refresh runs: run once more right after it
    return;
  }
  ticking.add(ctx.id);
  ctx.errors = [];
  try {
    await ctx.view.refresh(ctx);
    if (!ctx.alive) return;
    if (!ctx.errors.length) lastSuccess = Date.now();
    showErrors(ctx.errors);
    freshnessTick();
  } catch (e) {
    if (ctx.alive && e.name !== 'AbortError') showErrors([...ctx.errors, 'the page failed to update: ' + describe(e)]);
  } finally {
    ticking.delete(ctx.id);
    if (ctx.alive && ctx.view.refresh && (ctx.view.poll !== false || ctx.again)) {
      const ms = ctx.again ? 0 : typeof ctx.view.interval === 'function' ? ctx.view.interval(ctx) : POLL_MS;
      ctx.again = false;
      clearTimeout(ctx.timer);
      ctx.timer = setTimeout(() => schedule(ctx), ms);
    }
  }
}

function schedule(ctx) {
  if (!ctx.alive) return;
  if (document.hidden) {
    ctx.timer = setTimeout(() => schedule(ctx), 500); // paused while nobody looks; resumes within half a second
    return;
  }
  tick(ctx);
}

// ------------------------------------------------------------------ header strip

async function headerTick() {
  const line = document.getElementById('status-line');
  try {
    if (!document.hidden) {
      const o = await api('/overview');
      fill(line,
        o.leader_id ? h('span', { title: 'the scheduler that leads (term ' + o.term + ')' }, 'leader ', h('b', null, o.leader_id), ` · term ${o.term}`)
          : h('span', { class: 'bad-text' }, 'NO LEADER'),
        followerNote(o),
        ' · ', h('span', null, h('b', null, fmtInt(o.workers_active)), ' workers active'),
        ' · ', h('span', null, h('b', null, fmtRate(o.results_per_s)), ' results/s'));
      setCount('nav-alerts', o.alerts_active);
      setCount('nav-dead', o.dead_letters_pending);
      line.classList.remove('bad-text');
      if (!current || !current.errors.length) lastSuccess = Math.max(lastSuccess, Date.now());
      freshnessTick();
    }
  } catch (e) {
    if (e.name !== 'AbortError') {
      fill(line, h('span', { class: 'bad-text', title: describe(e) }, e.status === 0 ? 'server not answering' : 'summary unavailable (' + (e.status || 'error') + ')'));
    }
  } finally {
    setTimeout(headerTick, POLL_MS);
  }
}

// On a follower the console reads everything, but changes (drain, ack, replay) are the leader's: link to its console.
function followerNote(o) {
  if (o.this_node_leads !== false || !o.leader_id) return null;
  const url = typeof o.leader_url === 'string' && /^https?:\/\/[^\s]+$/.test(o.leader_url) ? o.leader_url.replace(/\/+$/, '') : null;
  return h('span', { id: 'follower-note', title: 'this scheduler follows; changes are made on the leader' }, ' · this node follows: ',
    url ? h('a', { id: 'leader-link', href: url + '/console/', rel: 'noopener' }, "open the leader's console") : h('span', null, 'leader address unknown'));
}

function setCount(id, n) {
  const el = document.getElementById(id);
  if (!el) return;
  const v = Number(n) || 0;
  el.textContent = v ? fmtInt(v) : '';
  el.hidden = !v;
}

function freshnessTick() {
  const el = document.getElementById('freshness');
  if (document.hidden) {
    el.textContent = 'paused';
    el.className = 'freshness';
  } else if (!lastSuccess) {
    el.textContent = 'loading…';
    el.className = 'freshness';
  } else {
    const s = Math.round((Date.now() - lastSuccess) / 1000);
    const stale = s > 10;
    el.textContent = stale ? `STALE: no update for ${s} s` : `live · updated ${s} s ago`;
    el.className = 'freshness' + (stale ? ' stale' : '');
  }
}

// ------------------------------------------------------------------ start

(function start() {
  // back to where the user was before the login page
  try {
    const back = sessionStorage.getItem('console.return');
    if (back) {
      sessionStorage.removeItem('console.return');
      if (!location.hash || location.hash === '#/' || location.hash === '#/overview') location.replace(back);
    }
  } catch (e) { /* storage may be disabled */ }
  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', () => { if (!document.hidden && current) current.refreshNow(); });
  route();
  headerTick();
  setInterval(freshnessTick, 1000);
})();
