// The page over `trainplan serve`: the form becomes the same scenario document the command line reads,
// the server computes, and this file only draws what it answers (tables and inline SVG charts).
'use strict';

const $ = (sel) => document.querySelector(sel);
const SVG_NS = 'http://www.w3.org/2000/svg';
const FIELDS = ['model', 'method', 'tokens', 'seq_len', 'global_batch', 'gpu', 'gpus', 'budget', 'deadline',
                'host_ram'];
// Which form control an API error's field points at.
const FIELD_INPUT = {
  'model': 'model', 'model.config': 'config', 'training.method': 'method', 'training.tokens': 'tokens',
  'training.seq_len': 'seq-len', 'training.global_batch': 'global-batch', 'plan.gpu': 'gpu', 'plan.gpus': 'gpus',
  'plan.budget_usd': 'budget', 'plan.deadline': 'deadline', 'recommend.deadline': 'deadline',
  'recommend.budget_usd': 'budget', 'hardware.host_ram_gb': 'host-ram',
};
const COLORS = ['#2459c4', '#5b8def', '#9fbaf5', '#e07b39', '#f2b134', '#55a868', '#8c6bb1', '#999999', '#c7c7c7',
                '#d1495b'];

// Formats shared by every view, so a number reads the same in the table, the charts and the cards.
const fmt = {
  gib: (bytes) => (bytes / 2 ** 30).toFixed(1) + ' GiB',
  gb: (bytes) => (bytes / 1e9).toFixed(0) + ' GB',
  usd: (x) => x === null || x === undefined ? 'unknown'
    : '$' + x.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2}),
  pct: (x) => (x * 100).toFixed(1) + '%',
  // Axis ticks only: durations the engine computed come with its own text (time.duration).
  tick(s) {
    if (s === null || s === undefined || !isFinite(s)) return 'never';
    if (s < 120) return s.toFixed(1) + ' s';
    if (s < 7200) return (s / 60).toFixed(1) + ' min';
    if (s < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' days';
  },
};

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith('svg:') ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v;
    else if (k === 'class') node.setAttribute('class', v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// ---- form <-> state <-> URL ----

function readForm() {
  const state = {mode: document.querySelector('input[name=mode]:checked').value};
  for (const f of FIELDS) state[f] = document.getElementsByName(f)[0].value.trim();
  const config = $('#config').value.trim();
  if (config) state.config = config;
  return state;
}

function writeForm(state) {
  for (const f of FIELDS) if (state[f] !== undefined) document.getElementsByName(f)[0].value = state[f];
  if (state.config) {
    $('#config').value = state.config;
    $('#config-box').open = true;
  }
  const mode = state.mode === 'budget' ? 'budget' : 'gpus';
  document.querySelector(`input[name=mode][value=${mode}]`).checked = true;
  showMode();
}

function showMode() {
  const budget = document.querySelector('input[name=mode]:checked').value === 'budget';
  $('#gpus-fields').hidden = budget;
  $('#budget-fields').hidden = !budget;
}

function shareUrl(state) {
  const params = new URLSearchParams();
  const keep = ['model', 'config', 'method', 'tokens', 'seq_len', 'global_batch', 'host_ram', 'mode'].concat(
    state.mode === 'budget' ? ['budget', 'deadline'] : ['gpu', 'gpus']);
  for (const k of keep) if (state[k]) params.set(k, state[k]);
  return location.origin + location.pathname + '#' + params.toString();
}

function stateFromHash() {
  if (location.hash.length < 2) return null;
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

// A number when the text is one; otherwise the text itself, so the engine names what is wrong with it.
const numberOr = (text) => text !== '' && isFinite(Number(text)) ? Number(text) : text;

class InputProblem extends Error {
  constructor(field, value, allowed) {
    super(`invalid ${field} '${value}': ${allowed}`);
    this.field = field;
  }
}

// The scenario document, as `trainplan plan` builds it from its flags.
function scenario(state) {
  let model = state.model;
  if (state.config) {
    let config;
    try {
      config = JSON.parse(state.config);
    } catch (e) {
      throw new InputProblem('model.config', state.config.slice(0, 40), 'a Hugging Face config.json (' + e.message + ')');
    }
    model = {config};
  }
  const training = {method: state.method};
  for (const k of ['tokens', 'seq_len', 'global_batch']) if (state[k] !== '') training[k] = numberOr(state[k]);
  if (state.host_ram) return {model, training, hardware: {host_ram_gb: numberOr(state.host_ram)}};
  return {model, training};
}

function requests(state) {
  const job = scenario(state);
  if (state.mode === 'budget') {
    const limits = {budget_usd: numberOr(state.budget), deadline: state.deadline};
    return {plan: {...job, plan: {...limits, top: 10}}, recommend: {...job, recommend: limits}};
  }
  const gpus = numberOr(state.gpus);
  return {
    plan: {...job, plan: {gpu: state.gpu, gpus, top: 10}},
    recommend: {...job, recommend: {gpu: [state.gpu], gpus}},
  };
}

async function post(path, body) {
  const res = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                 body: JSON.stringify(body)});
  const data = await res.json();
  if (!res.ok) throw Object.assign(new Error(data.error), {field: data.field, allowed: data.allowed});
  return data;
}

