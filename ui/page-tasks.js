// page-tasks.js — the Tasks page: the tasks running and queued (GET
// /v1/tasks, with GET /v1/queue for each queued task's position and the
// reason it waits), filtered by state and, for the admin, by tenant; a
// cancel button per task (POST /v1/tasks/ID/cancel, asked twice); and the
// submit form (POST /v1/tasks): a template, or memory, compute and
// priority given outright, and the command. A task's own page
// (page-task.js) has its live change and its log.
import { get, getAll, query, api } from './api.js';
import { add, badge, confirmButton, el, field, fill, mib, parseMib, pct, seconds, select, table, tenantCell, when } from './dom.js';

const REFRESH_MS = 3000;
const STATES = [
	['pending,running,preempted', 'running and queued'],
	['running', 'running'],
	['pending,preempted', 'queued'],
	['succeeded,failed,cancelled,lost', 'ended'],
	['', 'all'],
];
const QUEUED = new Set(['pending', 'preempted']);
const ROWS_MAX = 500;   // the newest tasks drawn
const QUEUE_HEAD = 2000; // queued tasks whose position is shown (one page)

export async function render(view) {
	const list = el('div', { id: 'task-list' });
	const filters = filtersForm(view, () => refresh(view, filters, list).catch(view.error));

	add(view.main, el('h1', { text: 'Tasks' }), filters, list,
		el('h2', { text: 'Submit a task' }), await submitForm(view, () => refresh(view, filters, list)));
	await refresh(view, filters, list);
	// Lists of ended tasks grow without end: those are read when asked.
	view.every(REFRESH_MS, () => /pending|running/.test(filters.elements.state.value) &&
		refresh(view, filters, list).catch(view.error));
}

function filtersForm(view, changed) {
	const tenants = view.admin ? [['', 'every tenant'], ...view.tenants.map((t) => [t.name, t.name])] : null;
	const form = el('form', { class: 'filters', id: 'task-filters' },
		field('State', select('state', STATES, STATES[0][0])),
		tenants ? field('Tenant', select('tenant', tenants, '')) : null,
		el('button', { type: 'submit', text: 'Refresh' }));

	form.addEventListener('change', changed);
	form.addEventListener('submit', (e) => { e.preventDefault(); changed(); });
	return form;
}

async function refresh(view, filters, list) {
	const state = filters.elements.state.value;
	const tenant = filters.elements.tenant ? filters.elements.tenant.value : '';
	const [tasks, queue, devices] = await Promise.all([
		getAll(`/v1/tasks${query({ state, tenant })}`, 'tasks'),
		get(`/v1/queue${query({ tenant, limit: QUEUE_HEAD })}`),
		get('/v1/devices')]);

	if (!view.live || list.querySelector('.armed'))
		return; // gone, or a cancel asks for its confirmation
	const positions = new Map(queue.queue.map((q) => [q.id, q]));
	const indexes = new Map((devices.devices || []).map((d) => [d.uuid, d.index]));
	const shown = tasks.slice(-ROWS_MAX).reverse();

	fill(list, el('p', { class: 'hint', text: `${tasks.length} task(s)` +
		`${shown.length < tasks.length ? `, the newest ${shown.length} shown` : ''}; ${queue.length} queued in the ` +
		'whole pool, numbered in the order the scheduler takes them.' }),
	table(['ID', 'Tenant', 'Name', 'State', 'Pri', 'Shape', 'Devices', 'Queue', 'Since', 'Reason', ''],
		shown.map((t) => taskRow(view, t, positions.get(t.id), indexes, () => refresh(view, filters, list))),
		'no task in this state'));
}

function taskRow(view, t, queued, indexes, changed) {
	const row = [
		el('a', { href: `#/tasks/${t.id}`, class: 'task-link', text: String(t.id), data: { task: t.id } }),
		tenantCell(t.tenant), t.name, badge(t.state), String(t.priority), shape(t), placed(t.placement, indexes),
		queued ? `#${queued.position}` : '',
		queued ? `waiting ${seconds(queued.waiting_s)}` : when(t.started || t.created),
		el('span', { class: 'reason', text: t.reason }),
		cancellable(t) ? cancelButton(view, t, changed) : '',
	];

	return row;
}

// "4 GiB × 30 %, 2 devices, A100", or "whole, T4".
export function shape(t) {
	const parts = [t.whole ? 'whole' : `${mib(t.mem_mib)} × ${pct(t.compute_pct)}`];

	if (t.devices > 1)
		parts.push(`${t.devices} devices`);
	if (t.exclusive)
		parts.push('exclusive');
	if (t.model)
		parts.push(t.model);
	return parts.join(', ');
}

