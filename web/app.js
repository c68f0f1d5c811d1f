// The page over `trainplan serve`: the form becomes the same scenario document the command line reads,
// the server computes, and this file only draws what it answers (tables and inline SVG charts).
// Every word the page itself writes comes from one dictionary, in English and Simplified Chinese; the
// engine's own sentences (why a plan ranks, durations, cost notes) come from the server as they are.
'use strict';

const $ = (sel) => document.querySelector(sel);
const SVG_NS = 'http://www.w3.org/2000/svg';
const FIELDS = ['model', 'method', 'tokens', 'seq_len', 'global_batch', 'gpu', 'gpus', 'budget', 'deadline',
                'host_ram', 'region', 'currency'];
// Which form control an API error's field points at.
const FIELD_INPUT = {
  'model': 'model', 'model.config': 'config', 'training.method': 'method', 'training.tokens': 'tokens',
  'training.seq_len': 'seq-len', 'training.global_batch': 'global-batch', 'plan.gpu': 'gpu', 'plan.gpus': 'gpus',
  'plan.budget': 'budget', 'plan.deadline': 'deadline', 'recommend.deadline': 'deadline',
  'recommend.budget': 'budget', 'hardware.host_ram_gb': 'host-ram', 'plan.currency': 'currency',
  'recommend.currency': 'currency', 'recommend.region': 'region',
};
const COLORS = ['#2459c4', '#5b8def', '#9fbaf5', '#e07b39', '#f2b134', '#55a868', '#8c6bb1', '#999999', '#c7c7c7',
                '#d1495b'];
const LANGS = ['en', 'zh'];
const CURRENCY_SYMBOL = {USD: '$', CNY: '¥', EUR: '€'};

