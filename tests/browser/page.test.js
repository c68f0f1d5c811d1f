// The page in Debian's chromium, against a running `trainplan serve` (see run.sh): it loads with nothing
// from the network but the server, a job renders the very numbers the CLI prints for it, the share link
// reloads the same view, bad input gets a clear message, the layout fits a phone, and the page speaks
// Simplified Chinese to a zh-CN browser (same numbers, amounts in yuan unless the link says otherwise).
'use strict';
const assert = require('node:assert/strict');
const {execFileSync} = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const {chromium} = require(path.join(process.env.NODE_MODULES, 'playwright-core'));
const BASE = process.env.TRAINPLAN_URL;
const BIN = process.env.TRAINPLAN_BIN;

const cli = (...args) => JSON.parse(execFileSync(BIN, args, {encoding: 'utf8', maxBuffer: 64 << 20}));
const gib = (bytes) => (bytes / 2 ** 30).toFixed(1) + ' GiB';

// The job the tests enter, as CLI flags and as form fields.
const JOB = {model: 'llama-3-8b', method: 'lora', tokens: '1e8', seq_len: '4096', global_batch: '64',
             gpu: 'h100-sxm', gpus: '8'};
const JOB_FLAGS = ['--model', JOB.model, '--method', JOB.method, '--tokens', JOB.tokens, '--seq-len', JOB.seq_len,
                   '--global-batch', JOB.global_batch, '--gpu', JOB.gpu, '--gpus', JOB.gpus, '--json'];

async function newPage(browser, viewport = {width: 1280, height: 900}, locale = 'en-US') {
  const context = await browser.newContext({viewport, locale});
  const page = await context.newPage();
  const foreign = [];
  // Everything must come from the server itself: any other request is refused and recorded.
  await page.route('**/*', (route) => {
    if (route.request().url().startsWith(BASE)) return route.continue();
    foreign.push(route.request().url());
    return route.abort();
  });
  page.foreign = foreign;
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.jsErrors = errors;
  return page;
}

async function enterJob(page, job) {
  await page.goto(BASE);
  await page.waitForSelector('body[data-ready=true]');
  await page.fill('#model', job.model);
  await page.selectOption('#method', job.method);
  await page.fill('#tokens', job.tokens);
  await page.fill('#seq-len', job.seq_len);
  await page.fill('#global-batch', job.global_batch);
  await page.check('input[name=mode][value=gpus]');
  await page.selectOption('#gpu', job.gpu);
  await page.fill('#gpus', job.gpus);
  if (job.currency) await page.selectOption('#currency', job.currency);
  await page.click('#run');
}

const waitForResults = (page) => page.waitForSelector('#plans-table tbody tr', {timeout: 60000});

const tests = [];
const test = (name, fn) => tests.push({name, fn});

test('the page loads its catalogs from the server and nothing else', async (browser) => {
  const page = await newPage(browser);
  await page.goto(BASE);
  await page.waitForSelector('body[data-ready=true]');
  const models = cli('models', '--json');
  const gpus = cli('gpus', '--json').gpus.gpus;  // a user catalog file: {gpus: <gpus.json>}
  assert.equal(await page.locator('#model-list option').count(), models.length);
  assert.equal(await page.locator('#gpu option').count(), gpus.length);
  // A frozen vision tower is named beside the language model's size, from the CLI's params.vision.
  const gemma = models.find((m) => m.id === 'gemma-3-4b');
  assert.ok(gemma.params.vision > 0);
  assert.equal(await page.$eval('#model-list option[value="gemma-3-4b"]', (o) => o.textContent),
               `${gemma.hf_id} (${(gemma.params.total / 1e9).toFixed(1)} B + ${(gemma.params.vision / 1e9).toFixed(2)} B frozen vision)`);
  assert.ok(!(await page.$eval('#model-list option[value="llama-3-8b"]', (o) => o.textContent)).includes('vision'));
  assert.deepEqual(page.foreign, []);
  assert.deepEqual(page.jsErrors, []);
});

