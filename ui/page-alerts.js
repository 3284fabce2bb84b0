// page-alerts.js — the Alerts and audit page: the alerts at their three
// levels, critical, warning and info (GET /v1/alerts, active or all; a
// tenant sees its own), acknowledged by the admin (POST
// /v1/alerts/ID/clear); and the audit log, the change log of every write
// through the API (GET /v1/audit), which only the admin may read: a page
// at a time, newest first, filtered by who, what (an action, or a prefix
// such as "task."), the object and the time — the server filters and
// pages (?who=&action=&object=&since_ms=&until_ms=, ?before= for older
// pages and ?after= for newer ones), so a long log costs one page.
import { api, get, query } from './api.js';
import { add, badge, confirmButton, el, field, fill, select, table, when } from './dom.js';

const LEVELS = ['critical', 'warning', 'info'];
const REFRESH_MS = 5000;

export async function render(view) {
	const alerts = el('div', { id: 'alerts' });
	const audit = el('div', { id: 'audit' });
	const controls = el('form', { class: 'filters', id: 'alert-controls' },
		field('Show', select('state', [['active', 'active alerts'], ['all', 'active and cleared']], 'active')));
	const again = () => alertsDraw(view, controls, alerts).catch(view.error);

	controls.addEventListener('change', again);
	add(view.main, el('h1', { text: 'Alerts' }), controls, alerts, el('h1', { text: 'Audit log' }), audit);
	await Promise.all([alertsDraw(view, controls, alerts), auditDraw(view, audit)]);
	view.every(REFRESH_MS, again);
}

async function alertsDraw(view, controls, box) {
	const { alerts } = await get(`/v1/alerts?state=${controls.elements.state.value}&limit=500`);

	if (!view.live || box.querySelector('.armed'))
		return;
	const active = alerts.filter((a) => !a.cleared);
	const rank = (a) => (a.cleared ? 3 : LEVELS.indexOf(a.level));

	alerts.sort((a, b) => rank(a) - rank(b) || b.id - a.id); // critical first, then newest

	fill(box, el('div', { class: 'tiles' }, LEVELS.map((level) => el('div', { class: `tile tile-${level}`, data: { level } },
		el('div', { class: 'tile-title', text: level }),
		el('div', { class: 'tile-number', text: String(active.filter((a) => a.level === level).length) }),
		el('div', { text: 'active' })))),
	el('table', { class: 'grid', id: 'alert-table' },
		el('thead', {}, el('tr', {}, ['#', 'Level', 'Kind', 'Object', 'Tenant', 'Message', 'Raised', 'Cleared', '']
			.map((h) => el('th', { text: h })))),
		el('tbody', {}, alerts.length ? alerts.map((a) => alertRow(view, a, () => alertsDraw(view, controls, box)))
			: el('tr', {}, el('td', { class: 'empty', colspan: 9, text: 'no alert' })))));
}

function alertRow(view, a, changed) {
	const cells = [String(a.id), badge(a.level), a.kind, a.object, a.tenant || 'the pool',
		el('span', { class: 'reason', text: a.message }), when(a.created), a.cleared ? when(a.cleared) : '-',
		!a.cleared && view.admin ? clearButton(view, a, changed) : ''];

	return el('tr', { class: `alert alert-${a.level}`, data: { alert: a.id, kind: a.kind } },
		cells.map((c) => el('td', {}, c)));
}

function clearButton(view, a, changed) {
	return confirmButton('Acknowledge', { class: 'ack', data: { alert: a.id } }, async () => {
		try {
			await api('POST', `/v1/alerts/${a.id}/clear`);
			view.notice(`alert ${a.id} (${a.kind}, ${a.object}) cleared`);
		} catch (e) {
			view.error(e);
		}
		await changed();
	});
}

// ---- the audit log ------------------------------------------------------------------

const PAGE_SIZES = ['25', '50', '100', '500'];

