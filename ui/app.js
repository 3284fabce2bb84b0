// app.js — the console's frame (docs/console.md): signing in with a token,
// the navigation bar, the message area, and the hash routes (#/pool,
// #/tasks, #/tasks/ID, #/services/TENANT/NAME, ...) that hand the main
// area to one page module at a time. Who the user is comes from GET /v1/tenants: the admin sees every
// tenant (one of them with the admin flag), a tenant only itself.
import { ApiError, get, onUnauthorized, tokenClear, tokenGet, tokenSet } from './api.js';
import { el, fill, tenantsKnow } from './dom.js';
import * as advicePage from './page-advice.js';
import * as alertsPage from './page-alerts.js';
import * as billsPage from './page-bills.js';
import * as poolPage from './page-pool.js';
import * as schedulesPage from './page-schedules.js';
import * as servicesPage from './page-services.js';
import * as taskPage from './page-task.js';
import * as tasksPage from './page-tasks.js';
import * as templatesPage from './page-templates.js';
import * as tenantsPage from './page-tenants.js';
import * as usagePage from './page-usage.js';
import * as whatifPage from './page-whatif.js';

// The pages, in the navigation bar's order; each module has render(view).
const PAGES = [
	{ hash: '#/pool', title: 'Pool', page: poolPage },
	{ hash: '#/tasks', title: 'Tasks', page: tasksPage },
	{ hash: '#/services', title: 'Services', page: servicesPage },
	{ hash: '#/usage', title: 'Utilization', page: usagePage },
	{ hash: '#/tenants', title: 'Tenants and quotas', page: tenantsPage },
	{ hash: '#/templates', title: 'Templates', page: templatesPage },
	{ hash: '#/schedules', title: 'Schedules', page: schedulesPage },
	{ hash: '#/advice', title: 'Advice', page: advicePage },
	{ hash: '#/whatif', title: 'What-if', page: whatifPage },
	{ hash: '#/bills', title: 'Bills', page: billsPage },
	{ hash: '#/alerts', title: 'Alerts and audit', page: alertsPage },
];
// The pages of one object: a route, the page that draws it, the bar's
// entry it belongs to, and its parameters from the route's groups.
const OBJECT_ROUTES = [
	{ re: /^#\/tasks\/([^/]+)$/, page: taskPage, nav: '#/tasks', params: (m) => ({ id: m[1] }) },
	{ re: /^#\/services\/([^/]+)\/([^/]+)$/, page: servicesPage, nav: '#/services',
		params: (m) => ({ tenant: m[1], name: m[2] }) },
];

const ui = {
	nav: document.getElementById('nav'),
	who: document.getElementById('who'),
	signout: document.getElementById('signout'),
	messages: document.getElementById('messages'),
	signin: document.getElementById('signin'),
	main: document.getElementById('main'),
};

let session = null; // {me, admin, tenants} once signed in
let current = null; // the view on screen

// ---- the message area -------------------------------------------------------

// Shows an error (an ApiError with its status, or a text) until dismissed
// or the next page.
function showError(error) {
	const text = error instanceof ApiError ? error.describe() : String(error.message || error);

	messageAdd('error', text);
}

function showNotice(text) {
	messageAdd('notice', text);
}

function messageAdd(kind, text) {
	const same = [...ui.messages.children].find((m) => m.dataset.text === text);

	if (same)
		return; // a page that refreshes says the same thing again: once is enough
	const box = el('div', { class: `message message-${kind}`, role: kind === 'error' ? 'alert' : 'status',
		data: { text } },
		el('span', { class: 'message-text', text }),
		el('button', { class: 'message-close', type: 'button', title: 'dismiss', text: '×',
			on: { click: () => box.remove() } }));

	ui.messages.append(box);
}

function messagesClear() {
	ui.messages.replaceChildren();
}

// ---- signing in ------------------------------------------------------------

// Who the token belongs to, from GET /v1/tenants (throws ApiError).
async function whoami() {
	const { tenants } = await get('/v1/tenants');
	const admin = tenants.find((t) => t.admin);

	tenantsKnow(tenants);
	return { admin: Boolean(admin), me: admin || tenants[0], tenants };
}

async function signIn(token) {
	tokenSet(token);
	try {
		session = await whoami();
	} catch (e) {
		tokenClear();
		session = null;
		throw e;
	}
}

// The signed-in user's token changed (it asked for a new one): go on
// with the new one, and read who it is again (the tenants may have changed).
async function resign(token) {
	tokenSet(token);
	await tenantsReload();
}

// The tenants changed (one added or removed): the pages' lists follow.
async function tenantsReload() {
	if (!session)
		return;
	session = await whoami();
	if (current)
		current.tenants = session.tenants;
}

function signOut(why) {
	if (current)
		current.leave();
	current = null;
	tokenClear();
	session = null;
	messagesClear();
	if (why)
		showError(why);
	frameDraw();
}

function signinForm() {
	const input = el('input', { type: 'password', name: 'token', id: 'token', autocomplete: 'off',
		placeholder: 'a tenant\'s token, or the admin\'s', required: 'required' });
	const form = el('form', { class: 'signin-form' },
		el('h1', { text: 'Sign in to gpupool' }),
		el('p', { class: 'hint' }, 'Paste the token ', el('code', { text: 'gpupool tenant add' }),
			' printed, or the admin\'s (', el('code', { text: 'admin.token' }), ' next to the server\'s ' +
			'database). It stays in this tab only (sessionStorage), and goes to the server as ',
			el('code', { text: 'Authorization: Bearer' }), '.'),
		el('label', { class: 'field', for: 'token' }, el('span', { class: 'field-label', text: 'Token' }), input),
		el('button', { type: 'submit', id: 'signin-button', text: 'Sign in' }));

	form.addEventListener('submit', async (event) => {
		event.preventDefault();
		messagesClear();
		try {
			await signIn(input.value.trim());
		} catch (e) {
			showError(e);
			return;
		}
		if (!location.hash || location.hash === '#/signin')
			location.hash = '#/pool';
		frameDraw();
	});
	return form;
}

// ---- the frame and the routes --------------------------------------------

function frameDraw() {
	const signedIn = Boolean(session);

	ui.signin.hidden = signedIn;
	ui.nav.hidden = !signedIn;
	ui.signout.hidden = !signedIn;
	ui.main.hidden = !signedIn;
	if (!signedIn) {
		fill(ui.who);
		fill(ui.main);
		fill(ui.signin, signinForm());
		document.getElementById('token').focus();
		return;
	}
	fill(ui.who, el('span', { class: 'who-name', id: 'who-name', text: session.me.name }),
		session.admin ? el('span', { class: 'badge badge-admin', text: 'admin' }) : null);
	route();
}

function navDraw(hash) {
	fill(ui.nav, PAGES.map((p) => el('a', { href: p.hash, text: p.title, data: { page: p.hash.slice(2) },
		class: hash.startsWith(p.hash) ? 'active' : '' })));
}

// The view a page renders into: its part of the screen, who is signed
// in, the message area, and timers that stop when the page is left.
// A page that changes who the user is (a new token for itself) calls
// resign(token).
function viewNew(params) {
	const timers = [];
	const view = {
		main: ui.main, params, live: true,
		me: session.me, admin: session.admin, tenants: session.tenants,
		error: showError, notice: showNotice, resign, tenantsReload,
		every(ms, fn) { timers.push(setInterval(() => view.live && fn(), ms)); },
		leave() { view.live = false; timers.forEach(clearInterval); },
	};

	return view;
}

function route() {
	if (!session)
		return;
	const hash = location.hash;
	const object = OBJECT_ROUTES.map((r) => ({ r, m: r.re.exec(hash) })).find((x) => x.m);
	const entry = object ? { page: object.r.page } : PAGES.find((p) => p.hash === hash);
	const params = object ? object.r.params(object.m.map((g) => g && decodeURIComponent(g))) : {};

	if (!entry) {
		location.hash = '#/pool';
		return;
	}
	if (current)
		current.leave();
	messagesClear();
	navDraw(object ? object.r.nav : hash);
	fill(ui.main);
	current = viewNew(params);
	const view = current;

	entry.page.render(view).catch((e) => view.live && showError(e));
}

async function start() {
	ui.signout.addEventListener('click', () => signOut());
	onUnauthorized((e) => session && signOut(`signed out: ${e.describe()}`));
	window.addEventListener('hashchange', route);
	if (tokenGet()) {
		try {
			session = await whoami();
		} catch (e) {
			tokenClear();
			showError(e);
		}
	}
	frameDraw();
}

start();
