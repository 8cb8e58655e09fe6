// Time charts on uPlot (served from the jar's webjar as the global `uPlot`), in the console's dark
// colours, as wide as their box. The element gets data-points (how many x values were drawn) and
// data-drawn="true" once uPlot has painted its canvas.

const AXIS = '#aab4c0';
const GRID = 'rgba(170,180,192,0.14)';

function axis(extra) {
  return { stroke: AXIS, grid: { stroke: GRID, width: 1 }, ticks: { stroke: GRID, width: 1 }, font: '12px system-ui, sans-serif', ...extra };
}

const pad = n => String(n).padStart(2, '0');

/** The time axis: whole seconds or minutes, as local HH:MM:SS or HH:MM (no "3:26am", no milliseconds). */
function timeAxis(withSeconds) {
  return axis({
    space: 70,
    incrs: withSeconds ? [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200] : [60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400],
    values: (u, splits) => splits.map(v => {
      const d = new Date(v * 1000);
      return withSeconds ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    }),
  });
}

function timeValue(withSeconds) {
  return (u, v) => {
    if (v === null || v === undefined) return '—';
    const d = new Date(v * 1000);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}` + (withSeconds ? `:${pad(d.getSeconds())}` : '');
  };
}

class Chart {
  /**
   * series: [{label, stroke, scale, fill?, kind: 'line'|'step'|'bars'|'points', value?}]; the first two
   * distinct scales get the left and the right axis.
   */
  constructor(el, series, { height = 220, axes = {}, scales = {}, seconds = true } = {}) {
    this.el = el;
    if (typeof uPlot === 'undefined') {
      el.textContent = 'Charts unavailable: /webjars/uplot/1.6.30/dist/uPlot.iife.min.js did not load.';
      el.classList.add('empty');
      this.u = null;
      return;
    }
    const scaleNames = [...new Set(series.map(s => s.scale))];
    const opts = {
      width: Math.max(200, el.clientWidth || 600),
      height,
      scales: { x: { time: true }, ...scales },
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      series: [{ label: 'time', value: timeValue(seconds) }, ...series.map(s => ({
        label: s.label, scale: s.scale, stroke: s.stroke, width: s.width || 2, fill: s.fill,
        spanGaps: false,
        value: s.value,
        // a plain line shows its points only while they are few (uPlot decides); the others always or never
        points: s.kind === 'line' ? { size: 5, fill: s.stroke, stroke: s.stroke }
          : { show: s.kind === 'points' || s.kind === 'line-points', size: 6, fill: s.stroke, stroke: s.stroke },
        paths: s.kind === 'step' ? uPlot.paths.stepped({ align: 1 })
          : s.kind === 'bars' ? uPlot.paths.bars({ size: [0.7, 40] })
          : s.kind === 'points' ? () => null
          : undefined,
      }))],
      axes: [timeAxis(seconds), ...scaleNames.slice(0, 2).map((sc, i) => axis({ scale: sc, side: i === 0 ? 3 : 1, grid: { show: i === 0, stroke: GRID, width: 1 }, ...(axes[sc] || {}) }))],
      hooks: {
        draw: [u => {
          el.dataset.points = String(u.data[0] ? u.data[0].length : 0);
          el.dataset.drawn = 'true';
        }],
      },
    };
    this.u = new uPlot(opts, [[], ...series.map(() => [])], el);
    this.ro = new ResizeObserver(() => {
      const w = Math.max(200, el.clientWidth);
      if (this.u && w !== this.u.width) this.u.setSize({ width: w, height });
    });
    this.ro.observe(el);
  }

  setData(data) {
    if (!this.u) return;
    this.u.setData(data);
  }

  destroy() {
    if (this.ro) this.ro.disconnect();
    if (this.u) this.u.destroy();
    this.u = null;
  }
}

/** A trend over time with two value scales (left and right axis). */
export class TrendChart extends Chart {
  constructor(el, series) {
    // every scale from zero: a wobble of 2 % must not look like a cliff
    const fromZero = (u, min, max) => [0, max > 0 ? max * 1.1 : 1];
    const scales = Object.fromEntries(series.map(s => [s.scale, { range: fromZero }]));
    super(el, series.map(s => ({ ...s, kind: 'line' })), { height: 180, scales });
  }
}

/** A device's recent results: latency (line with points) and UP/DOWN (step line on its own 0..1 scale). */
export class HistoryChart extends Chart {
  constructor(el) {
    super(el, [
      { label: 'latency', stroke: '#4e9ff5', scale: 'ms', kind: 'line-points', value: (u, v) => (v === null || v === undefined ? '—' : v + ' ms') },
      { label: 'status', stroke: '#3fbf6f', scale: 'up', kind: 'step', value: (u, v) => (v === null || v === undefined ? '—' : v ? 'UP' : 'DOWN') },
    ], {
      height: 240,
      scales: { up: { range: [-0.1, 1.1] } },
      axes: {
        ms: { label: 'latency ms', labelFont: '12px system-ui, sans-serif' },
        up: { splits: () => [0, 1], values: (u, vals) => vals.map(v => (v === 1 ? 'UP' : v === 0 ? 'DOWN' : '')), size: 60 },
      },
    });
  }
}

/** Per-minute rollups: results (bars) and DOWN results (bars in red), on one count scale, over a fixed window. */
export class RollupChart extends Chart {
  constructor(el) {
    let chart = null;
    super(el, [
      { label: 'results', stroke: '#4e9ff5', fill: 'rgba(78,159,245,0.35)', scale: 'n', kind: 'bars' },
      { label: 'down', stroke: '#e5534b', fill: 'rgba(229,83,75,0.6)', scale: 'n', kind: 'bars' },
      { label: 'state changes', stroke: '#f5a524', scale: 'n', kind: 'points' },
    ], {
      height: 180,
      seconds: false,
      scales: {
        n: { range: (u, min, max) => [0, Math.max(1, max)] },
        // the whole requested window, not just the minutes that have rollups
        x: { time: true, range: (u, min, max) => (chart && chart.window ? chart.window : [min, max]) },
      },
    });
    chart = this;
  }

  /** The window shown, in epoch seconds. */
  setWindow(from, to) {
    this.window = [from, to];
  }
}
