// page-task.js — one task's page (#/tasks/ID): the task as GET
// /v1/tasks/ID gives it (another tenant's is refused by the API, and the
// refusal is shown as it came), its cancel button, its charts over its
// run — memory held and used, compute share held and used, per device —
// from its own usage records (GET /v1/usage?task=ID), the live change of
// its compute share and priority (PATCH /v1/tasks/ID, with a reason)
// with the audit entry the change made (GET /v1/audit?object=ID, which
// only the admin may read), the audit entries about it (the scheduler's
// name it "task ID"), and the end of its log (GET /v1/tasks/ID/logs).
import { ApiError, api, get, getAll, request } from './api.js';
import { chartCard, sharedMax, timeLabel } from './charts.js';
import { add, badge, el, field, fill, table, tenantCell, when } from './dom.js';
import { cancelButton, cancellable, placed, shape } from './page-tasks.js';

const REFRESH_MS = 3000;
const LOG_LINES = 200;
const CHANGEABLE = new Set(['pending', 'running', 'preempted']);

export async function render(view) {
	const id = view.params.id;
	let task;

	add(view.main, el('h1', {}, `Task ${id}`));
	try {
		task = await get(`/v1/tasks/${encodeURIComponent(id)}`);
	} catch (e) {
		refused(view, id, e);
		return;
	}
	const facts = el('div', { id: 'task-facts' });
	const log = el('pre', { class: 'log', id: 'task-log' });
	const audit = el('div', { id: 'task-audit' });
	const graphs = el('div', { id: 'task-charts' });
	const charts = [];

	add(view.main, facts, el('h2', { text: 'Over its run' }), graphs, changeSection(view, task, () => again()),
		el('h2', { text: 'Log' }), logControls(view, id, log), log, audit);
	const again = async () => {
		task = await get(`/v1/tasks/${id}`);
		if (!view.live)
			return;
		await factsDraw(view, facts, task, again);
		await Promise.all([logLoad(view, id, log), auditDraw(view, id, audit), chartsDraw(view, task, graphs, charts)]);
	};
	const leave = view.leave;

	view.leave = () => { leave(); charts.forEach((c) => c.destroy()); };
	await again();
	view.every(REFRESH_MS, () => CHANGEABLE.has(task.state) && again().catch(view.error));
}

// ---- its charts --------------------------------------------------------------

// The task's records (GET /v1/usage?task=ID) as two charts, each with a
// line per device: the memory its slice held and the most its processes
// used, and the share held and the share of the card it used, at the end
// of each record's interval.
async function chartsDraw(view, t, box, charts) {
	const records = await getAll(`/v1/usage?task=${t.id}`, 'usage', 20000);

	if (!view.live)
		return;
	charts.splice(0).forEach((c) => c.destroy());
	if (!records.length) {
		fill(box, el('p', { class: 'hint', id: 'task-charts-none',
			text: t.started ? 'No usage record yet: the first comes with the next sampling.'
				: 'The task has not run: nothing was measured.' }));
		return;
	}
	const times = [...new Set(records.map((r) => r.end_ms))].sort((a, b) => a - b);
	const at = new Map(times.map((x, i) => [x, i]));
	const span = times[times.length - 1] - records[0].start_ms;
	const labels = times.map((x) => timeLabel(x, span));
	const devices = [...new Set(records.map((r) => r.device))];
	const line = (device, pick) => {
		const values = times.map(() => null);

		for (const r of records)
			if (r.device === device)
				values[at.get(r.end_ms)] = pick(r);
		return values;
	};
	const name = (d) => (devices.length > 1 ? ` (${d.slice(0, 12)})` : '');
	const memory = devices.flatMap((d) => [
		{ label: `held${name(d)}`, data: line(d, (r) => r.mem_mib), colour: '#2563eb', points: true },
		{ label: `used, most${name(d)}`, data: line(d, (r) => r.mem_peak_mib || null), colour: '#dc2626', points: true }]);
	const compute = devices.flatMap((d) => [
		{ label: `held %${name(d)}`, data: line(d, (r) => r.compute_pct), colour: '#9ca3af', points: true },
		{ label: `used %${name(d)}`, data: line(d, (r) => (100 * r.used_ms) / Math.max(1, r.end_ms - r.start_ms)),
			colour: '#f59e0b', points: true }]);

	fill(box, el('div', { class: 'charts' },
		chartCard({ title: 'Memory (MiB)', labels, datasets: memory, yTitle: 'MiB', charts,
			yMax: sharedMax(memory.map((d) => d.data)), data: { kind: 'task-memory' }, format: (v) => `${Math.round(v)} MiB` }),
		chartCard({ title: 'Compute (% of a card)', labels, datasets: compute, yTitle: '%', charts,
			yMax: sharedMax(compute.map((d) => d.data), 100), data: { kind: 'task-compute' } })),
	el('p', { class: 'hint', text: `${records.length} usage record(s), one per sampling and device: what the slice ` +
		'held, the most memory its processes held, and the device time they used over the interval.' }));
}

