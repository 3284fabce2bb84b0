// browser.mjs — what the console's checks in headless Chromium share
// (console.mjs: the console on one machine; pods.mjs: a cluster's pods in
// it): the config the shell wrote (argv[2]), the checks and their counts,
// the browser and the page's helpers. Every check reads what the page
// shows (the DOM), prints "ok   NAME" or "FAIL NAME", and counts;
// finish() writes the counts to cfg.counts for the shell's total and
// exits 1 when any check failed.
import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

export const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
export const counts = { pass: 0, fail: 0 };
export const problems = []; // CSP violations and uncaught errors, from every page

// ---- checks ------------------------------------------------------------------

export function check(name, passed, detail = '') {
	if (passed) {
		counts.pass++;
		console.log(`ok   ${name}`);
	} else {
		counts.fail++;
		console.log(`FAIL ${name}`);
		if (detail)
			console.log(String(detail).replace(/^/gm, '    '));
	}
	return passed;
}

// Runs step(); an exception (a selector that never came) is a failed check.
export async function step(name, fn) {
	try {
		await fn();
	} catch (e) {
		check(name, false, e.stack || e.message);
	}
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- the page -------------------------------------------------------------------

export async function browserStart() {
	const browser = await puppeteer.launch({
		executablePath: cfg.chromium, headless: true,
		args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--window-size=1280,800'],
	});
	const page = await browser.newPage();

	await page.setViewport({ width: 1280, height: 800 });
	await browser.defaultBrowserContext().setDownloadBehavior({ policy: 'allow', downloadPath: cfg.downloads });
	page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
	page.on('console', (m) => {
		if (/Content Security Policy/i.test(m.text()))
			problems.push(`CSP: ${m.text()}`);
	});
	return { browser, page };
}

export async function go(page, hash, ready) {
	await page.evaluate((h) => { location.hash = h; }, hash);
	await page.waitForSelector(ready, { timeout: 10000 });
}

// Waits until fn (run in the page with args) is true; false after ms.
export async function until(page, fn, ms, ...args) {
	try {
		await page.waitForFunction(fn, { timeout: ms, polling: 200 }, ...args);
		return true;
	} catch {
		return false;
	}
}

export const textOf = (page, selector) => page.$eval(selector, (e) => e.innerText).catch(() => '');
export const count = (page, selector) => page.$$eval(selector, (list) => list.length);

// A screenshot of the viewport (1280 × 800), or with full of the whole page.
export async function shot(page, name, full = false) {
	await sleep(300);
	await page.screenshot({ path: path.join(cfg.shots, `${name}.png`), fullPage: full });
}

// Clicks a button that asks for its confirmation (dom.js confirmButton):
// arm, then confirm; a page that redraws between the two disarms it: then
// again, until done() (run in the page with args) is true.
export async function confirmClick(page, selector, done, ms, ...args) {
	for (let i = 0; i < 5; i++) {
		await page.click(selector).catch(() => {});
		await page.click(selector).catch(() => {});
		if (await until(page, done, ms, ...args))
			return true;
	}
	return false;
}

// Sets an input's value as a person would type it (after clearing it).
export async function typeInto(page, selector, text) {
	await page.$eval(selector, (e) => { e.value = ''; });
	await page.type(selector, text);
}

export async function signIn(page, token) {
	await page.waitForSelector('#token', { visible: true, timeout: 10000 });
	await page.$eval('#token', (e) => { e.value = ''; });
	await page.type('#token', token);
	await page.click('#signin-button');
}

export async function signOut(page) {
	await page.click('#signout');
	await page.waitForSelector('#token', { visible: true, timeout: 5000 });
}

// The counts for the shell, and the exit status.
export function finish() {
	fs.writeFileSync(cfg.counts, `${counts.pass} ${counts.fail}\n`);
	process.exit(counts.fail ? 1 : 0);
}
