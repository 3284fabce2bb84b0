// pods.mjs — a Kubernetes cluster's pods in the web console, in headless
// Chromium; run by tests/k8s/test-service.sh, whose server runs with
// --kubernetes and whose config (argv[2]) names the admin's token and the
// pod's task. The tasks page lists the pod (its name, kind pod, its
// share), its task page says it is a pod, and a live change made there is
// asked of the pod: the notice says so, and the share shown follows once
// the scheduler extender has admitted it.
import { browserStart, cfg, check, finish, go, problems, shot, signIn, step, textOf, until }
	from './browser.mjs';

async function podListed(page) {
	await page.goto(`${cfg.url}/ui/`);
	await signIn(page, cfg.admin);
	await go(page, '#/tasks', '#task-list table');
	const listed = await until(page, (name) => [...document.querySelectorAll('#task-list tbody tr')]
		.some((r) => r.innerText.includes(name)), 8000, cfg.podName);
	const row = await page.$$eval('#task-list tbody tr', (rows, name) =>
		rows.find((r) => r.innerText.includes(name))?.innerText || '', cfg.podName);

	check('the tasks page lists the pod, with its slice', listed && /\b20 ?%/.test(row), row);
	await shot(page, 'pods-tasks');
}

async function podChanged(page) {
	await go(page, `#/tasks/${cfg.task}`, '#change-form');
	// (its facts come after the devices are read: wait for them)
	const shown = await until(page, (uid) => {
		const facts = document.querySelector('.facts')?.innerText || '';

		return facts.includes('Kubernetes pod') && facts.includes(uid);
	}, 8000, cfg.podUid);

	check('the task page says it is a Kubernetes pod, with its UID', shown, await textOf(page, '.facts'));
	await page.$eval('#change-form input[name=compute]', (e) => { e.value = '30'; });
	await page.type('#change-form input[name=reason]', 'console test: a pod');
	await page.click('#change-button');
	check('the live change is asked of the pod', await until(page,
		() => /asked of pod/.test(document.body.innerText), 8000), await textOf(page, 'body'));
	check('the share shown follows once the extender admitted it', await until(page,
		() => document.getElementById('task-compute')?.innerText === '30 %', 15000),
		await textOf(page, '#task-compute'));
	await shot(page, 'pods-task');
}

async function main() {
	const { browser, page } = await browserStart();

	await step('the pod in the tasks page', () => podListed(page));
	await step('the pod\'s task page', () => podChanged(page));
	check('no page broke the Content-Security-Policy or threw', problems.length === 0, problems.join('\n'));
	await browser.close();
}

await main().catch((e) => check('the browser ran', false, e.stack));
finish();