// The devices of a placement as the indexes GET /v1/devices gives them.
export function placed(placement, indexes) {
	if (!placement)
		return '-';
	return placement.split(',').map((p) => {
		const [uuid, part] = p.split('@');
		const index = indexes.get(uuid);

		return `${index === undefined ? uuid.slice(0, 12) : `#${index}`}${part ? `@${part}` : ''}`;
	}).join(' ');
}

export function cancellable(t) {
	return QUEUED.has(t.state) || (t.state === 'running' && !/^cancelling/.test(t.reason));
}

// A cancel button that asks once more before it cancels.
export function cancelButton(view, t, changed) {
	return confirmButton('Cancel', { class: 'danger cancel', data: { task: t.id } }, async () => {
		try {
			const done = await api('POST', `/v1/tasks/${t.id}/cancel`);

			view.notice(`task ${t.id}: ${done.state}; ${done.reason}`);
		} catch (e) {
			view.error(e);
		}
		await changed();
	});
}

// ---- the submit form -----------------------------------------------------

async function submitForm(view, submitted) {
	const { templates } = await get('/v1/templates');
	const input = (name, props = {}) => el('input', { name, id: `submit-${name}`, ...props });
	const form = el('form', { class: 'submit', id: 'submit-form' },
		el('div', { class: 'form-row' },
			field('Name', input('name', { placeholder: 'the program\'s name' })),
			field('Template', select('template', [['', 'none: give the shape'],
				...templates.map((t) => [t.name, `${t.name} (${mib(t.mem_mib)} × ${t.compute_pct} %)`])], '')),
			field('Whole devices', input('whole', { type: 'checkbox' }))),
		el('div', { class: 'form-row' },
			field('Memory', input('mem', { placeholder: '4G', size: 8 }), 'per device: 4G, 512M'),
			field('Compute %', input('compute', { type: 'number', min: 1, max: 100, placeholder: '30' })),
			field('Devices', input('devices', { type: 'number', min: 1, max: 16, value: 1 })),
			field('Priority', input('priority', { type: 'number', min: 0, max: 9, value: 5 }), '0-9, 9 first; up to the bound the admin gave your tenant'),
			field('Model', input('model', { placeholder: 'any', size: 10 }), 'A100, T4, ascend, ...'),
			field('Isolation', select('isolation', [['', 'default'], 'hard', 'shared'], '')),
			field('Kind', select('kind', ['batch', 'training', 'inference', 'interactive'], 'batch'))),
		el('div', { class: 'form-row' },
			field('Command', input('command', { class: 'wide', required: 'required',
				placeholder: 'python3 train.py --epochs 10' }), 'run by /bin/sh -c'),
			field('Working directory', input('workdir', { placeholder: 'the agent\'s own', size: 18 }))),
		el('button', { type: 'submit', id: 'submit-button', text: 'Submit' }));

	form.addEventListener('change', () => shapeFieldsSet(form, templates));
	form.addEventListener('submit', (e) => {
		e.preventDefault();
		submit(view, form).then(submitted).catch(view.error);
	});
	return form;
}

// With a template, or whole devices, the shape is not given: its fields
// show the template's and cannot be typed in.
function shapeFieldsSet(form, templates) {
	const f = form.elements;
	const chosen = templates.find((t) => t.name === f.template.value);

	f.template.disabled = f.whole.checked;
	for (const name of ['mem', 'compute']) {
		f[name].disabled = Boolean(chosen) || f.whole.checked;
		if (chosen)
			f[name].value = name === 'mem' ? `${chosen.mem_mib}M` : chosen.compute_pct;
	}
}

function submitBody(form) {
	const f = form.elements;
	const body = { command: f.command.value.trim(), priority: Number(f.priority.value),
		devices: Number(f.devices.value), kind: f.kind.value };

	for (const name of ['name', 'model', 'isolation', 'workdir'])
		if (f[name].value.trim())
			body[name] = f[name].value.trim();
	if (f.whole.checked) {
		body.whole = true;
	} else if (f.template.value) {
		body.template = f.template.value;
	} else {
		body.mem_mib = parseMib(f.mem.value);
		body.compute_pct = Number(f.compute.value);
		if (Number.isNaN(body.mem_mib))
			throw new Error(`memory "${f.mem.value}": give a size such as 4G or 512M, or choose a template`);
	}
	return body;
}

async function submit(view, form) {
	const task = await api('POST', '/v1/tasks', submitBody(form));

	view.notice(`task ${task.id} submitted: ${task.state}, ${task.reason}`);
	form.elements.command.value = '';
}
