// console.mjs — the web console (ui/, docs/console.md) in headless
// Chromium, driven by puppeteer-core; run by test-console.sh, which
// started the server and wrote the config (argv[2]): the URL, the tokens
// of the admin and of the tenants alpha and beta, their tasks, the
// folders for screenshots and downloads. Every check reads what the page
// shows (the DOM), prints "ok   NAME" or "FAIL NAME", and counts; at the
// end the counts go to config.counts for the shell's total, and the exit
// status is 1 when any check failed. Midway it hands over to the shell:
// after the live change it writes config.liveFile ({task, compute}) and
// waits for config.regionDone, the shell's check of the shim's region.
// What the shell checks after it, it leaves in files: the tokens of the
// tenant it added and rotated (config.tokens), what the What-if page
// showed (config.whatif).
import fs from 'node:fs';
import path from 'node:path';
import { browserStart, cfg, check, confirmClick, count, go, problems, shot, signIn, signOut, sleep, step,
	textOf, typeInto, until, finish } from './browser.mjs';

// ---- the steps, as tenant alpha -------------------------------------------

async function signInChecks(page) {
	await page.goto(`${cfg.url}/ui/`);
	await shot(page, 'signin');
	await signIn(page, 'not-a-token-anybody-has');
	check('a wrong token is refused, with the server\'s 401 in the message area',
		await until(page, () => /401.*unknown token/i.test(document.getElementById('messages').innerText), 5000),
		await textOf(page, '#messages'));
	await signIn(page, cfg.alpha);
	check('tenant alpha signs in with its token',
		await until(page, () => document.getElementById('who-name')?.innerText === 'alpha', 5000),
		await textOf(page, '#who'));
	check('the token is kept in sessionStorage',
		await page.evaluate((t) => sessionStorage.getItem('gpupool.token') === t, cfg.alpha));
}

async function poolAsTenant(page) {
	await go(page, '#/pool', '.card');
	check('the pool shows the demo\'s 6 cards', await count(page, '.card') === 6, await textOf(page, '#pool'));
	check(`alpha's running task ${cfg.alphaTask} is drawn as a slice on its card (memory and compute)`,
		await count(page, `.bar-memory .seg[data-task="${cfg.alphaTask}"]`) === 1 &&
		await count(page, `.bar-compute .seg[data-task="${cfg.alphaTask}"]`) === 1);
	check('beta\'s task is not named to alpha: one grey part of other tenants on its card instead',
		await count(page, `.seg[data-task="${cfg.betaTask}"]`) === 0 && await count(page, '.bar-compute .seg-others') >= 1);
	const label = await textOf(page, `.bar-compute .seg[data-task="${cfg.alphaTask}"] .seg-label`);

	check('a slice is labelled with its task\'s name and id', label === `#${cfg.alphaTask} alpha-serve`, label);
	await shot(page, 'pool-tenant');
}

// Submits from the form; the id from the notice.
async function submitFromForm(page) {
	await go(page, '#/tasks', '#submit-form');
	await page.type('#submit-name', 'ui-burn');
	await page.type('#submit-mem', '2G');
	await page.type('#submit-compute', '20');
	await page.$eval('#submit-priority', (e) => { e.value = '6'; });
	await page.type('#submit-model', 'A100');
	await page.type('#submit-command', `${cfg.gpuload} burn --duration 120`);
	await page.click('#submit-button');
	const shown = await until(page, () => /task \d+ submitted/.test(document.getElementById('messages').innerText), 5000);
	const id = Number((/task (\d+) submitted/.exec(await textOf(page, '#messages')) || [])[1]);

	check('a task submitted from the form is accepted', shown && id > 0, await textOf(page, '#messages'));
	check(`it is listed, and runs (task ${id})`, await until(page, (tid) => {
		const link = document.querySelector(`a.task-link[data-task="${tid}"]`);

		return link && link.closest('tr').querySelector('.badge').innerText === 'running';
	}, 20000, id), await textOf(page, '#task-list'));
	return id;
}