// The page's words: key -> {en, zh}; a function takes the values it names. Chinese follows the terms the
// field uses in China (显存, 张量并行, 优化器状态, 断点续训, 云上租用/自建/混合, ...).
const I18N = {
  tagline: {en: 'What it takes to train or fine-tune a model: memory per GPU, time, cost and the hardware to buy or rent.',
            zh: '训练或微调一个模型需要什么：每卡显存、训练时间、成本，以及该采购或租用的硬件。'},
  job: {en: 'Job', zh: '训练任务'},
  model: {en: 'Model', zh: '模型'},
  model_hint: {en: 'search the catalog: llama, qwen, mixtral...', zh: '搜索模型库：llama、qwen、mixtral……'},
  paste_config: {en: 'or paste a Hugging Face config.json', zh: '或粘贴 Hugging Face 的 config.json'},
  config_allowed: {en: 'a Hugging Face config.json', zh: 'Hugging Face 的 config.json'},
  method: {en: 'Method', zh: '训练方式'},
  method_pretrain: {en: 'pretrain', zh: '预训练'},
  method_full: {en: 'full fine-tuning', zh: '全参数微调'},
  method_freeze: {en: 'freeze (top layers train)', zh: '冻结微调（只训练顶层）'},
  tokens: {en: 'Training tokens', zh: '训练 token 数'},
  seq_len: {en: 'Sequence length', zh: '序列长度'},
  global_batch: {en: 'Global batch', zh: '全局批大小'},
  default: {en: 'default', zh: '默认'},
  hardware: {en: 'Hardware', zh: '硬件'},
  mode_gpus: {en: 'GPUs I have', zh: '已有的 GPU'},
  mode_budget: {en: 'A budget and a deadline', zh: '预算和截止时间'},
  gpu_count: {en: 'GPUs', zh: 'GPU 数量'},
  budget: {en: 'Budget', zh: '预算'},
  deadline: {en: 'Deadline', zh: '截止时间'},
  host_ram: {en: 'Host RAM per node (GB)', zh: '每节点主机内存（GB）'},
  any: {en: 'any', zh: '不限'},
  currency: {en: 'Currency', zh: '币种'},
  // Where the hardware is rented or bought: the recommendation's rental market and export rules.
  region: {en: 'Region (recommendation)', zh: '地区（用于推荐）'},
  region_us: {en: 'United States', zh: '美国'},
  region_eu: {en: 'European Union', zh: '欧盟'},
  region_cn: {en: 'Mainland China', zh: '中国大陆'},
  plan_button: {en: 'Plan', zh: '开始规划'},
  share: {en: 'Share this view', zh: '分享此视图'},
  copy: {en: 'Copy link', zh: '复制链接'},
  memory_heading: {en: 'Memory per GPU', zh: '每卡显存'},
  plans_heading: {en: 'Ranked plans', zh: '方案排名'},
  col_gpus: {en: 'GPUs', zh: 'GPU'},
  col_framework: {en: 'Framework', zh: '框架'},
  col_strategy: {en: 'Strategy', zh: '并行策略'},
  col_memory: {en: 'Memory / GPU', zh: '每卡显存'},
  col_time: {en: 'Time', zh: '训练时间'},
  col_cost: {en: 'Cost', zh: '成本'},
  col_mfu: {en: 'MFU', zh: '算力利用率 (MFU)'},
  strategy_legend: {en: 'Strategy: tp tensor parallel, pp pipeline parallel, dp data parallel, cp context parallel, ep expert parallel (etp: the experts\' tensor parallel), v interleaved pipeline stages, zero ZeRO stage (optimizer states, gradients, weights sharded), offload to host memory, mb micro-batch, recompute activation recomputation.',
                    zh: '并行策略：tp 张量并行，pp 流水线并行，dp 数据并行，cp 上下文并行，ep 专家并行（etp：专家层的张量并行），v 交错流水线阶段数，zero ZeRO 阶段（切分优化器状态、梯度、权重），offload 卸载到主机内存，mb 微批大小，recompute 激活重计算。'},
  reliability: {en: (every, n, goodput) => `Checkpoint and resume (first option): save every ${every}, ${n} interruptions expected over the run, goodput ${goodput}.`,
                zh: (every, n, goodput) => `断点续训（首选方案）：每 ${every} 保存一次检查点，整次训练预计中断 ${n} 次，有效训练时间占比 ${goodput}。`},
  pareto_heading: {en: 'Time against cost', zh: '时间与成本'},
  pareto_note: {en: 'Filled: the plans on the Pareto front (no other plan is both faster and cheaper). Hollow: each buy or rent option the recommendation compared.',
                zh: '实心点：帕累托前沿上的方案（没有其他方案既更快又更便宜）。空心点：推荐时比较过的每个采购或租用选项。'},
  recommend_heading: {en: 'Recommended', zh: '推荐方案'},
  footer_before: {en: 'Computed by ', zh: '由本机的 '},
  footer_after: {en: ' on this machine; the same engine as the command line.', zh: ' 计算，与命令行使用同一引擎。'},
  searching: {en: 'searching...', zh: '正在搜索……'},
  evaluated: {en: (n, ms) => `${n} strategies evaluated in ${ms} ms.`, zh: (n, ms) => `已评估 ${n} 种策略，用时 ${ms} ms。`},
  no_plan_fits: {en: 'No plan fits: ', zh: '没有可行方案：'},
  nothing_fits: {en: 'Nothing fits as asked: ', zh: '按当前要求没有可行方案：'},
  nothing_suits: {en: 'Nothing suits as asked: ', zh: '按当前要求没有合适的选项：'},
  error_input: {en: 'Invalid input: ', zh: '输入有误：'},
  error_server: {en: 'Server error: ', zh: '服务器错误：'},
  capacity: {en: 'capacity', zh: '容量'},
  used: {en: 'used', zh: '已用'},
  memory_label: {en: (used, cap) => `memory per GPU ${used} of ${cap}`, zh: (used, cap) => `每卡显存 ${used} / ${cap}`},
  best_plan: {en: (gpus, name) => `Best plan: ${gpus} x ${name}, the busiest GPU. `,
              zh: (gpus, name) => `最优方案：${gpus} x ${name}，显存占用最高的那张卡。`},
  fits: {en: 'It fits.', zh: '显存够用。'},
  does_not_fit: {en: 'It does not fit.', zh: '显存不够。'},
  term_weights: {en: 'weights', zh: '权重'},
  term_master_weights: {en: 'master weights', zh: '主权重（混合精度）'},
  term_gradients: {en: 'gradients', zh: '梯度'},
  term_optimizer_states: {en: 'optimizer states', zh: '优化器状态'},
  term_activations: {en: 'activations', zh: '激活值'},
  term_logits: {en: 'logits', zh: 'logits'},
  term_comm_buffers: {en: 'comm buffers', zh: '通信缓冲区'},
  term_runtime: {en: 'runtime', zh: '运行时'},
  term_fragmentation: {en: 'fragmentation', zh: '显存碎片'},
  no_priced_plan: {en: 'No priced plan to chart.', zh: '没有带价格的方案可画图。'},
  chart_label: {en: 'training time against cost', zh: '训练时间与成本'},
  axis_time: {en: 'training time (log)', zh: '训练时间（对数）'},
  axis_cost: {en: 'cost (log)', zh: '成本（对数）'},
  pareto_legend: {en: 'Pareto front of the plans', zh: '方案的帕累托前沿'},
  options_considered: {en: (kind) => `${kind} options considered`, zh: (kind) => `比较过的${kind}选项`},
  kind_cloud: {en: 'cloud', zh: '云上租用'},
  'kind_on-prem': {en: 'on-prem', zh: '自建'},
  kind_hybrid: {en: 'hybrid', zh: '混合'},
  dedicated: {en: ' (dedicated)', zh: '（专属）'},
  time: {en: 'time', zh: '训练时间'},
  total_cost: {en: 'total cost', zh: '总成本'},
  per_run: {en: 'per run', zh: '每次训练'},
  over_runs: {en: (amount, runs) => `${amount} over ${runs} runs`, zh: (amount, runs) => `${amount}，共 ${runs} 次训练`},
  break_even: {en: 'break-even', zh: '回本'},
  price_source: {en: 'price source', zh: '价格来源'},
  hardware_cost: {en: 'hardware', zh: '硬件'},
  power: {en: 'power', zh: '电费'},
  hosting: {en: 'hosting', zh: '托管'},
  rental: {en: 'rental', zh: '租金'},
  memory_gpu: {en: 'memory / GPU', zh: '每卡显存'},
  of: {en: (a, b) => `${a} of ${b}`, zh: (a, b) => `${a} / ${b}`},
  build: {en: 'build', zh: '整机配置'},
  build_value: {en: (n, cls, g) => `${n} x ${cls}, ${g} GPUs each`, zh: (n, cls, g) => `${n} x ${cls}，每台 ${g} 张 GPU`},
  cpu: {en: 'CPU', zh: 'CPU'},
  ram: {en: 'RAM', zh: '内存'},
  storage: {en: 'storage', zh: '存储'},
  psu: {en: 'power supply', zh: '电源'},
  cooling: {en: 'cooling', zh: '散热'},
  node_class_workstation: {en: 'workstation', zh: '工作站'},
  node_class_server: {en: 'server', zh: '服务器'},
  cooling_air: {en: 'air', zh: '风冷'},
  cooling_liquid: {en: 'liquid', zh: '液冷'},
  unknown: {en: 'unknown', zh: '未知'},
  frozen_vision: {en: 'frozen vision', zh: '冻结的视觉编码器'},
  never: {en: 'never', zh: '无'},
  days: {en: 'days', zh: '天'},
  amounts_in: {en: (code) => `Amounts in ${code}.`, zh: (code) => `金额单位：${code}。`},
  rate_line: {en: (c) => `Amounts in ${c.code} at 1 USD = ${c.per_usd} ${c.code} (${c.rule}, ${c.date}). Source: ${c.source}`,
              zh: (c) => `金额单位：${c.code}，汇率 1 USD = ${c.per_usd} ${c.code}（${c.rule}，${c.date}）。来源：${c.source}`},
};