async function auditDraw(view, box) {
	if (!view.admin) {
		fill(box, el('p', { class: 'hint', id: 'audit-admin-only', text: 'Only the admin may read the audit log.' }));
		return;
	}
	const names = el('datalist', { id: 'audit-who-list' },
		[...view.tenants.map((t) => t.name), 'server'].map((n) => el('option', { value: n })));
	const actions = el('datalist', { id: 'audit-action-list' });
	const page = el('div', { id: 'audit-page' });
	const controls = el('form', { class: 'filters', id: 'audit-controls' },
		field('Who', el('input', { name: 'who', list: 'audit-who-list', size: 12, placeholder: 'anyone' })),
		field('Action', el('input', { name: 'action', list: 'audit-action-list', size: 14, placeholder: 'any, or task.' })),
		field('Object', el('input', { name: 'object', size: 10, placeholder: 'a task id, a name' })),
		field('From', el('input', { name: 'since', type: 'datetime-local', step: 1 })),
		field('Until', el('input', { name: 'until', type: 'datetime-local', step: 1 })),
		field('Per page', select('limit', PAGE_SIZES, '50')),
		el('button', { type: 'submit', id: 'audit-apply', text: 'Filter' }),
		el('button', { type: 'button', id: 'audit-newest', class: 'ack', text: 'Newest' }),
		el('button', { type: 'button', id: 'audit-newer', class: 'ack', text: '← Newer' }),
		el('button', { type: 'button', id: 'audit-older', class: 'ack', text: 'Older →' }));
	// Where the page is: the newest, or before or after an entry.
	const at = { mode: 'newest', id: 0, reply: null };
	const go = (mode, id) => {
		Object.assign(at, { mode, id });
		auditPage(view, controls, at, page, actions).catch(view.error);
	};

	controls.addEventListener('submit', (e) => { e.preventDefault(); go('newest', 0); });
	controls.querySelector('#audit-newest').addEventListener('click', () => go('newest', 0));
	controls.querySelector('#audit-older').addEventListener('click', () => go('before', at.reply.next_before));
	controls.querySelector('#audit-newer').addEventListener('click', () => go('after', at.reply.next_after));
	fill(box, names, actions, controls, page);
	await auditPage(view, controls, at, page, actions);
}

// A datetime-local's value as unix ms ('' when empty).
function msOf(input) {
	return input.value ? String(new Date(input.value).getTime()) : '';
}

async function auditPage(view, controls, at, page, actions) {
	const f = controls.elements;
	const q = { who: f.who.value.trim(), action: f.action.value.trim(), object: f.object.value.trim(),
		since_ms: msOf(f.since), until_ms: msOf(f.until), limit: f.limit.value };

	if (at.mode === 'before')
		q.before = at.id;
	else if (at.mode === 'after')
		q.after = at.id;
	const reply = await get(`/v1/audit${query(q)}`);

	if (!view.live)
		return;
	at.reply = reply;
	controls.querySelector('#audit-older').disabled = reply.next_before === null;
	controls.querySelector('#audit-newer').disabled = reply.next_after === null;
	const seen = new Set([...actions.children].map((o) => o.value));

	for (const a of reply.audit)
		for (const name of [a.action, `${a.action.split('.')[0]}.`])
			if (!seen.has(name)) {
				seen.add(name);
				actions.append(el('option', { value: name }));
			}
	const shown = reply.audit.slice().reverse();

	fill(page, el('p', { class: 'hint', id: 'audit-range', data: { first: shown.length ? shown[shown.length - 1].id : '',
		last: shown.length ? shown[0].id : '' },
	text: shown.length ? `entries #${shown[0].id} to #${shown[shown.length - 1].id}, newest first` +
		`${reply.next_before === null ? ', the oldest the filter keeps' : ''}` +
		`${reply.next_after === null ? ', the newest' : ''}: every write through the API, and the ` +
		'scheduler\'s starts, preemptions and ends' : 'no entry: nothing the filter keeps' }),
	el('div', { id: 'audit-table' }, table(['#', 'Time', 'Who', 'Action', 'Object', 'Detail'],
		shown.map((a) => [String(a.id), when(a.time), a.who, a.action, a.object,
			el('span', { class: 'reason', text: a.detail })]), 'no entry')));
}