async function refusedTask(page) {
	await go(page, `#/tasks/${cfg.betaTask}`, '#task-refused');
	const message = await textOf(page, '#messages');

	check('alpha opening beta\'s task is refused: the API\'s 403 and its message are shown',
		/403 Forbidden: task \d+ belongs to another tenant/.test(message), message);
	check('... and none of the task is shown', await count(page, '#task-facts') === 0);
	await shot(page, 'refused');
}

async function tenantLimits(page) {
	await go(page, '#/templates', '#template-list pre.yaml');
	check('a tenant is told only the admin adds templates', await count(page, '#template-admin-only') === 1 &&
		await count(page, '#template-form') === 0);
	const yaml = await textOf(page, `pre.yaml[data-template="${cfg.template}"]`);

	fs.writeFileSync(cfg.yaml, `${yaml.replace(/\n*$/, '')}\n`);
	await go(page, '#/alerts', '#alert-table');
	check('a tenant is told only the admin reads the audit log', await until(page,
		() => document.getElementById('audit-admin-only'), 5000));
	await go(page, '#/schedules', '#schedules-admin-only');
	check('a tenant is told the schedules are the admin\'s', await count(page, '#schedule-form') === 0);
	await go(page, '#/tenants', '.tenant-card');
	check('a tenant sees none of the tenants\' administration (no form, no buttons)',
		await count(page, '#tenant-form') === 0 && await count(page, '.tenant-admin, .token-new, .tenant-remove') === 0 &&
		await count(page, '.tenant-card') === 1);
	await go(page, '#/advice', '#advice-admin-only');
	check('a tenant reads the advice, and is told applying it is the admin\'s', await count(page, '#advice-apply') === 0);
	await signOut(page);
	check('signing out forgets the token', await page.evaluate(() => sessionStorage.getItem('gpupool.token') === null));
}

// ---- as the admin ----------------------------------------------------------

async function poolAsAdmin(page, live) {
	await signIn(page, cfg.admin);
	check('the admin signs in, and is shown as the admin', await until(page,
		() => document.getElementById('who-name')?.innerText === 'admin' && document.querySelector('#who .badge-admin'), 5000));
	await go(page, '#/pool', '.card');
	await until(page, (id) => document.querySelector(`.seg[data-task="${id}"]`), 6000, live);
	check('the admin sees every tenant\'s slices: alpha\'s and beta\'s',
		await count(page, `.bar-compute .seg[data-task="${cfg.betaTask}"]`) === 1 &&
		await count(page, `.bar-compute .seg[data-task="${live}"]`) === 1);
	const title = await page.$eval(`.bar-compute .seg[data-task="${live}"]`, (e) => e.title).catch(() => '');

	check('hovering a slice names its task, tenant and share', title.startsWith(`task ${live} "ui-burn" of alpha: 20 %`), title);
	check('... and its label names the task: "#ID ui-burn"', await textOf(page,
		`.bar-compute .seg[data-task="${live}"] .seg-label`) === `#${live} ui-burn`);
	await shot(page, 'pool');
}

async function tasksAsAdmin(page) {
	await go(page, '#/tasks', '#task-list table');
	await page.select('#task-filters select[name=tenant]', 'beta');
	const onlyBeta = await until(page, () => {
		const rows = [...document.querySelectorAll('#task-list tbody tr')];

		return rows.length > 0 && rows.every((r) => r.children[1].innerText.trim() === 'beta');
	}, 6000);

	check('the admin filters the tasks by tenant', onlyBeta, await textOf(page, '#task-list'));
	await page.select('#task-filters select[name=tenant]', '');
	await until(page, () => document.querySelectorAll('#task-list tbody tr').length >= 3, 6000);
	check('queued tasks show their position and the reason they wait', /#1\s+waiting .*no device of model "H100"/.test(
		await textOf(page, '#task-list')), await textOf(page, '#task-list'));
	await shot(page, 'tasks');
}