// The API said no (403: another tenant's; 404: none): say so, here and in
// the message area.
function refused(view, id, error) {
	view.error(error);
	add(view.main, el('div', { class: 'refused', id: 'task-refused' },
		el('p', { text: `Task ${id} cannot be shown: the server answered ` +
			`${error instanceof ApiError ? error.status : ''} “${error.message}”.` }),
		el('p', {}, el('a', { href: '#/tasks', text: 'Back to the tasks' }))));
}

async function factsDraw(view, box, t, changed) {
	const devices = await get('/v1/devices');

	if (box.querySelector('.armed'))
		return; // a cancel asked for its confirmation: leave it there
	const indexes = new Map((devices.devices || []).map((d) => [d.uuid, d.index]));
	const env = Object.entries(t.env || {}).map(([k, v]) => `${k}=${v}`).join(' ');

	fill(box, el('div', { class: 'task-head' }, badge(t.state), el('span', { class: 'reason', text: t.reason }),
		cancellable(t) ? cancelButton(view, t, changed) : null),
	el('dl', { class: 'facts' }, [
		['Tenant', tenantCell(t.tenant)], ['Name', t.name],
		t.pod_uid ? ['Kubernetes pod', el('code', { text: `${t.name} (UID ${t.pod_uid})` })]
			: ['Command', el('code', { text: t.command })],
		['Shape', shape(t)], ['Compute share', el('span', { id: 'task-compute', text: `${t.compute_pct} %` })],
		['Priority', el('span', { id: 'task-priority', text: String(t.priority) })],
		['Isolation', t.isolation], ['Kind', t.kind],
		['Runtime', el('span', { id: 'task-runtime', text: t.runtime || 'any (from before runtimes)' })],
		['Model', t.model || 'any'],
		['Devices', placed(t.placement, indexes)], ['Placement', t.placement || '-'],
		['Process group', t.pid ? String(t.pid) : '-'], ['Exit code', t.ended ? String(t.exit_code) : '-'],
		['Submitted', when(t.created)], ['Started', when(t.started)], ['Ended', when(t.ended)],
		['Working directory', t.workdir || '-'], ['Environment', env || '-'],
	].map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)])));
}

// ---- the live change ------------------------------------------------------

