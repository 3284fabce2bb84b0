// page-schedules.js — the Schedules page (#/schedules): time-of-day rules
// (docs/operations.md, "Schedules"), the admin's: every day at its time
// (UTC) a rule sets a tenant's compute_guaranteed_pct or
// compute_borrowable_pct, or a live task's compute_pct or priority. The
// rules with when each fires next (GET /v1/schedules), the form that adds
// one (POST /v1/schedules) and a button that removes one (DELETE
// /v1/schedules/NAME, asked twice). A tenant is told they are the
// admin's (the API refuses it the list).
import { api, get } from './api.js';
import { add, confirmButton, el, field, fill, select, table, when } from './dom.js';

// What a rule may set, and of what (the API checks; these are its words).
const FIELDS = [
	['tenant:compute_guaranteed_pct', 'a tenant\'s compute_guaranteed_pct'],
	['tenant:compute_borrowable_pct', 'a tenant\'s compute_borrowable_pct'],
	['task:compute_pct', 'a task\'s compute_pct'],
	['task:priority', 'a task\'s priority'],
];

export async function render(view) {
	add(view.main, el('h1', { text: 'Schedules' }),
		el('p', { class: 'hint', text: 'Every day at its time (UTC) a rule sets a tenant\'s quota or a task\'s share ' +
			'or priority, through the same checks as a change by hand; between two rules of the same thing ' +
			'the last one passed holds. Each change is in the audit log (schedule.apply, task.set).' }));
	if (!view.admin) {
		add(view.main, el('p', { class: 'hint', id: 'schedules-admin-only',
			text: 'Only the admin reads and changes the schedules.' }));
		return;
	}
	const list = el('div', { id: 'schedule-list' });

	add(view.main, list, el('h2', { text: 'Add a rule' }), addForm(view, () => refresh(view, list)));
	await refresh(view, list);
}

function target(rule) {
	return rule.tenant ? `tenant ${rule.tenant}` : `task ${rule.task}`;
}

async function refresh(view, list) {
	const { schedules } = await get('/v1/schedules');

	if (!view.live || list.querySelector('.armed'))
		return;
	fill(list, table(['Name', 'At (UTC)', 'Of', 'Sets', 'To', 'Next', ''],
		schedules.map((r) => [el('strong', { text: r.name }), r.at, target(r), r.field, String(r.value),
			when(new Date(r.next_ms).toISOString()), removeButton(view, r, () => refresh(view, list))]),
		'no rule yet'));
}

function removeButton(view, r, changed) {
	return confirmButton('Remove', { data: { schedule: r.name } }, async () => {
		try {
			await api('DELETE', `/v1/schedules/${encodeURIComponent(r.name)}`);
			view.notice(`schedule ${r.name} removed`);
		} catch (e) {
			view.error(e);
		}
		await changed();
	});
}

function addForm(view, added) {
	const tenants = view.tenants.map((t) => t.name);
	const form = el('form', { class: 'submit', id: 'schedule-form' },
		el('div', { class: 'form-row' },
			field('Name', el('input', { name: 'name', required: 'required', placeholder: 'night' })),
			field('At (UTC)', el('input', { name: 'at', required: 'required', placeholder: '20:00', size: 8 }),
				'HH:MM or HH:MM:SS'),
			field('Sets', select('field', FIELDS, FIELDS[0][0])),
			field('Tenant', select('tenant', tenants, tenants[0]), 'for a tenant\'s field'),
			field('Task', el('input', { name: 'task', type: 'number', min: 1, placeholder: 'id' }), 'for a task\'s field'),
			field('Value', el('input', { name: 'value', type: 'number', min: 0, required: 'required' }),
				'percent (a tenant\'s: over all its cards), or 0-9')),
		el('button', { type: 'submit', id: 'schedule-add', text: 'Add the rule' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		scheduleAdd(view, form).then(added).catch(view.error);
	});
	return form;
}

async function scheduleAdd(view, form) {
	const f = form.elements;
	const [of, name] = f.field.value.split(':');
	const body = { name: f.name.value.trim(), at: f.at.value.trim(), field: name, value: Number(f.value.value) };

	if (of === 'tenant')
		body.tenant = f.tenant.value;
	else
		body.task = Number(f.task.value);
	await api('POST', '/v1/schedules', body);
	view.notice(`schedule ${body.name} added: at ${body.at} UTC, ${name} of ${of === 'tenant' ? body.tenant : `task ${body.task}`} ` +
		`to ${body.value}`);
	form.reset();
}