// Changes the share of task id to compute; then the shell checks the region.
async function liveChange(page, id, compute) {
	await go(page, `#/tasks/${id}`, '#change-form');
	await page.$eval('#change-form input[name=compute]', (e, c) => { e.value = String(c); }, compute);
	await page.type('#change-form input[name=reason]', 'console test: more for the burner');
	// A click through the DOM: the charts above it redraw every few seconds,
	// and on a busy host puppeteer's click can land while they move it.
	await page.$eval('#change-button', (b) => b.click());
	await page.waitForSelector('#change-audit', { timeout: 10000 }).catch(() => {});
	const audit = await textOf(page, '#change-audit');

	check('the live change shows the audit entry it made (task.set, old and new share, the reason)',
		/task\.set/.test(audit) && audit.includes(`compute_pct 20 -> ${compute}`) && /more for the burner/.test(audit), audit);
	check('the task\'s page shows the new share', await until(page,
		(c) => document.getElementById('task-compute')?.innerText === `${c} %`, 8000, compute));
	fs.writeFileSync(cfg.liveFile, JSON.stringify({ task: id, compute }));
	for (let i = 0; i < 200 && !fs.existsSync(cfg.regionDone); i++)
		await sleep(100);
	check('the task\'s page charts its run from its records: memory held and used, compute held and used',
		await until(page, () => Number(document.querySelector('#task-charts [data-kind="task-memory"]')?.dataset.points) > 0 &&
			Number(document.querySelector('#task-charts [data-kind="task-compute"]')?.dataset.points) > 0, 10000),
		await textOf(page, '#task-charts'));
	await shot(page, 'task');
	await shot(page, 'task-full', true);
}

async function failedTaskLog(page) {
	await go(page, `#/tasks/${cfg.failedTask}`, '#task-log');
	check('a task\'s page shows its log', await until(page,
		() => /loss went NaN at step 7/.test(document.getElementById('task-log').innerText), 6000),
	await textOf(page, '#task-log'));
	check('... and the runtime its model implies (T4: cuda)', await textOf(page, '#task-runtime') === 'cuda',
		await textOf(page, '#task-runtime'));
}

// The burner has run long enough to fill a few 10 s buckets (the
// picture in docs/console.md) once BURN_MS have passed since its start.
const BURN_MS = 40000;

async function usagePage(page, started) {
	await sleep(Math.max(0, started + BURN_MS - Date.now()));
	await go(page, '#/usage', '#usage-summary');
	const charts = await page.evaluate(() => typeof window.Chart === 'function');

	if (charts)
		check('utilization: a Chart.js line chart for the pool and each card (7)',
			await count(page, '#utilization-charts canvas.chart') === 7);
	else
		check('utilization: without Chart.js, the banner says to install libjs-chart.js, and tables stand in',
			/libjs-chart\.js/.test(await textOf(page, '#chart-missing')) &&
			await count(page, '#utilization-charts .chart-card table') === 7);
	await chartsChecks(page, charts);
	const pool = await page.$$eval('#usage-summary tbody tr', (rows) => rows.map((r) => [...r.children].map((c) => c.innerText)));
	const used = (row) => parseFloat((pool[row] || [])[4]);

	check('over the last hour the pool and one A100 used device time (the burner ran), the other cards none',
		pool.length === 7 && used(0) > 0 && Math.abs(used(1) + used(2) - used(0)) < 2e-6 &&
		used(3) + used(4) + used(5) + used(6) === 0,
		JSON.stringify(pool));
	check('the queue now: 1 task waiting, for more than 0 s', await textOf(page, '#queue-now') === '1' &&
		!/^0 s$/.test(await textOf(page, '#oldest-wait')), await textOf(page, '#usage'));
	await page.select('#usage-controls select[name=window]', 'minutes');
	check('over the last 10 minutes too, the pool used device time',
		await until(page, () => /10 minutes/.test(document.getElementById('usage-summary')?.previousSibling?.innerText) &&
			parseFloat(document.querySelectorAll('#usage-summary tbody tr')[0].children[4].innerText) > 0, 6000),
		await textOf(page, '#usage'));
	await shot(page, 'usage');
	await shot(page, 'usage-full', true);
}