let lang = 'en';
// The currency follows the language (CNY for Chinese) until the user or the link picks one.
let currencyChosen = false;
let shown = null;  // the last answers, redrawn when the language changes
let catalogModels = [];  // /api/models, listed in the page's language

function t(key, ...args) {
  const entry = I18N[key];
  if (!entry) throw new Error(`no text for '${key}'`);
  const text = entry[lang];
  return typeof text === 'function' ? text(...args) : text;
}

// The browser's first language we have: zh-CN, zh-TW, zh... read Chinese; anything else English.
function browserLang() {
  for (const l of navigator.languages || [navigator.language || 'en']) {
    const base = l.toLowerCase().split('-')[0];
    if (LANGS.includes(base)) return base;
  }
  return 'en';
}

const defaultCurrency = () => lang === 'zh' ? 'CNY' : 'USD';

// Formats shared by every view, so a number reads the same in the table, the charts and the cards; numbers
// and units are written the same in both languages.
const fmt = {
  gib: (bytes) => (bytes / 2 ** 30).toFixed(1) + ' GiB',
  gb: (bytes) => (bytes / 1e9).toFixed(0) + ' GB',
  money: (x, code) => x === null || x === undefined ? t('unknown')
    : CURRENCY_SYMBOL[code] + x.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2}),
  pct: (x) => (x * 100).toFixed(1) + '%',
  // Axis ticks only: durations the engine computed come with its own text (time.duration).
  tick(s) {
    if (s === null || s === undefined || !isFinite(s)) return t('never');
    if (s < 120) return s.toFixed(1) + ' s';
    if (s < 7200) return (s / 60).toFixed(1) + ' min';
    if (s < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' ' + t('days');
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

// ---- language ----

// Writes every dictionary text into the page, marks the active switch, and redraws the shown answers.
function applyLang(next) {
  lang = LANGS.includes(next) ? next : 'en';
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  for (const b of document.querySelectorAll('.lang-switch button')) b.setAttribute('aria-pressed', b.dataset.lang === lang);
  if (!$('#error').hidden && $('#error').dataset.kind) $('#error-prefix').textContent = t($('#error').dataset.kind);
  modelList();
  if (shown) render(shown.plan, shown.rec);
}

function showCurrency() {
  for (const node of document.querySelectorAll('.currency-code')) node.textContent = $('#currency').value;
}

function modelList() {
  // Image-text checkpoints: the frozen vision tower is loaded and held beside the trained language model.
  const size = (p) => `${(p.total / 1e9).toFixed(1)} B` +
    (p.vision > 0 ? ` + ${(p.vision / 1e9).toFixed(2)} B ${t('frozen_vision')}` : '');
  $('#model-list').replaceChildren(...catalogModels.map((m) =>
    el('option', {value: m.id, text: `${m.hf_id} (${size(m.params)})`})));
}

// ---- form <-> state <-> URL ----

function readForm() {
  const state = {mode: document.querySelector('input[name=mode]:checked').value, lang};
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
  showCurrency();
}

function showMode() {
  const budget = document.querySelector('input[name=mode]:checked').value === 'budget';
  $('#gpus-fields').hidden = budget;
  $('#budget-fields').hidden = !budget;
}

function shareUrl(state) {
  const params = new URLSearchParams();
  const keep = ['lang', 'currency', 'region', 'model', 'config', 'method', 'tokens', 'seq_len', 'global_batch', 'host_ram',
                'mode'].concat(state.mode === 'budget' ? ['budget', 'deadline'] : ['gpu', 'gpus']);
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
    this.kind = 'error_input';
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
      throw new InputProblem('model.config', state.config.slice(0, 40), `${t('config_allowed')} (${e.message})`);
    }
    model = {config};
  }
  const training = {method: state.method};
  for (const k of ['tokens', 'seq_len', 'global_batch']) if (state[k] !== '') training[k] = numberOr(state[k]);
  if (state.host_ram) return {model, training, hardware: {host_ram_gb: numberOr(state.host_ram)}};
  return {model, training};
}