test('a job renders the same plans, memory and Pareto front the CLI prints', async (browser) => {
  const page = await newPage(browser);
  await enterJob(page, JOB);
  await waitForResults(page);
  const plan = cli('plan', ...JOB_FLAGS, '--top', '10');
  assert.ok(plan.feasible);

  const rows = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) =>
    [...tr.children].map((td) => ({text: td.textContent, value: td.dataset.value}))));
  assert.equal(rows.length, plan.plans.length);
  plan.plans.forEach((p, i) => {
    const [, gpus, framework, , memory, time, cost] = rows[i];
    assert.equal(gpus.text, `${p.hardware.gpus} x ${p.hardware.gpu}`);
    assert.equal(framework.text, p.training.framework);
    assert.equal(Number(memory.value), p.memory.per_gpu_bytes);
    assert.equal(memory.text, gib(p.memory.per_gpu_bytes));
    assert.equal(Number(time.value), p.time.total_s);
    assert.equal(Number(cost.value), p.cost.total_usd);
    assert.equal(cost.text, '$' + p.cost.total_usd.toLocaleString('en-US', {minimumFractionDigits: 2,
                                                                           maximumFractionDigits: 2}));
  });

  // The stacked bar: one segment per non-zero memory term of the best plan, against the GPU's capacity.
  const best = plan.plans[0];
  const segments = await page.$$eval('#memory-chart rect[data-term]', (rects) =>
    rects.map((r) => [r.dataset.term, Number(r.dataset.bytes)]));
  const expected = Object.entries(best.memory.components).filter(([, b]) => b > 0);
  assert.deepEqual(segments, expected);
  assert.equal(await page.textContent('#memory-capacity'), `capacity ${gib(best.memory.capacity_bytes)}`);
  assert.equal(await page.textContent('#memory-total'), `used ${gib(best.memory.per_gpu_bytes)}`);

  const points = await page.$$eval('#pareto-chart circle.pareto-point', (cs) =>
    cs.map((c) => [Number(c.dataset.timeS), Number(c.dataset.costUsd)]));
  const front = plan.pareto.filter((p) => p.time.total_s > 0 && p.cost.total_usd > 0)
    .map((p) => [p.time.total_s, p.cost.total_usd]);
  assert.ok(front.length > 0);
  assert.deepEqual(points, front);

  const rec = cli('recommend', ...JOB_FLAGS);
  const first = rec.options[0];
  assert.equal(await page.textContent('#recommend .option.first h3'),
               `${first.kind}${first.dedicated ? ' (dedicated)' : ''}: ${first.gpus} x ${first.gpu}`);
  assert.equal(await page.locator('#recommend .option').count(), rec.options.length);
  const considered = rec.considered.filter((o) => o.time_s > 0 && o.cost_usd > 0);
  assert.equal(await page.locator('#pareto-chart circle.option-point').count(), considered.length);
  assert.deepEqual(page.foreign, []);
  assert.deepEqual(page.jsErrors, []);
});

test('the strategy and time columns show the engine\'s own text, interleave included', async (browser) => {
  const page = await newPage(browser);
  const job = {model: 'llama-3-70b', method: 'full', tokens: '1e10', seq_len: '4096', global_batch: '512',
               gpu: 'h100-sxm', gpus: '64'};
  await enterJob(page, job);
  await waitForResults(page);
  const plan = cli('plan', '--model', job.model, '--method', job.method, '--tokens', job.tokens, '--seq-len',
                   job.seq_len, '--global-batch', job.global_batch, '--gpu', job.gpu, '--gpus', job.gpus, '--top', '10',
                   '--json');
  const shown = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) =>
    [tr.children[3].textContent, tr.children[5].textContent]));
  assert.deepEqual(shown, plan.plans.map((p) => [p.strategy_text, p.time.duration]));
  // Interleaved pipeline stages ("v3") are part of the strategy the page shows.
  const interleaved = plan.plans.filter((p) => p.strategy.interleave > 1);
  assert.ok(interleaved.length > 0);
  for (const p of interleaved) assert.match(p.strategy_text, new RegExp(` v${p.strategy.interleave} `));
  assert.ok(shown.some(([strategy]) => / v\d+ /.test(strategy)), JSON.stringify(shown));
  assert.deepEqual(page.jsErrors, []);
});