// The charts of the meter's history: memory per card (one y scale for
// all), per tenant, the queue; the window fitted to the server's age.
async function chartsChecks(page, charts) {
	const window = await page.$eval('#usage-window', (e) => ({ ...e.dataset })).catch(() => ({}));
	const chosen = await page.$eval('#usage-controls select[name=window]', (e) => e.value);

	check('a fresh server: the window is its 10 minutes, and starts no earlier than its history',
		chosen === 'minutes' && Number(window.from) >= Number(window.since) && Number(window.since) > 0,
		JSON.stringify({ chosen, window }));
	const memory = await page.$$eval('#memory-charts .chart-card', (list) => list.map((c) => ({ ...c.dataset })));

	check('memory per card: a chart for each of the 6 cards, each with measured points',
		memory.length === 6 && memory.every((m) => Number(m.points) > 0), JSON.stringify(memory));
	check('... all on ONE y scale (the largest card\'s memory)', new Set(memory.map((m) => m.ymax)).size === 1 &&
		Number(memory[0].ymax) >= 80, JSON.stringify(memory.map((m) => m.ymax)));
	if (charts)
		check('... the drawn charts agree: every card\'s y axis ends at the same value', await page.evaluate(() => {
			const tops = [...document.querySelectorAll('#memory-charts canvas')].map((c) => window.Chart.getChart(c).scales.y.max);

			return tops.length === 6 && tops.every((t) => t === tops[0]);
		}));
	const tenants = await page.$$eval('#tenant-charts .chart-card', (list) => list.map((c) => ({ ...c.dataset })));

	check('memory per tenant: alpha\'s and beta\'s held memory over time, on one scale',
		['alpha', 'beta'].every((t) => tenants.some((x) => x.tenant === t && Number(x.points) > 0)) &&
		new Set(tenants.map((x) => x.ymax)).size === 1, JSON.stringify(tenants));
	check('the queue\'s length and wait over time', Number(await page.$eval('#queue-charts .chart-card',
		(e) => e.dataset.points).catch(() => 0)) > 0);
}

async function tenantsPage(page) {
	await go(page, '#/tenants', '.tenant-card');
	const row = (tenant, model, part) => page.$eval(
		`.tenant-card[data-tenant="${tenant}"] .quota[data-model="${model}"] .bar-row[data-part="${part}"]`,
		(e) => Number(e.dataset.used)).catch(() => -1);

	check('alpha\'s memory in use is its two running slices, 2 GiB each', await row('alpha', '', 'memory') === 4096);
	check('alpha\'s A100 model quota counts its shares on the A100s (25 + 35 %)', await row('alpha', 'A100', 'compute') === 60,
		await textOf(page, '.tenant-card[data-tenant="alpha"]'));
	check('beta holds 45 % of its 50 % guarantee', await row('beta', '', 'compute') === 45);
	await shot(page, 'tenants');
}

// ---- the platform's pages -------------------------------------------------------