// The plan and recommend requests; the budget is in the chosen currency, as --budget with --currency is.
function requests(state) {
  const job = scenario(state);
  const {currency, region} = state;
  if (state.mode === 'budget') {
    const limits = {currency, budget: numberOr(state.budget), deadline: state.deadline};
    return {plan: {...job, plan: {...limits, top: 10}}, recommend: {...job, recommend: {...limits, region}}};
  }
  const gpus = numberOr(state.gpus);
  return {
    plan: {...job, plan: {gpu: state.gpu, gpus, currency, top: 10}},
    recommend: {...job, recommend: {gpu: [state.gpu], gpus, currency, region}},
  };
}

// The server writes the answer's sentences (why, assumptions, alternatives) in the page's language.
async function post(path, body) {
  const res = await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                 body: JSON.stringify({...body, lang})});
  const data = await res.json();
  if (!res.ok) {
    throw Object.assign(new Error(data.error), {field: data.field, allowed: data.allowed,
                                                kind: res.status === 400 ? 'error_input' : 'error_server'});
  }
  return data;
}

// ---- errors ----

function showError(err) {
  const box = $('#error');
  box.dataset.kind = err.kind || 'error_server';
  $('#error-prefix').textContent = t(box.dataset.kind);
  $('#error-text').textContent = err.message;
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
    'aria-label': t('memory_label', fmt.gib(mem.per_gpu_bytes), fmt.gib(mem.capacity_bytes))});
  const term = (name) => I18N['term_' + name] ? t('term_' + name) : name.replace(/_/g, ' ');
  let at = 0;
  terms.forEach(([name, bytes], i) => {
    const rect = el('svg:rect', {x: x(at), y: barY, width: Math.max(0.5, x(at + bytes) - x(at)), height: barH,
                                 fill: COLORS[i % COLORS.length], 'data-term': name, 'data-bytes': bytes});
    rect.append(el('svg:title', {text: `${term(name)}: ${fmt.gib(bytes)}`}));
    svg.append(rect);
    at += bytes;
  });
  const cap = x(mem.capacity_bytes);
  svg.append(el('svg:line', {x1: cap, x2: cap, y1: 20, y2: barY + barH + 8, stroke: mem.fits ? '#1d2330' : '#b3261e',
                             'stroke-width': 2, 'stroke-dasharray': '4 3'}));
  svg.append(el('svg:text', {x: Math.min(cap, W - 4), y: 16, 'text-anchor': 'end', id: 'memory-capacity',
                             text: `${t('capacity')} ${fmt.gib(mem.capacity_bytes)}`}));
  svg.append(el('svg:text', {x: left, y: barY + barH + 24, id: 'memory-total',
                             text: `${t('used')} ${fmt.gib(mem.per_gpu_bytes)}`}));
  const legend = el('div', {class: 'legend'});
  terms.forEach(([name, bytes], i) => {
    const item = el('span', {text: `${term(name)} ${fmt.gib(bytes)}`});
    item.style.setProperty('--swatch', COLORS[i % COLORS.length]);
    legend.append(item);
  });
  $('#memory-chart').replaceChildren(svg, legend);
  const hw = plan.hardware;
  $('#memory-note').textContent = t('best_plan', hw.gpus, hw.gpu_name) + t(mem.fits ? 'fits' : 'does_not_fit');
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
      // A plan without a rental price has no cost (unknown, never 0); price_text says why.
      p.cost.usd_per_gpu_hour > 0 ? cell(fmt.money(p.cost.total, p.cost.currency), p.cost.total, 'num')
        : el('td', {class: 'num', text: t('unknown'), title: p.cost.price_text}),
      cell(fmt.pct(p.time.mfu), p.time.mfu, 'num'));
    row.title = p.why;
    body.append(row);
  });
  const alt = $('#alternatives');
  alt.replaceChildren();
  if (!result.feasible) {
    alt.append(el('p', {class: 'note', text: t('nothing_fits') + result.reason}));
    const list = el('ul');
    for (const a of result.alternatives) list.append(el('li', {text: `${a.change}: ${a.summary}`}));
    alt.append(list);
  }
}