test('a budget and a deadline search every GPU type, as the CLI does', async (browser) => {
  const page = await newPage(browser);
  await page.goto(BASE);
  await page.waitForSelector('body[data-ready=true]');
  await page.fill('#model', 'llama-3-8b');
  await page.selectOption('#method', 'full');
  await page.fill('#tokens', '1e9');
  assert.ok(await page.isVisible('#gpus') && await page.isHidden('#budget'));
  await page.check('input[name=mode][value=budget]');
  assert.ok(await page.isHidden('#gpus') && await page.isVisible('#budget'));
  await page.fill('#budget', '2000');
  await page.fill('#deadline', '3d');
  await page.click('#run');
  await waitForResults(page);
  // The server searches up to its ceiling of 4096 GPUs; the CLI is asked for the same.
  const plan = cli('plan', '--model', 'llama-3-8b', '--method', 'full', '--tokens', '1e9', '--seq-len', '4096',
                   '--budget', '2000', '--deadline', '3d', '--max-gpus', '4096', '--top', '10',
                   '--json');
  const shown = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) => [
    tr.children[1].textContent, Number(tr.children[5].dataset.value), Number(tr.children[6].dataset.value)]));
  assert.deepEqual(shown, plan.plans.map((p) => [`${p.hardware.gpus} x ${p.hardware.gpu}`, p.time.total_s,
                                                 p.cost.total_usd]));
  for (const [, time, cost] of shown) assert.ok(time <= 3 * 86400 && cost <= 2000);
  assert.ok(await page.locator('#pareto-chart circle.pareto-point').count() > 1);
  await page.waitForSelector('#recommend .option.first');
  assert.deepEqual(page.jsErrors, []);
  await page.screenshot({path: process.env.SCREENSHOT, fullPage: true});
});

test('the share link reloads the same view', async (browser) => {
  const page = await newPage(browser);
  await enterJob(page, {...JOB, method: 'qlora', gpus: '4'});
  await waitForResults(page);
  const link = await page.inputValue('#share-link');
  assert.match(link, /#.*method=qlora/);
  const table = await page.textContent('#plans-table tbody');

  const again = await newPage(browser);
  await again.goto(link);
  await waitForResults(again);
  assert.equal(await again.inputValue('#method'), 'qlora');
  assert.equal(await again.inputValue('#gpus'), '4');
  assert.equal(await again.textContent('#plans-table tbody'), table);
});

test('a pasted config.json plans as the CLI plans that file, and its link reloads', async (browser) => {
  const reference = JSON.parse(fs.readFileSync(path.join(__dirname, '../reference/model_configs.json'), 'utf8'));
  const config = reference['Qwen/Qwen2.5-7B(-Instruct)'].config;
  const file = path.join(process.env.TMPDIR, 'qwen2.5-7b-config.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const page = await newPage(browser);
  await page.goto(BASE);
  await page.waitForSelector('body[data-ready=true]');
  await page.fill('#model', '');
  await page.click('#config-box summary');
  await page.fill('#config', JSON.stringify(config, null, 1));
  await page.selectOption('#method', 'lora');
  await page.fill('#tokens', '1e8');
  await page.selectOption('#gpu', 'a100-80gb-sxm');
  await page.fill('#gpus', '4');
  await page.click('#run');
  await waitForResults(page);
  const plan = cli('plan', '--model', file, '--method', 'lora', '--tokens', '1e8', '--seq-len', '4096',
                   '--gpu', 'a100-80gb-sxm', '--gpus', '4', '--top', '10', '--json');
  const rowsOf = (p) => p.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) => [
    tr.children[3].textContent, Number(tr.children[4].dataset.value), Number(tr.children[5].dataset.value)]));
  const shown = await rowsOf(page);
  assert.deepEqual(shown.map((r) => r.slice(1)),
                   plan.plans.map((p) => [p.memory.per_gpu_bytes, p.time.total_s]));

  const link = await page.inputValue('#share-link');
  assert.match(link, /config=/);
  const again = await newPage(browser);
  await again.goto(link);
  await waitForResults(again);
  assert.deepEqual(await rowsOf(again), shown);
});