function changeSection(view, t, changed) {
	if (!CHANGEABLE.has(t.state))
		return el('p', { class: 'hint', text: 'The task has ended: its share and priority can no longer change.' });
	const result = el('div', { id: 'change-result' });
	const form = el('form', { class: 'change', id: 'change-form' },
		field('Compute %', el('input', { name: 'compute', type: 'number', min: 1, max: 100, value: t.compute_pct })),
		field('Priority', el('input', { name: 'priority', type: 'number', min: 0, max: 9, value: t.priority })),
		field('Reason', el('input', { name: 'reason', class: 'wide', maxlength: 200,
			placeholder: 'why, for the audit log' })),
		el('button', { type: 'submit', text: 'Change', id: 'change-button' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		change(view, t.id, form, result).then(changed).catch(view.error);
	});
	return el('section', {}, el('h2', { text: 'Live change' }),
		el('p', { class: 'hint', text: t.pod_uid
			? 'A Kubernetes pod: the change is asked on the pod (its gpupool.io/compute and ' +
			  'gpupool.io/priority annotations); the scheduler extender admits it by its devices\' room ' +
			  'and its namespace\'s quota, or says why not in an Event on the pod.'
			: 'A running task\'s new share is checked against its devices and its ' +
			  'tenant\'s quotas at once, and reaches its processes within a scheduling tick.' }),
		form, result);
}

async function change(view, id, form, result) {
	const before = await get(`/v1/tasks/${id}`);
	const f = form.elements;
	const body = {};

	if (Number(f.compute.value) !== before.compute_pct)
		body.compute_pct = Number(f.compute.value);
	if (Number(f.priority.value) !== before.priority)
		body.priority = Number(f.priority.value);
	if (!Object.keys(body).length)
		throw new Error('nothing to change: give another compute share or priority');
	if (f.reason.value.trim())
		body.reason = f.reason.value.trim();
	const after = await api('PATCH', `/v1/tasks/${id}`, body);

	if (before.pod_uid) {
		view.notice(`task ${id}: asked of pod ${before.name}` +
			('compute_pct' in body ? `, compute ${body.compute_pct} %` : '') +
			('priority' in body ? `, priority ${body.priority}` : '') +
			'; the extender admits it or says why not in an Event on the pod');
		fill(result, el('h3', { text: 'The audit entry it made' }), await changeAudit(view, id));
		return;
	}
	const what = [];

	if ('compute_pct' in body)
		what.push(`compute ${before.compute_pct} % → ${after.compute_pct} %`);
	if ('priority' in body)
		what.push(`priority ${before.priority} → ${after.priority}`);
	view.notice(`task ${id} changed: ${what.join(', ')}`);
	fill(result, el('h3', { text: 'The audit entry it made' }), await changeAudit(view, id));
}

// The newest task.set entry about task id, as the admin reads it (the
// server filters: ?object=ID&action=task.set).
async function changeAudit(view, id) {
	if (!view.admin)
		return el('p', { class: 'hint', text: 'The change is in the audit log (task.set, with the reason); ' +
			'only the admin may read the audit log.' });
	const { audit } = await get(`/v1/audit?object=${encodeURIComponent(id)}&action=task.set&limit=1`);
	const entry = audit.pop();

	return entry ? auditTable([entry], 'change-audit')
		: el('p', { class: 'hint', text: 'no task.set entry about this task' });
}

function auditTable(entries, id) {
	return el('div', { id }, table(['#', 'Time', 'Who', 'Action', 'Object', 'Detail'],
		entries.map((a) => [String(a.id), when(a.time), a.who, a.action, a.object, a.detail])));
}

// The audit entries about the task (the admin's only).
async function auditDraw(view, id, box) {
	if (!view.admin)
		return;
	// The API's rows name the task "ID", the scheduler's "task ID".
	const pages = await Promise.all([String(id), `task ${id}`].map((o) =>
		get(`/v1/audit?object=${encodeURIComponent(o)}&limit=200`)));
	const about = pages.flatMap((p) => p.audit).sort((a, b) => b.id - a.id);

	fill(box, el('h2', { text: 'Audit log' }), auditTable(about, 'task-audit-table'));
}

// ---- the log ---------------------------------------------------------------

function logControls(view, id, log) {
	return el('div', { class: 'log-controls' },
		el('span', { class: 'hint', text: `the last ${LOG_LINES} lines` }),
		el('button', { type: 'button', text: 'Reload the log',
			on: { click: () => logLoad(view, id, log).catch(view.error) } }));
}

async function logLoad(view, id, log) {
	try {
		const reply = await request('GET', `/v1/tasks/${id}/logs?tail=${LOG_LINES}`);
		const text = await reply.text();
		const skipped = Number(reply.headers.get('X-Gpupool-Log-Skipped') || 0);

		log.textContent = (skipped ? `[${skipped} earlier bytes not shown]\n` : '') + (text || '(empty)');
		log.classList.remove('log-none');
	} catch (e) {
		if (!(e instanceof ApiError) || e.status !== 404)
			throw e;
		log.textContent = e.message; // no log yet: the task has not run
		log.classList.add('log-none');
	}
}