// The plans' Pareto front (filled) over every buy-or-rent option the recommendation considered (hollow,
// by kind): training time against cost, log-log.
function paretoChart(result, rec, code) {
  const front = result.pareto.filter((p) => p.time.total_s > 0 && p.cost.total_usd > 0)
    .map((p) => ({t: p.time.total_s, d: p.time.duration, c: p.cost.total, usd: p.cost.total_usd,
                  label: `${p.hardware.gpus} x ${p.hardware.gpu}`}));
  const options = (rec && rec.considered ? rec.considered : []).filter((o) => o.time_s > 0 && o.cost_usd > 0)
    .map((o) => ({t: o.time_s, d: o.duration, c: o.cost, kind: o.kind,
                  label: `${t('kind_' + o.kind)}: ${o.gpus} x ${o.gpu}`}));
  const box = $('#pareto-chart');
  const all = front.concat(options);
  if (!all.length) {
    box.replaceChildren(el('p', {class: 'note', text: t('no_priced_plan')}));
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
  const svg = el('svg:svg', {viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': t('chart_label')});
  svg.append(el('svg:rect', {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: 'none',
                             stroke: '#d9dee7'}));
  const ticks = (lo, hi) => {
    const step = hi - lo > 4 ? 1 : 0.5;
    const out = [];
    for (let e = Math.ceil(lo / step) * step; e <= hi; e += step) out.push(10 ** e);
    return out.length ? out : [10 ** ((lo + hi) / 2)];
  };
  for (const v of ticks(x0, x1)) {
    svg.append(el('svg:line', {x1: sx(v), x2: sx(v), y1: m.t, y2: H - m.b, stroke: '#eef0f4'}));
    svg.append(el('svg:text', {x: sx(v), y: H - m.b + 20, 'text-anchor': 'middle', text: fmt.tick(v)}));
  }
  for (const v of ticks(y0, y1)) {
    svg.append(el('svg:line', {x1: m.l, x2: W - m.r, y1: sy(v), y2: sy(v), stroke: '#eef0f4'}));
    svg.append(el('svg:text', {x: m.l - 6, y: sy(v) + 4, 'text-anchor': 'end',
                               text: CURRENCY_SYMBOL[code] + Number(v.toPrecision(2)).toLocaleString('en-US')}));
  }
  svg.append(el('svg:text', {x: (W + m.l) / 2, y: H - 6, 'text-anchor': 'middle', text: t('axis_time')}));
  svg.append(el('svg:text', {x: 4, y: 16, text: t('axis_cost')}));
  const KIND_COLOR = {'cloud': '#5b8def', 'on-prem': '#e07b39', 'hybrid': '#55a868'};
  for (const o of options) {
    const dot = el('svg:circle', {cx: sx(o.t), cy: sy(o.c), r: 4, fill: 'none', stroke: KIND_COLOR[o.kind] || '#999',
                                  'stroke-width': 1.5, class: 'option-point'});
    dot.append(el('svg:title', {text: `${o.label}: ${o.d}, ${fmt.money(o.c, code)}`}));
    svg.append(dot);
  }
  const sorted = [...front].sort((a, b) => a.t - b.t);
  svg.append(el('svg:polyline', {fill: 'none', stroke: '#2459c4', 'stroke-width': 1.5,
                                 points: sorted.map((p) => `${sx(p.t)},${sy(p.c)}`).join(' ')}));
  for (const p of front) {
    const dot = el('svg:circle', {cx: sx(p.t), cy: sy(p.c), r: 5.5, fill: '#2459c4', class: 'pareto-point',
                                  'data-time-s': p.t, 'data-cost-usd': p.usd, 'data-cost': p.c});
    dot.append(el('svg:title', {text: `${p.label}: ${p.d}, ${fmt.money(p.c, code)}`}));
    svg.append(dot);
  }
  const legend = el('div', {class: 'legend'});
  const swatch = (text, color) => {
    const item = el('span', {text});
    item.style.setProperty('--swatch', color);
    legend.append(item);
  };
  swatch(t('pareto_legend'), '#2459c4');
  for (const kind of Object.keys(KIND_COLOR)) {
    if (options.some((o) => o.kind === kind)) swatch(t('options_considered', t('kind_' + kind)), KIND_COLOR[kind]);
  }
  box.replaceChildren(svg, legend);
}

function optionCard(o, first) {
  const dl = el('dl');
  const add = (k, v) => dl.append(el('dt', {text: t(k)}), el('dd', {text: v}));
  const c = o.cost;
  const money = (x) => fmt.money(x, c.currency);
  add('time', o.time.duration);
  // The engine's own words: "$X", "at least $X; not priced: ...", or "no price; ..." (never a made-up 0).
  add('total_cost', c.text || money(c.total));
  if (c.runs && c.runs !== 1 && c.per_run !== null) add('per_run', t('over_runs', money(c.per_run), c.runs.toPrecision(4)));
  if (o.break_even) add('break_even', o.break_even);
  if (c.price_source) add('price_source', c.price_source);
  if (c.hardware) add('hardware_cost', money(c.hardware));
  if (c.power) add('power', money(c.power));
  if (c.hosting) add('hosting', money(c.hosting));
  if (c.rental) add('rental', money(c.rental));
  add('memory_gpu', t('of', fmt.gib(o.memory.per_gpu_bytes), fmt.gib(o.memory.capacity_bytes)));
  if (o.bom) {
    const b = o.bom;
    add('build', t('build_value', b.nodes, t('node_class_' + b.node_class), b.gpus_per_node));
    if (b.cpu) add('cpu', `${b.cpu.sockets} x ${b.cpu.name}`);
    add('ram', fmt.gb(b.ram_bytes));
    if (b.storage && b.storage.tiers) {
      add('storage', b.storage.tiers.map((s) => `${s.count} x ${s.drive_name}`).join('; '));
    }
    add('psu', `${b.psu_watts} W`);
    if (b.cooling) add('cooling', t('cooling_' + b.cooling.kind));
  }
  const card = el('div', {class: first ? 'option first' : 'option', 'data-kind': o.kind},
    el('h3', {text: `${t('kind_' + o.kind)}${o.dedicated ? t('dedicated') : ''}: ${o.gpus} x ${o.gpu}`}), dl);
  const why = el('ul');
  for (const w of o.why) why.append(el('li', {text: w}));
  card.append(why);
  return card;
}

function recommendView(rec) {
  const box = $('#recommend');
  if (!rec.feasible) {
    box.replaceChildren(el('p', {text: t('nothing_suits') + rec.reason}));
    $('#reliability').textContent = '';
    return;
  }
  const cards = el('div', {class: 'options'});
  rec.options.forEach((o, i) => cards.append(optionCard(o, i === 0)));
  box.replaceChildren(cards);
  const r = rec.reliability;
  $('#reliability').textContent = t('reliability', fmt.tick(r.checkpoint_interval_s),
                                    Number(r.expected_interruptions.toPrecision(2)), fmt.pct(r.goodput));
}

// The currency the amounts are in and, from the recommendation, the dated rate that converted them.
function currencyNote(plan, rec) {
  const best = plan.plans[0];
  const code = rec && rec.currency ? rec.currency.code : best ? best.cost.currency : $('#currency').value;
  $('#currency-note').textContent = rec && rec.currency && code !== 'USD' ? t('rate_line', rec.currency) : t('amounts_in', code);
  return code;
}

// Draws both answers (an Error in place of a recommendation the server refused) in the page's language.
function render(plan, rec) {
  const ok = rec instanceof Error ? null : rec;
  $('#results').hidden = false;
  const best = plan.plans[0];
  // The batch is stated with its source: an empty field takes the server's one default (core's DefaultGlobalBatch).
  $('#summary').textContent = best ? best.why + '; ' + best.strategy.global_batch_note : t('no_plan_fits') + plan.reason;
  if (best) memoryChart(best); else $('#memory-chart').replaceChildren();
  const code = currencyNote(plan, ok);
  plansTable(plan);
  paretoChart(plan, ok, code);
  if (ok) recommendView(ok);
  else {
    $('#recommend').replaceChildren(el('p', {class: 'note', text: rec.message}));
    $('#reliability').textContent = '';
  }
  $('#status').textContent = t('evaluated', plan.search.evaluated.toLocaleString('en-US'),
                               (plan.search.seconds * 1000).toFixed(1));
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
  $('#status').textContent = t('searching');
  history.replaceState(null, '', shareUrl(state));
  $('#share-link').value = shareUrl(state);
  try {
    const [plan, rec] = await Promise.all([post('/api/plan', bodies.plan),
                                           post('/api/recommend', bodies.recommend).catch((e) => e)]);
    shown = {plan, rec};
    render(plan, rec);
  } catch (e) {
    shown = null;
    $('#results').hidden = true;
    $('#status').textContent = '';
    showError(e);
  } finally {
    $('#run').disabled = false;
  }
}

// The switch: the language is redrawn at once and kept in the link; shown answers are asked for again, since
// the server writes their sentences in the request's language, and a currency the user has not picked follows it.
function switchLang(next) {
  applyLang(next);
  if (!currencyChosen && $('#currency').value !== defaultCurrency()) {
    $('#currency').value = defaultCurrency();
    showCurrency();
  }
  if (shown) return run(readForm());
  if (!$('#results').hidden) {
    history.replaceState(null, '', shareUrl(readForm()));
    $('#share-link').value = shareUrl(readForm());
  }
  return null;
}

async function init() {
  const shared = stateFromHash();
  applyLang(shared && LANGS.includes(shared.lang) ? shared.lang : browserLang());
  currencyChosen = Boolean(shared && shared.currency);
  $('#currency').value = defaultCurrency();
  showCurrency();
  for (const b of document.querySelectorAll('.lang-switch button')) b.addEventListener('click', () => switchLang(b.dataset.lang));
  const [models, gpus] = await Promise.all([fetch('/api/models').then((r) => r.json()),
                                            fetch('/api/gpus').then((r) => r.json())]);
  catalogModels = models;
  modelList();
  const select = $('#gpu');
  for (const g of gpus) select.append(el('option', {value: g.id, text: `${g.name} (${fmt.gib(g.memory_bytes)})`}));
  select.value = 'h100-sxm';
  for (const r of document.querySelectorAll('input[name=mode]')) r.addEventListener('change', showMode);
  $('#currency').addEventListener('change', () => {
    currencyChosen = true;
    showCurrency();
  });
  $('#job').addEventListener('submit', (e) => {
    e.preventDefault();
    run(readForm());
  });
  $('#copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('#share-link').value));
  if (shared) {
    writeForm(shared);
    run(readForm());
  }
  document.body.dataset.ready = 'true';
}

init().catch(showError);