test('bad input gets a clear message naming the field', async (browser) => {
  const page = await newPage(browser);
  await enterJob(page, {...JOB, tokens: 'lots'});
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.getAttribute('#error', 'data-field'), 'training.tokens');
  assert.match(await page.textContent('#error'), /lots/);
  assert.equal(await page.getAttribute('#tokens', 'aria-invalid'), 'true');
  assert.equal(await page.textContent('#error-prefix'), 'Invalid input: ');
  assert.ok(await page.isHidden('#results'));
  // The prefix is the page's, in its language; the message after it is the engine's.
  await page.click('.lang-switch button[data-lang=zh]');
  assert.equal(await page.textContent('#error-prefix'), '输入有误：');
  assert.match(await page.textContent('#error-text'), /lots/);
  await page.click('.lang-switch button[data-lang=en]');

  await page.fill('#tokens', '1e8');
  await page.fill('#model', 'llama-3-8bb');
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('#error').dataset.field === 'model');
  assert.match(await page.textContent('#error'), /did you mean/);

  await page.click('#config-box summary');
  await page.fill('#config', '{"hidden_size": ');
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('#error').dataset.field === 'model.config');
  assert.deepEqual(page.jsErrors, []);
});

test('host RAM per node limits offload as --host-ram does, and a bad value names its field', async (browser) => {
  const page = await newPage(browser);
  const job = {...JOB, model: 'qwen2.5-14b', method: 'full', gpu: 'rtx-4090', gpus: '2'};
  await enterJob(page, job);
  await waitForResults(page);
  await page.fill('#host-ram', 'plenty');
  await page.click('#run');
  await page.waitForFunction(() => document.querySelector('#error').dataset.field === 'hardware.host_ram_gb');
  assert.equal(await page.getAttribute('#host-ram', 'aria-invalid'), 'true');

  await page.fill('#host-ram', '512');
  await page.click('#run');
  await waitForResults(page);
  const plan = cli('plan', '--model', job.model, '--method', job.method, '--tokens', job.tokens, '--seq-len',
                   job.seq_len, '--global-batch', job.global_batch, '--gpu', job.gpu, '--gpus', job.gpus,
                   '--host-ram', '512', '--top', '10', '--json');
  assert.ok(plan.plans.length > 0);
  assert.equal(plan.plans[0].memory.host_limit_bytes, 512e9);
  const shown = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) => Number(tr.children[4].dataset.value)));
  assert.deepEqual(shown, plan.plans.map((p) => p.memory.per_gpu_bytes));
  assert.match(await page.inputValue('#share-link'), /host_ram=512/);
  assert.deepEqual(page.jsErrors, []);
});

// What a person reads in the page's results: the table's cells, the memory bar and the headings.
const readView = (page) => page.evaluate(() => ({
  rows: [...document.querySelectorAll('#plans-table tbody tr')].map((tr) =>
    [...tr.children].map((td) => [td.textContent, td.dataset.value])),
  segments: [...document.querySelectorAll('#memory-chart rect[data-term]')].map((r) => [r.dataset.term, r.dataset.bytes]),
  pareto: [...document.querySelectorAll('#pareto-chart circle.pareto-point')].map((c) => [c.dataset.timeS, c.dataset.cost]),
  columns: [...document.querySelectorAll('#plans-table th')].map((th) => th.textContent),
  headings: [...document.querySelectorAll('h2')].map((h) => h.textContent),
}));