// ---- errors ----

function showError(err) {
  const box = $('#error');
  box.textContent = err.message;
  box.dataset.field = err.field || '';
  box.hidden = false;
  const input = FIELD_INPUT[err.field] && document.getElementById(FIELD_INPUT[err.field]);
  if (input) {
    input.setAttribute('aria-invalid', 'true');
    if (input.id === 'config') $('#config-box').open = true;
  }
}

function clearError() {
  $('#error').hidden = true;
  for (const node of document.querySelectorAll('[aria-invalid]')) node.removeAttribute('aria-invalid');
}

// ---- views ----

function memoryChart(plan) {
  const mem = plan.memory;
  const terms = Object.entries(mem.components).filter(([, b]) => b > 0);
  const scale = Math.max(mem.capacity_bytes, mem.per_gpu_bytes) * 1.08;
  const W = 640, H = 96, left = 8, barY = 26, barH = 32, width = W - 2 * left;
  const x = (b) => left + (b / scale) * width;
  const svg = el('svg:svg', {viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': `memory per GPU ${fmt.gib(mem.per_gpu_bytes)} of ${fmt.gib(mem.capacity_bytes)}`});
  let at = 0;
  terms.forEach(([name, bytes], i) => {
    const rect = el('svg:rect', {x: x(at), y: barY, width: Math.max(0.5, x(at + bytes) - x(at)), height: barH,
                                 fill: COLORS[i % COLORS.length], 'data-term': name, 'data-bytes': bytes});
    rect.append(el('svg:title', {text: `${name}: ${fmt.gib(bytes)}`}));
    svg.append(rect);
    at += bytes;
  });
  const cap = x(mem.capacity_bytes);
  svg.append(el('svg:line', {x1: cap, x2: cap, y1: 20, y2: barY + barH + 8, stroke: mem.fits ? '#1d2330' : '#b3261e',
                             'stroke-width': 2, 'stroke-dasharray': '4 3'}));
  svg.append(el('svg:text', {x: Math.min(cap, W - 4), y: 16, 'text-anchor': 'end', id: 'memory-capacity',
                             text: `capacity ${fmt.gib(mem.capacity_bytes)}`}));
  svg.append(el('svg:text', {x: left, y: barY + barH + 24, id: 'memory-total',
                             text: `used ${fmt.gib(mem.per_gpu_bytes)}`}));
  const legend = el('div', {class: 'legend'});
  terms.forEach(([name, bytes], i) => {
    const item = el('span', {text: `${name.replace(/_/g, ' ')} ${fmt.gib(bytes)}`});
    item.style.setProperty('--swatch', COLORS[i % COLORS.length]);
    legend.append(item);
  });
  $('#memory-chart').replaceChildren(svg, legend);
  const hw = plan.hardware;
  $('#memory-note').textContent = `Best plan: ${hw.gpus} x ${hw.gpu_name}, the busiest GPU. ` +
    (mem.fits ? 'It fits.' : 'It does not fit.');
}

function plansTable(result) {
  const body = $('#plans-table tbody');
  body.replaceChildren();
  result.plans.forEach((p, i) => {
    const cell = (text, value, cls) => el('td', Object.assign({text}, value === undefined ? {} : {'data-value': value},
                                                               cls ? {class: cls} : {}));
    const row = el('tr', i === 0 ? {class: 'best'} : {},
      cell(String(i + 1)),
      cell(`${p.hardware.gpus} x ${p.hardware.gpu}`, p.hardware.gpus),
      cell(p.training.framework),
      cell(p.strategy_text),
      cell(fmt.gib(p.memory.per_gpu_bytes), p.memory.per_gpu_bytes, 'num'),
      cell(p.time.duration, p.time.total_s, 'num'),
      cell(fmt.usd(p.cost.total_usd), p.cost.total_usd, 'num'),
      cell(fmt.pct(p.time.mfu), p.time.mfu, 'num'));
    row.title = p.why;
    body.append(row);
  });
  const alt = $('#alternatives');
  alt.replaceChildren();
  if (!result.feasible) {
    alt.append(el('p', {class: 'note', text: 'Nothing fits as asked: ' + result.reason}));
    const list = el('ul');
    for (const a of result.alternatives) list.append(el('li', {text: `${a.change}: ${a.summary}`}));
    alt.append(list);
  }
}

// The plans' Pareto front (filled) over every buy-or-rent option the recommendation considered (hollow,
// by kind): training time against cost, log-log.
function paretoChart(result, rec) {
  const front = result.pareto.filter((p) => p.time.total_s > 0 && p.cost.total_usd > 0)
    .map((p) => ({t: p.time.total_s, d: p.time.duration, c: p.cost.total_usd,
                  label: `${p.hardware.gpus} x ${p.hardware.gpu}`}));
  const options = (rec && rec.considered ? rec.considered : []).filter((o) => o.time_s > 0 && o.cost_usd > 0)
    .map((o) => ({t: o.time_s, d: o.duration, c: o.cost_usd, kind: o.kind, label: `${o.kind}: ${o.gpus} x ${o.gpu}`}));
  const box = $('#pareto-chart');
  const all = front.concat(options);
  if (!all.length) {
    box.replaceChildren(el('p', {class: 'note', text: 'No priced plan to chart.'}));
    return;
  }
  const W = 640, H = 300, m = {l: 84, r: 16, t: 24, b: 46};
  // Log axes with room around the points: plans span orders of magnitude in both.
  const axis = (vals) => {
    const lo = Math.log10(Math.min(...vals)), hi = Math.log10(Math.max(...vals));
    const pad = Math.max(0.15, (hi - lo) * 0.08);
    return [lo - pad, hi + pad];
  };
  const [x0, x1] = axis(all.map((p) => p.t)), [y0, y1] = axis(all.map((p) => p.c));
  const sx = (v) => m.l + (Math.log10(v) - x0) / (x1 - x0) * (W - m.l - m.r);
  const sy = (v) => H - m.b - (Math.log10(v) - y0) / (y1 - y0) * (H - m.t - m.b);
  const svg = el('svg:svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'training time against cost'});
  svg.append(el('svg:rect', {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: 'none',
                             stroke: '#d9dee7'}));
  const ticks = (lo, hi) => {
    const step = hi - lo > 4 ? 1 : 0.5;
    const out = [];
    for (let e = Math.ceil(lo / step) * step; e <= hi; e += step) out.push(10 ** e);
    return out.length ? out : [10 ** ((lo + hi) / 2)];
  };
  for (const t of ticks(x0, x1)) {
    svg.append(el('svg:line', {x1: sx(t), x2: sx(t), y1: m.t, y2: H - m.b, stroke: '#eef0f4'}));
    svg.append(el('svg:text', {x: sx(t), y: H - m.b + 20, 'text-anchor': 'middle', text: fmt.tick(t)}));
  }
  for (const t of ticks(y0, y1)) {
    svg.append(el('svg:line', {x1: m.l, x2: W - m.r, y1: sy(t), y2: sy(t), stroke: '#eef0f4'}));
    svg.append(el('svg:text', {x: m.l - 6, y: sy(t) + 4, 'text-anchor': 'end',
                               text: '$' + Number(t.toPrecision(2)).toLocaleString('en-US')}));
  }
  svg.append(el('svg:text', {x: (W + m.l) / 2, y: H - 6, 'text-anchor': 'middle', text: 'training time (log)'}));
  svg.append(el('svg:text', {x: 4, y: 16, text: 'cost (log)'}));
  const KIND_COLOR = {'cloud': '#5b8def', 'on-prem': '#e07b39', 'hybrid': '#55a868'};
  for (const o of options) {
    const dot = el('svg:circle', {cx: sx(o.t), cy: sy(o.c), r: 4, fill: 'none', stroke: KIND_COLOR[o.kind] || '#999',
                                  'stroke-width': 1.5, class: 'option-point'});
    dot.append(el('svg:title', {text: `${o.label}: ${o.d}, ${fmt.usd(o.c)}`}));
    svg.append(dot);
  }
  const sorted = [...front].sort((a, b) => a.t - b.t);
  svg.append(el('svg:polyline', {fill: 'none', stroke: '#2459c4', 'stroke-width': 1.5,
                                 points: sorted.map((p) => `${sx(p.t)},${sy(p.c)}`).join(' ')}));
  for (const p of front) {
    const dot = el('svg:circle', {cx: sx(p.t), cy: sy(p.c), r: 5.5, fill: '#2459c4', class: 'pareto-point',
                                  'data-time-s': p.t, 'data-cost-usd': p.c});
    dot.append(el('svg:title', {text: `${p.label}: ${p.d}, ${fmt.usd(p.c)}`}));
    svg.append(dot);
  }
  const legend = el('div', {class: 'legend'});
  const swatch = (text, color) => {
    const item = el('span', {text});
    item.style.setProperty('--swatch', color);
    legend.append(item);
  };
  swatch('Pareto front of the plans', '#2459c4');
  for (const kind of Object.keys(KIND_COLOR)) {
    if (options.some((o) => o.kind === kind)) swatch(`${kind} options considered`, KIND_COLOR[kind]);
  }
  box.replaceChildren(svg, legend);
}

function optionCard(o, first) {
  const dl = el('dl');
  const add = (k, v) => dl.append(el('dt', {text: k}), el('dd', {text: v}));
  add('time', o.time.duration);
  // The engine's own words: "$X", "at least $X; not priced: ...", or "no price; ..." (never a made-up $0).
  add('total cost', o.cost.text || fmt.usd(o.cost.total_usd));
  if (o.cost.runs && o.cost.runs !== 1 && o.cost.usd_per_run !== null) {
    add('per run', `${fmt.usd(o.cost.usd_per_run)} over ${o.cost.runs.toPrecision(4)} runs`);
  }
  if (o.break_even) add('break-even', o.break_even);
  if (o.cost.price_source) add('price source', o.cost.price_source);
  if (o.cost.hardware_usd) add('hardware', fmt.usd(o.cost.hardware_usd));
  if (o.cost.power_usd) add('power', fmt.usd(o.cost.power_usd));
  if (o.cost.hosting_usd) add('hosting', fmt.usd(o.cost.hosting_usd));
  if (o.cost.rental_usd) add('rental', fmt.usd(o.cost.rental_usd));
  add('memory / GPU', `${fmt.gib(o.memory.per_gpu_bytes)} of ${fmt.gib(o.memory.capacity_bytes)}`);
  if (o.bom) {
    const b = o.bom;
    add('build', `${b.nodes} x ${b.node_class}, ${b.gpus_per_node} GPUs each`);
    if (b.cpu) add('CPU', `${b.cpu.sockets} x ${b.cpu.name}`);
    add('RAM', fmt.gb(b.ram_bytes));
    if (b.storage && b.storage.tiers) {
      add('storage', b.storage.tiers.map((t) => `${t.count} x ${t.drive_name}`).join('; '));
    }
    add('power supply', `${b.psu_watts} W`);
    if (b.cooling) add('cooling', b.cooling.kind);
  }
  const card = el('div', {class: first ? 'option first' : 'option'},
    el('h3', {text: `${o.kind}${o.dedicated ? ' (dedicated)' : ''}: ${o.gpus} x ${o.gpu}`}), dl);
  const why = el('ul');
  for (const w of o.why) why.append(el('li', {text: w}));
  card.append(why);
  return card;
}

function recommendView(rec) {
  const box = $('#recommend');
  if (!rec.feasible) {
    box.replaceChildren(el('p', {text: 'Nothing suits as asked: ' + rec.reason}));
    return;
  }
  const cards = el('div', {class: 'options'});
  rec.options.forEach((o, i) => cards.append(optionCard(o, i === 0)));
  box.replaceChildren(cards);
}

// ---- flow ----

async function run(state) {
  clearError();
  let bodies;
  try {
    bodies = requests(state);
  } catch (e) {
    showError(e);
    return;
  }
  $('#run').disabled = true;
  $('#status').textContent = 'searching...';
  history.replaceState(null, '', shareUrl(state));
  $('#share-link').value = shareUrl(state);
  try {
    const [plan, rec] = await Promise.all([post('/api/plan', bodies.plan),
                                           post('/api/recommend', bodies.recommend).catch((e) => e)]);
    $('#results').hidden = false;
    const best = plan.plans[0];
    // The batch is stated with its source: an empty field takes the server's one default (core's DefaultGlobalBatch).
    $('#summary').textContent = best ? best.why + '; ' + best.strategy.global_batch_note : 'No plan fits: ' + plan.reason;
    if (best) memoryChart(best); else $('#memory-chart').replaceChildren();
    plansTable(plan);
    paretoChart(plan, rec instanceof Error ? null : rec);
    if (rec instanceof Error) $('#recommend').replaceChildren(el('p', {class: 'note', text: rec.message}));
    else recommendView(rec);
    $('#status').textContent = `${plan.search.evaluated.toLocaleString('en-US')} strategies evaluated in ` +
      `${(plan.search.seconds * 1000).toFixed(1)} ms.`;
  } catch (e) {
    $('#results').hidden = true;
    $('#status').textContent = '';
    showError(e);
  } finally {
    $('#run').disabled = false;
  }
}

async function init() {
  const [models, gpus] = await Promise.all([fetch('/api/models').then((r) => r.json()),
                                            fetch('/api/gpus').then((r) => r.json())]);
  const list = $('#model-list');
  // Image-text checkpoints: the frozen vision tower is loaded and held beside the trained language model.
  const size = (p) => `${(p.total / 1e9).toFixed(1)} B` + (p.vision > 0 ? ` + ${(p.vision / 1e9).toFixed(2)} B frozen vision` : '');
  for (const m of models) list.append(el('option', {value: m.id, text: `${m.hf_id} (${size(m.params)})`}));
  const select = $('#gpu');
  for (const g of gpus) select.append(el('option', {value: g.id, text: `${g.name} (${fmt.gib(g.memory_bytes)})`}));
  select.value = 'h100-sxm';
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', showMode);
  $('#job').addEventListener('submit', (e) => {
    e.preventDefault();
    run(readForm());
  });
  $('#copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('#share-link').value));
  const shared = stateFromHash();
  if (shared) {
    writeForm(shared);
    run(readForm());
  }
  document.body.dataset.ready = 'true';
}

init().catch(showError);