// The admin creates a service from the form, with a policy that steps
// soon: its replica busy (gpuload serves 200 requests/s of 5 ms, a card's
// worth, on a 20 % share), the autoscaler grows its share; then a step by
// hand to 2 replicas (the autoscaler's cooldown, 20 s, counts from it:
// the two stay); then it is removed.
async function servicesPage(page) {
	await go(page, '#/services', '#service-form');
	const set = (name, value) => typeInto(page, `#service-form [name=${name}]`, String(value));

	await set('name', 'ui-web');
	await set('mem', '1G');
	await set('compute', 20);
	await set('model', 'T4');
	await set('command', `${cfg.gpuload} serve --qps 200 --kernel-us 5000 --duration 300`);
	await set('max_replicas', 3);
	await set('out_pct', 50);
	await set('out_window_s', 1);
	await set('in_window_s', 600);
	await set('cooldown_s', 20);
	await set('share_max_pct', 40);
	await page.click('#service-create');
	check('a service created from the form opens its page', await until(page,
		() => location.hash === '#/services/admin/ui-web' && document.getElementById('service-replicas'), 8000),
	await textOf(page, '#messages'));
	check('its replica runs, placed on a card (the card shown as the pool numbers it)', await until(page,
		() => [...document.querySelectorAll('#service table.grid tbody tr')].some((r) => r.children.length > 6 &&
			/running/.test(r.innerText) &&
			/#\d/.test(r.children[5].innerText) && /GPU-/.test(r.children[6].innerText)), 20000),
	await textOf(page, '#service'));
	check('the autoscaler\'s step appears, with its reason (busy: the share grows 20 % -> 40 %)', await until(page,
		() => [...document.querySelectorAll('#step-table tbody tr')].some((r) => r.children.length > 5 &&
			r.children[4].innerText === 'service:ui-web' &&
			/above 50 %/.test(r.children[5].innerText)), 30000),
	await textOf(page, '#service-steps'));
	await shot(page, 'service');
	await typeInto(page, '#scale-form input[name=replicas]', '2');
	await typeInto(page, '#scale-form input[name=reason]', 'console test: two for the launch');
	await page.click('#scale-button');
	check('a step by hand from the form: 2 replicas, in the steps with who and why', await until(page,
		() => {
			const top = document.querySelector('#step-table tbody tr');

			return top && top.children.length > 5 && top.children[1].innerText === 'set' &&
				top.children[4].innerText === 'admin' &&
				/-> 2 by admin: console test: two for the launch/.test(top.children[5].innerText) &&
				document.getElementById('service-replicas').dataset.replicas === '2';
		}, 8000), await textOf(page, '#service-steps'));
	check('... and the replicas follow: two of them', await until(page,
		() => document.querySelectorAll('#service .replica-link').length === 2, 15000), await textOf(page, '#service'));
	await shot(page, 'service-full', true);
	await go(page, '#/services', '#service-list table');
	await shot(page, 'services');
	check('the service is removed from the list (asked twice)', await confirmClick(page,
		'#service-list button.service-remove[data-service="ui-web"]',
		() => !document.querySelector('#service-list a.service-link[data-service="ui-web"]'), 4000));
}

// The admin adds a tenant with a quota (its token shown once), rotates
// its token (the old one then refused, the new one good), changes its
// quota, adds one explicitly unlimited and removes that one.
async function tenantsAdmin(page) {
	await go(page, '#/tenants', '#tenant-form');
	await typeInto(page, '#tenant-form input[name=name]', 'gamma');
	await typeInto(page, '#tenant-form input[name=mem_guaranteed]', '4G');
	await typeInto(page, '#tenant-form input[name=compute_guaranteed]', '50');
	await page.click('#tenant-add');
	const shown = await until(page, () => document.querySelector('#new-token[data-tenant="gamma"]') &&
		document.querySelector('.tenant-card[data-tenant="gamma"]'), 8000);
	const first = await textOf(page, '#new-token');
	const whoIs = (token) => page.evaluate(async (t) => {
		const r = await fetch('/v1/tenants', { headers: { Authorization: `Bearer ${t}` } });

		return r.ok ? (await r.json()).tenants.map((x) => x.name).join(',') : r.status;
	}, token);

	check('the admin adds tenant gamma with a quota; its token is shown once, and it is gamma\'s',
		shown && /^[0-9a-f]{64}$/.test(first) && await whoIs(first) === 'gamma', first);
	check('... its card: 4 GiB and 50 % guaranteed', await page.$eval(
		'.tenant-card[data-tenant="gamma"] .quota[data-model=""] .bar-row[data-part="compute"]',
		(e) => Number(e.dataset.guaranteed)).catch(() => -1) === 50);
	await shot(page, 'tenants-admin');
	const rotated = await confirmClick(page, '.tenant-card[data-tenant="gamma"] button.token-new',
		(old) => document.getElementById('new-token') && document.getElementById('new-token').innerText !== old, 4000, first);
	const second = await textOf(page, '#new-token');

	check('a new token for gamma from its button (asked twice), shown once', rotated && /^[0-9a-f]{64}$/.test(second));
	check('... the old token is refused (401), the new one works', await whoIs(first) === 401 &&
		await whoIs(second) === 'gamma', `${await whoIs(first)} ${await whoIs(second)}`);
	fs.writeFileSync(cfg.tokens, JSON.stringify({ tenant: 'gamma', old: first, new: second }));
	await page.click('.tenant-card[data-tenant="gamma"] button.quota-change');
	await typeInto(page, '.quota-form[data-tenant="gamma"] input[name=compute_guaranteed]', '80');
	await page.click('.quota-form[data-tenant="gamma"] .quota-save');
	check('gamma\'s quota changed from its form: 80 % guaranteed', await until(page, () => Number(document.querySelector(
		'.tenant-card[data-tenant="gamma"] .quota[data-model=""] .bar-row[data-part="compute"]')?.dataset.guaranteed) === 80,
	8000), await textOf(page, '.tenant-card[data-tenant="gamma"]'));
	await typeInto(page, '#tenant-form input[name=name]', 'delta');
	await page.click('#tenant-form input[name=unlimited]');
	await page.click('#tenant-add');
	check('tenant delta added explicitly unlimited; its card says so', await until(page,
		() => document.querySelector('.tenant-card[data-tenant="delta"]')?.dataset.unlimited === 'true', 8000));
	await shot(page, 'tenants-admin-full', true);
	check('delta removed from its button (asked twice)', await confirmClick(page,
		'.tenant-card[data-tenant="delta"] button.tenant-remove',
		() => !document.querySelector('.tenant-card[data-tenant="delta"]'), 4000));
}

async function schedulesPage(page) {
	await go(page, '#/schedules', '#schedule-form');
	await typeInto(page, '#schedule-form input[name=name]', 'ui-night');
	await typeInto(page, '#schedule-form input[name=at]', '23:59');
	await page.select('#schedule-form select[name=tenant]', 'beta');
	await typeInto(page, '#schedule-form input[name=value]', '40');
	await page.click('#schedule-add');
	check('the admin adds a time-of-day rule from the form; it is listed with its next time', await until(page,
		() => [...document.querySelectorAll('#schedule-list tbody tr')].some((r) =>
			/ui-night\s+23:59(:00)?\s+tenant beta\s+compute_guaranteed_pct\s+40/.test(r.innerText)), 6000),
	await textOf(page, '#schedule-list'));
	await shot(page, 'schedules');
	check('... and removed (asked twice)', await confirmClick(page, '#schedule-list button[data-schedule="ui-night"]',
		() => !/ui-night/.test(document.getElementById('schedule-list').innerText), 4000));
}

// The month's advice, and the Apply button: template infer-2g's runs (an
// idle sleep) need far less than 25 %: a new version, infer-2g.v2.
async function advicePage(page) {
	await go(page, '#/advice', '#advice table');
	check('the advice has template infer-2g\'s runs', await until(page,
		() => document.querySelector('#advice tr[data-kind="template"][data-name="infer-2g"]'), 6000),
	await textOf(page, '#advice'));
	await page.click('#advice-apply');
	check('Apply adds infer-2g.v2 with the proposal', await until(page,
		() => [...document.querySelectorAll('#advice-applied tbody tr')].some((r) =>
			/infer-2g\s+added\s+infer-2g\.v2/.test(r.innerText)), 8000), await textOf(page, '#advice-applied'));
	await shot(page, 'advice');
}

// A replay of this month with one more T4.
async function whatifPage(page) {
	await go(page, '#/whatif', '#whatif-form');
	await typeInto(page, '#whatif-form input[name=add_cards]', 'T4=1');
	await page.click('#whatif-run');
	const shown = await until(page, () => document.querySelector('.whatif-run[data-run="1"] tr[data-figure="cards"] .variant'),
		30000);
	const figure = (key, col) => textOf(page, `.whatif-run[data-run="1"] tr[data-figure="${key}"] .${col}`);
	const cards = { recorded: Number(await figure('cards', 'recorded')), variant: Number(await figure('cards', 'variant')) };

	check('What-if: the month replayed as recorded (6 cards) and with one more T4 (7), side by side',
		shown && cards.recorded === 6 && cards.variant === 7 && await figure('cards', 'ratio') !== '',
		await textOf(page, '#whatif-runs'));
	fs.writeFileSync(cfg.whatif, JSON.stringify({ cards, placed: Number(await figure('placed', 'recorded')) }));
	await shot(page, 'whatif');
}

async function templatesPage(page) {
	await go(page, '#/templates', '#template-form');
	await page.type('#template-form input[name=name]', 'ui-made');
	await page.type('#template-form input[name=mem]', '6G');
	await page.type('#template-form input[name=compute]', '40');
	await page.type('#template-form input[name=models]', 'T4');
	await page.select('#template-form select[name=isolation]', 'shared');
	await page.click('#template-add');
	check('the admin adds a template from the form; its YAML is shown', await until(page, () =>
		document.querySelector('pre.yaml[data-template="ui-made"]')?.innerText.trim() ===
			'name: ui-made\nmodels:\n- T4\nmemory_mib: 6144\ncompute_pct: 40\nisolation: shared\nruntime: \'\'\ntime: unlimited',
		6000),
	await textOf(page, '#template-list'));
	await shot(page, 'templates');
}

async function alertsPage(page) {
	await go(page, '#/alerts', '#alert-table');
	const levels = await until(page, () => ['critical', 'warning', 'info'].every((l) =>
		Number(document.querySelector(`.tile[data-level="${l}"] .tile-number`).innerText) > 0), 10000);

	check('alerts at all three levels: a process of no task (critical), beta\'s failed task and quota, idle cards',
		levels, await textOf(page, '#alerts'));
	await shot(page, 'alerts');
	await auditChecks(page);
	await shot(page, 'audit');
	const failed = `#alert-table tr[data-kind="task.failed"] button.ack`;
	const id = await page.$eval(failed, (b) => b.dataset.alert).catch(() => null);

	await page.click(failed).catch(() => {});
	await page.click(failed).catch(() => {});
	check('the admin acknowledges the failed task\'s alert, and it leaves the active list', id !== null &&
		await until(page, (a) => !document.querySelector(`#alert-table tr[data-alert="${a}"]`), 8000, id));
}

// The audit log, filtered and paged by the server.
async function auditChecks(page) {
	const ids = () => page.$$eval('#audit-table tbody tr', (rows) => rows.map((r) => Number(r.children[0].innerText)));
	const whos = () => page.$$eval('#audit-table tbody tr', (rows) => rows.map((r) => r.children[2]?.innerText));

	await page.waitForSelector('#audit-controls', { timeout: 5000 });
	await typeInto(page, '#audit-controls input[name=action]', 'task.set');
	await page.click('#audit-apply');
	check('the audit log, filtered on task.set, has the live change', await until(page, () =>
		[...document.querySelectorAll('#audit-table tbody tr')].some((r) => /compute_pct 20 -> 35/.test(r.innerText)) &&
		[...document.querySelectorAll('#audit-table tbody tr')].every((r) => r.children[3]?.innerText === 'task.set'), 5000),
	await textOf(page, '#audit'));
	await typeInto(page, '#audit-controls input[name=action]', '');
	await typeInto(page, '#audit-controls input[name=who]', 'alpha');
	await page.select('#audit-controls select[name=limit]', '25');
	await page.click('#audit-apply');
	await until(page, () => document.querySelectorAll('#audit-table tbody tr').length > 0, 5000);
	const first = await ids();

	check('filtered by who (alpha), a page of at most 25, newest first', first.length > 0 && first.length <= 25 &&
		(await whos()).every((w) => w === 'alpha') && first.every((id, i) => !i || id < first[i - 1]),
	await textOf(page, '#audit-page'));
	await typeInto(page, '#audit-controls input[name=who]', '');
	await page.click('#audit-apply');
	await until(page, (n) => document.querySelectorAll('#audit-table tbody tr').length === n, 5000, 25);
	const newest = await ids();

	await page.click('#audit-older');
	const older = await until(page, (top) => {
		const rows = [...document.querySelectorAll('#audit-table tbody tr')].map((r) => Number(r.children[0].innerText));

		return rows.length > 0 && rows[0] < top;
	}, 5000, newest[newest.length - 1] + 1) ? await ids() : [];

	check('Older: the page before, every entry older than the newest page\'s', older.length > 0 &&
		Math.max(...older) < Math.min(...newest), JSON.stringify({ newest, older }));
	await page.click('#audit-newer');
	check('Newer: back to the newest page', await until(page, (want) => JSON.stringify([...document
		.querySelectorAll('#audit-table tbody tr')].map((r) => Number(r.children[0].innerText))) === want, 5000,
	JSON.stringify(newest)), JSON.stringify(await ids()));
}

// Cancels each of alpha's tasks from the task list, asked twice.
async function cancelAlpha(page, live) {
	await go(page, '#/tasks', '#task-list table');
	await page.select('#task-filters select[name=tenant]', 'alpha');
	for (const id of [cfg.alphaTask, live]) {
		const button = `#task-list button.cancel[data-task="${id}"]`;

		let gone = false;

		await page.waitForSelector(button, { timeout: 8000 }).catch(() => {});
		// Arm, then confirm; a refresh of the list between the two clicks
		// (a loaded host) disarms it: then again.
		for (let i = 0; i < 5 && !gone; i++) {
			await page.click(button).catch(() => {});
			await page.click(button).catch(() => {});
			gone = await until(page, (b) => !document.querySelector(b), 4000, button);
		}
		check(`task ${id} is cancelled from its Cancel button`, gone);
	}
	await page.select('#task-filters select[name=state]', 'succeeded,failed,cancelled,lost');
	let ended = false;

	for (let i = 0; i < 30 && !ended; i++) { // ended tasks are listed when asked: ask
		await page.click('#task-filters button[type=submit]');
		ended = await until(page, () => {
			const states = [...document.querySelectorAll('#task-list tbody tr .badge')].map((b) => b.innerText);

			return states.length === 2 && states.every((s) => s === 'cancelled');
		}, 500);
	}
	check('both end cancelled', ended, await textOf(page, '#task-list'));
	await sleep(1500); // the last usage records of their ends are written with the next tick
}

async function billsPage(page) {
	await go(page, '#/bills', '#bill table');
	await shot(page, 'bills');
	await page.select('#bill-controls select[name=tenant]', 'alpha');
	check('the bill of alpha has its A100 row', await until(page, () =>
		[...document.querySelectorAll('#bill tbody tr')].some((r) => /alpha\s+NVIDIA A100/.test(r.innerText)), 6000),
	await textOf(page, '#bill'));
	const month = await page.$eval('#bill-controls input[name=month]', (e) => e.value);

	await page.click('#bill-csv');
	const file = await downloaded(`gpupool-bill-${month}.csv`);

	check('the CSV button downloads the bill', file !== null, fs.readdirSync(cfg.downloads).join(' '));
	fs.writeFileSync(cfg.bill, JSON.stringify({ month, tenant: 'alpha', file }));
}

async function downloaded(name) {
	const file = path.join(cfg.downloads, name);

	for (let i = 0; i < 100; i++) {
		if (fs.existsSync(file))
			return file;
		await sleep(100);
	}
	return null;
}

// ---- the run -----------------------------------------------------------------

async function main() {
	const { browser, page } = await browserStart();
	let live = 0, started = 0;

	await step('signing in', () => signInChecks(page));
	await step('the pool as a tenant', () => poolAsTenant(page));
	await step('submitting from the form', async () => {
		live = await submitFromForm(page);
		started = Date.now();
	});
	await step('another tenant\'s task', () => refusedTask(page));
	await step('what a tenant may not do', () => tenantLimits(page));
	await step('the pool as the admin', () => poolAsAdmin(page, live));
	await step('the tasks as the admin', () => tasksAsAdmin(page));
	await step('the live change', () => liveChange(page, live, 35));
	await step('a task\'s log', () => failedTaskLog(page));
	await step('utilization', () => usagePage(page, started));
	await step('services', () => servicesPage(page));
	await step('tenants and quotas', () => tenantsPage(page));
	await step('tenants\' administration', () => tenantsAdmin(page));
	await step('templates', () => templatesPage(page));
	await step('schedules', () => schedulesPage(page));
	await step('advice', () => advicePage(page));
	await step('what-if', () => whatifPage(page));
	await step('alerts and audit', () => alertsPage(page));
	await step('cancelling', () => cancelAlpha(page, live));
	await step('the bill', () => billsPage(page));
	check('no page broke the Content-Security-Policy or threw', problems.length === 0, problems.join('\n'));
	await browser.close();
}

await main().catch((e) => check('the browser ran', false, e.stack));
finish();
