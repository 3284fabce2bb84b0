// page-alerts.js — the Alerts and audit page: the alerts at their three
// levels, critical, warning and info (GET /v1/alerts, active or all; a
// tenant sees its own), acknowledged by the admin (POST
// /v1/alerts/ID/clear); and the audit log, the change log of every write
// through the API (GET /v1/audit), which only the admin may read.
import { api, get } from './api.js';
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

async function auditDraw(view, box) {
	if (!view.admin) {
		fill(box, el('p', { class: 'hint', id: 'audit-admin-only', text: 'Only the admin may read the audit log.' }));
		return;
	}
	const { audit } = await get('/v1/audit?limit=500');

	if (!view.live)
		return;
	fill(box, el('p', { class: 'hint', text: `the newest ${audit.length} entries, newest first: ` +
		'every write through the API, and the scheduler\'s starts, preemptions and ends' }),
	table(['#', 'Time', 'Who', 'Action', 'Object', 'Detail'],
		audit.slice().reverse().map((a) => [String(a.id), when(a.time), a.who, a.action, a.object,
			el('span', { class: 'reason', text: a.detail })])));
}
