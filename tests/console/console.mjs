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
import fs from 'node:fs';
import path from 'node:path';
import { browserStart, cfg, check, count, go, problems, shot, signIn, signOut, sleep, step,
	textOf, until, finish } from './browser.mjs';

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
	await page.click('#change-button');
	await page.waitForSelector('#change-audit', { timeout: 10000 }).catch(() => {});
	const audit = await textOf(page, '#change-audit');

	check('the live change shows the audit entry it made (task.set, old and new share, the reason)',
		/task\.set/.test(audit) && audit.includes(`compute_pct 20 -> ${compute}`) && /more for the burner/.test(audit), audit);
	check('the task\'s page shows the new share', await until(page,
		(c) => document.getElementById('task-compute')?.innerText === `${c} %`, 8000, compute));
	fs.writeFileSync(cfg.liveFile, JSON.stringify({ task: id, compute }));
	for (let i = 0; i < 200 && !fs.existsSync(cfg.regionDone); i++)
		await sleep(100);
	await shot(page, 'task');
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
		check('utilization: a Chart.js line chart for the pool and each card (7)', await count(page, 'canvas.chart') === 7);
	else
		check('utilization: without Chart.js, the banner says to install libjs-chart.js, and tables stand in',
			/libjs-chart\.js/.test(await textOf(page, '#chart-missing')) && await count(page, '.chart-card table') === 7);
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
			'name: ui-made\nmodels:\n- T4\nmemory_mib: 6144\ncompute_pct: 40\nisolation: shared', 6000),
	await textOf(page, '#template-list'));
	await shot(page, 'templates');
}

async function alertsPage(page) {
	await go(page, '#/alerts', '#alert-table');
	const levels = await until(page, () => ['critical', 'warning', 'info'].every((l) =>
		Number(document.querySelector(`.tile[data-level="${l}"] .tile-number`).innerText) > 0), 10000);

	check('alerts at all three levels: a process of no task (critical), beta\'s failed task and quota, idle cards',
		levels, await textOf(page, '#alerts'));
	check('the audit log has the live change', /task\.set/.test(await textOf(page, '#audit')));
	await shot(page, 'alerts');
	const failed = `#alert-table tr[data-kind="task.failed"] button.ack`;
	const id = await page.$eval(failed, (b) => b.dataset.alert).catch(() => null);

	await page.click(failed).catch(() => {});
	await page.click(failed).catch(() => {});
	check('the admin acknowledges the failed task\'s alert, and it leaves the active list', id !== null &&
		await until(page, (a) => !document.querySelector(`#alert-table tr[data-alert="${a}"]`), 8000, id));
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
	await step('tenants and quotas', () => tenantsPage(page));
	await step('templates', () => templatesPage(page));
	await step('alerts and audit', () => alertsPage(page));
	await step('cancelling', () => cancelAlpha(page, live));
	await step('the bill', () => billsPage(page));
	check('no page broke the Content-Security-Policy or threw', problems.length === 0, problems.join('\n'));
	await browser.close();
}

await main().catch((e) => check('the browser ran', false, e.stack));
finish();