test('a zh-CN browser gets the page in Chinese, with the numbers of the English page', async (browser) => {
  const zh = await newPage(browser, undefined, 'zh-CN');
  await zh.goto(BASE);
  await zh.waitForSelector('body[data-ready=true]');
  assert.equal(await zh.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await zh.getAttribute('.lang-switch button[data-lang=zh]', 'aria-pressed'), 'true');
  // Chinese readers get yuan unless they pick otherwise.
  assert.equal(await zh.inputValue('#currency'), 'CNY');
  assert.equal(await zh.textContent('#budget-fields label'), '预算 (CNY) ');
  // Every dictionary entry has both languages, of the same kind, and every text the markup takes from it
  // is Chinese on this page (bar the words both languages write alike: GPU, CPU, logits).
  const problems = await zh.evaluate(() => Object.entries(I18N).filter(([, v]) =>
    typeof v.en !== typeof v.zh || !v.en || !v.zh).map(([k]) => k));
  assert.deepEqual(problems, []);
  const untranslated = await zh.$$eval('[data-i18n]', (nodes) => nodes.filter((n) =>
    !/[\u4e00-\u9fff]/.test(n.textContent)).map((n) => n.dataset.i18n));
  assert.deepEqual(untranslated, ['col_gpus']);

  // The same request (in dollars) on both pages: the same numbers, under Chinese words.
  await enterJob(zh, {...JOB, currency: 'USD'});
  await waitForResults(zh);
  const en = await newPage(browser);
  await enterJob(en, JOB);
  await waitForResults(en);
  const [zhView, enView] = [await readView(zh), await readView(en)];
  // Durations are the server's words in the request's language ('32 分钟' / '32 min'); the figure and every
  // other cell and value are the same.
  const unit = / (分钟|小时|秒|天|min|h|s|days)$/;
  const figures = (rows) => rows.map((r) => r.map(([text, value]) => [text.replace(unit, ''), value]));
  assert.deepEqual(figures(zhView.rows), figures(enView.rows));
  assert.ok(zhView.rows.every((r) => r.some(([text]) => / (分钟|小时|秒|天)$/.test(text))), JSON.stringify(zhView.rows));
  assert.deepEqual(zhView.segments, enView.segments);
  assert.deepEqual(zhView.pareto, enView.pareto);
  assert.deepEqual(zhView.columns, ['#', 'GPU', '框架', '并行策略', '每卡显存', '训练时间', '成本', '算力利用率 (MFU)']);
  assert.deepEqual(enView.columns, ['#', 'GPUs', 'Framework', 'Strategy', 'Memory / GPU', 'Time', 'Cost', 'MFU']);
  assert.deepEqual(zhView.headings, ['每卡显存', '方案排名', '时间与成本', '推荐方案']);
  assert.match(await zh.textContent('#memory-chart .legend'), /优化器状态|权重/);
  assert.match(await zh.textContent('#status'), /^已评估 [\d,]+ 种策略/);
  // The server's own sentences come in the page's language: the batch note under the summary, the same figures.
  const enBatch = (await en.textContent('#summary')).match(/global batch ([\d,]+) sequences \(([\d,]+) tokens\)/);
  assert.ok(enBatch, await en.textContent('#summary'));
  assert.ok((await zh.textContent('#summary')).includes(`全局批大小 ${enBatch[1]} 条序列（${enBatch[2]} tokens）`),
            await zh.textContent('#summary'));
  const rec = cli('recommend', ...JOB_FLAGS);
  const kinds = {'cloud': '云上租用', 'on-prem': '自建', 'hybrid': '混合'};
  assert.equal(await zh.textContent('#recommend .option.first h3'),
               `${kinds[rec.options[0].kind]}${rec.options[0].dedicated ? '（专属）' : ''}: ${rec.options[0].gpus} x ${rec.options[0].gpu}`);
  assert.match(await zh.textContent('#recommend .option.first dl'), /总成本/);
  assert.match(await zh.textContent('#plans-table + .note, .scroll + .note'), /tp 张量并行，pp 流水线并行，dp 数据并行/);
  const r = rec.reliability;
  assert.equal(await zh.textContent('#reliability'),
               `断点续训（首选方案）：每 ${(r.checkpoint_interval_s / 60).toFixed(1)} min 保存一次检查点，整次训练预计中断 ` +
               `${Number(r.expected_interruptions.toPrecision(2))} 次，有效训练时间占比 ${(r.goodput * 100).toFixed(1)}%。`);
  const link = await zh.inputValue('#share-link');
  assert.match(link, /[#&]lang=zh(&|$)/);
  assert.match(link, /[#&]currency=USD(&|$)/);
  assert.deepEqual(zh.foreign, []);
  assert.deepEqual(zh.jsErrors, []);
  assert.deepEqual(en.jsErrors, []);
});

test('the language switch redraws the page, follows into the share link, and a link keeps its currency', async (browser) => {
  const page = await newPage(browser);
  await enterJob(page, JOB);
  await waitForResults(page);
  assert.equal(await page.textContent('h2'), 'Memory per GPU');
  assert.match(await page.textContent('#plans-table tbody td.num[data-value]:nth-child(7)'), /^\$/);
  await page.click('.lang-switch button[data-lang=zh]');
  // The currency was never picked, so it follows the language to yuan and the amounts are asked again.
  await page.waitForFunction(() => document.querySelector('#plans-table tbody tr td:nth-child(7)').textContent.startsWith('¥'));
  assert.equal(await page.textContent('h2'), '每卡显存');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  await page.waitForFunction(() => document.querySelector('#summary').textContent.includes('全局批大小'));
  const link = await page.inputValue('#share-link');
  assert.match(link, /[#&]lang=zh(&|$)/);
  assert.match(link, /[#&]currency=CNY(&|$)/);
  const table = await page.textContent('#plans-table tbody');

  // An English browser opening the Chinese link reads Chinese, in yuan, the same table.
  const again = await newPage(browser);
  await again.goto(link);
  await waitForResults(again);
  assert.equal(await again.textContent('h2'), '每卡显存');
  assert.equal(await again.inputValue('#currency'), 'CNY');
  assert.equal(await again.textContent('#plans-table tbody'), table);
  await again.click('.lang-switch button[data-lang=en]');
  assert.equal(await again.textContent('h2'), 'Memory per GPU');
  // The link chose yuan: switching to English keeps it.
  assert.equal(await again.inputValue('#currency'), 'CNY');
  assert.match(await again.inputValue('#share-link'), /[#&]lang=en(&|$)/);

  // A Chinese browser opening a link that says dollars stays in dollars.
  const zh = await newPage(browser, undefined, 'zh-CN');
  await zh.goto(link.replace('lang=zh', 'lang=en').replace('currency=CNY', 'currency=USD'));
  await waitForResults(zh);
  assert.equal(await zh.inputValue('#currency'), 'USD');
  assert.equal(await zh.textContent('h2'), 'Memory per GPU');
  assert.deepEqual(page.jsErrors, []);
  assert.deepEqual(again.jsErrors, []);
  assert.deepEqual(zh.jsErrors, []);
});

test('amounts in yuan are the CLI\'s --currency CNY amounts, with ¥ and the dated rate', async (browser) => {
  const page = await newPage(browser);
  await enterJob(page, {...JOB, currency: 'CNY'});
  await waitForResults(page);
  const flags = [...JOB_FLAGS, '--currency', 'CNY'];
  const plan = cli('plan', ...flags, '--top', '10');
  const rec = cli('recommend', ...flags);
  const money = (x) => '¥' + x.toLocaleString('en-US', {minimumFractionDigits: 2, maximumFractionDigits: 2});
  const costs = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) =>
    [tr.children[6].textContent, Number(tr.children[6].dataset.value)]));
  assert.deepEqual(costs, plan.plans.map((p) => [money(p.cost.total), p.cost.total]));
  // A real conversion: the yuan amount is the dollar amount at the catalog's dated rate.
  assert.equal(rec.currency.code, 'CNY');
  assert.ok(rec.currency.per_usd > 1);
  for (const p of plan.plans) assert.ok(Math.abs(p.cost.total - p.cost.total_usd * rec.currency.per_usd) < 1e-6 * p.cost.total);
  const note = await page.textContent('#currency-note');
  assert.ok(note.includes(`1 USD = ${rec.currency.per_usd} CNY`) && note.includes(rec.currency.date), note);
  const first = rec.options[0];
  if (first.cost.total !== null) assert.match(await page.textContent('#recommend .option.first dl'), /¥/);
  assert.match(await page.textContent('#pareto-chart svg'), /¥/);
  // The budget is in yuan too, as --budget with --currency CNY is.
  await page.check('input[name=mode][value=budget]');
  assert.equal(await page.textContent('#budget-fields label'), 'Budget (CNY) ');
  await page.fill('#budget', '20000');
  await page.fill('#deadline', '3d');
  await page.click('#run');
  // The link changes as the request leaves; the button is enabled again once its answers are drawn.
  await page.waitForFunction(() => /[#&]budget=20000/.test(location.hash) && !document.querySelector('#run').disabled);
  const budgetPlan = cli('plan', '--model', JOB.model, '--method', JOB.method, '--tokens', JOB.tokens, '--seq-len',
                         JOB.seq_len, '--global-batch', JOB.global_batch, '--budget', '20000', '--deadline', '3d',
                         '--currency', 'CNY', '--max-gpus', '4096', '--top', '10', '--json');
  const shownBudget = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) => Number(tr.children[6].dataset.value)));
  assert.deepEqual(shownBudget, budgetPlan.plans.map((p) => p.cost.total));
  for (const c of shownBudget) assert.ok(c <= 20000);
  assert.deepEqual(page.jsErrors, []);
});

test('a Chinese lab\'s question: yuan budget, region cn, the CLI\'s options in Chinese', async (browser) => {
  const page = await newPage(browser, undefined, 'zh-CN');
  await page.goto(BASE);
  await page.waitForSelector('body[data-ready=true]');
  await page.fill('#model', 'qwen2.5-14b');
  await page.selectOption('#method', 'lora');
  await page.fill('#tokens', '5e8');
  await page.check('input[name=mode][value=budget]');
  await page.fill('#budget', '300000');
  await page.fill('#deadline', '30d');
  await page.selectOption('#region', 'cn');
  assert.equal(await page.textContent('#region option[value=cn]'), '中国大陆');
  await page.click('#run');
  await waitForResults(page);
  await page.waitForSelector('#recommend .option.first');
  const rec = cli('recommend', '--model', 'qwen2.5-14b', '--method', 'lora', '--tokens', '5e8', '--seq-len', '4096',
                  '--budget', '300000', '--deadline', '30d', '--currency', 'CNY', '--region', 'cn', '--max-gpus', '4096',
                  '--json');
  assert.ok(rec.feasible && rec.options.length > 0);
  // The same request to the API in Chinese: the CLI's options and amounts, with the server's sentences in Chinese.
  const api = await (await fetch(new URL('/api/recommend', BASE), {
    method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({
      lang: 'zh', model: 'qwen2.5-14b', training: {method: 'lora', tokens: 5e8, seq_len: 4096},
      recommend: {budget: 300000, deadline: '30d', currency: 'CNY', region: 'cn', max_gpus: 4096}})})).json();
  assert.ok(api.options, JSON.stringify(api));
  assert.deepEqual(api.options.map((o) => [o.kind, o.gpu, o.gpus, o.cost.total]),
                   rec.options.map((o) => [o.kind, o.gpu, o.gpus, o.cost.total]));
  assert.ok(api.options.some((o) => /单价未知|未定价/.test(o.cost.text)), JSON.stringify(api.options.map((o) => o.cost.text)));
  const kinds = {'cloud': '云上租用', 'on-prem': '自建', 'hybrid': '混合'};
  const cards = await page.$$eval('#recommend .option', (cs) => cs.map((c) =>
    [c.querySelector('h3').textContent, c.querySelector('dd:nth-of-type(2)').textContent]));
  assert.deepEqual(cards, api.options.map((o) =>
    [`${kinds[o.kind]}${o.dedicated ? '（专属）' : ''}: ${o.gpus} x ${o.gpu}`, o.cost.text]));
  assert.ok(cards.some(([, cost]) => cost.startsWith('¥')), JSON.stringify(cards));
  assert.match(await page.inputValue('#share-link'), /[#&]region=cn(&|$)/);
  assert.deepEqual(page.jsErrors, []);
});

test('the view fits a phone screen, in either language', async (browser) => {
  for (const locale of ['en-US', 'zh-CN']) {
    const page = await newPage(browser, {width: 390, height: 844}, locale);
    await enterJob(page, JOB);
    await waitForResults(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the ${locale} page is ${overflow}px wider than the screen`);
  }
});

test('a plan without a rental price costs "unknown", not 0', async (browser) => {
  const page = await newPage(browser);
  const job = {...JOB, gpu: 'a800-80gb-sxm'};
  await enterJob(page, job);
  await waitForResults(page);
  const plan = cli('plan', '--model', job.model, '--method', job.method, '--tokens', job.tokens, '--seq-len', job.seq_len,
                   '--global-batch', job.global_batch, '--gpu', job.gpu, '--gpus', job.gpus, '--top', '10', '--json');
  assert.ok(plan.plans.length > 0 && plan.plans.every((p) => !(p.cost.usd_per_gpu_hour > 0)));
  const costs = await page.$$eval('#plans-table tbody tr', (trs) => trs.map((tr) => tr.children[6].textContent));
  assert.deepEqual(costs, plan.plans.map(() => 'unknown'));
  await page.click('.lang-switch button[data-lang=zh]');
  await page.waitForFunction(() => document.querySelector('#plans-table tbody td:nth-child(7)').textContent === '未知');
});

(async () => {
  // launch() gives chromium a fresh --user-data-dir of its own under TMPDIR (run.sh points it at the build).
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  let failed = 0;
  for (const t of tests) {
    try {
      await t.fn(browser);
      console.log(`ok - ${t.name}`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${t.name}\n${e.stack}`);
    }
  }
  await browser.close();
  console.log(`${tests.length - failed}/${tests.length} browser tests passed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
