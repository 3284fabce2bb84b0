// page-advice.js — the Advice page (#/advice): right-sizing
// (docs/operations.md): per template and per task name, the slice a
// month's runs needed — the most memory their processes held plus a
// headroom, a high percentile of the share of a card they used — with
// the evidence and what it would have freed (GET /v1/advice; a tenant
// its own tasks). The admin's Apply button does what `gpupool advise
// --apply` does, by the same request (POST /v1/advice/apply): each
// template whose proposal differs gets a new version beside it, NAME.v2,
// NAME.v3, ...; nothing running changes, and new submissions choose.
import { api, get, query } from './api.js';
import { add, el, field, fill, mib, monthNow, num, pct, select, table, tenantCell } from './dom.js';

export async function render(view) {
	const data = el('div', { id: 'advice' });
	const result = el('div', { id: 'advice-applied' });
	const controls = el('form', { class: 'filters', id: 'advice-controls' },
		field('Month (UTC)', el('input', { type: 'month', name: 'month', value: monthNow(), required: 'required' })),
		view.admin ? field('Tenant', select('tenant', [['', 'every tenant'], ...view.tenants.map((t) => t.name)], '')) : null,
		field('Headroom %', el('input', { type: 'number', name: 'headroom', min: 0, max: 100, value: 15 }), 'over the peak'),
		field('Percentile', el('input', { type: 'number', name: 'percentile', min: 50, max: 100, value: 95 }),
			'of the share used'),
		el('button', { type: 'submit', text: 'Show' }),
		view.admin ? el('button', { type: 'button', id: 'advice-apply', text: 'Apply: add the new template versions',
			on: { click: () => apply(view, controls, result).then(again).catch(view.error) } }) : null);
	const again = () => refresh(view, controls, data).catch(view.error);

	controls.addEventListener('change', again);
	controls.addEventListener('submit', (e) => { e.preventDefault(); again(); });
	add(view.main, el('h1', { text: 'Advice' }),
		el('p', { class: 'hint', text: 'Memory: the most a run\'s processes held on a card, plus the headroom, rounded ' +
			'up to 256 MiB. Compute: the percentile of the share of a card the runs used over time, rounded up. ' +
			'Freed: what the proposal would have saved over the month (negative: the runs needed more than they held).' }),
		controls, view.admin ? null : el('p', { class: 'hint', id: 'advice-admin-only',
			text: 'Applying the advice adds templates: the admin does it.' }), result, data);
	await refresh(view, controls, data);
}

function params(controls) {
	const f = controls.elements;

	return { month: f.month.value, tenant: f.tenant ? f.tenant.value : '', headroom: f.headroom.value,
		percentile: f.percentile.value };
}

async function refresh(view, controls, data) {
	const advice = await get(`/v1/advice${query(params(controls))}`);

	if (!view.live)
		return;
	fill(data, el('p', { class: 'hint', text: `${advice.month}: memory = peak + ${advice.headroom_pct} %, compute = ` +
		`p${advice.percentile} of the share used.` }),
	table(['Kind', 'Name', 'Tenant', 'Runs', 'Hours', 'Memory held', 'peak', 'proposed', 'Compute held', 'median',
		`p${advice.percentile}`, 'most', 'proposed', 'Freed GPU-h', 'Freed GiB-h'],
	advice.advice.map((a) => [a.kind, el('strong', { text: a.name }), a.tenant ? tenantCell(a.tenant) : 'any',
		String(a.runs), num(a.hours, 4), mib(a.mem_held_mib), a.mem_peak_mib ? mib(a.mem_peak_mib) : '-',
		el('strong', { text: a.mem_proposed_mib ? mib(a.mem_proposed_mib) : 'as held' }),
		`${a.compute_held_pct} %`, pct(a.compute_median_pct, 1), pct(a.compute_percentile_pct, 1), pct(a.compute_max_pct, 1),
		el('strong', { text: `${a.compute_proposed_pct} %` }), num(a.freed_gpu_hours, 4), num(a.freed_mem_gib_hours, 4)]),
	'no run in this month to size (whole-device tasks are not sized)'));
	data.querySelectorAll('tbody tr').forEach((tr, i) => {
		const a = advice.advice[i];

		if (a)
			Object.assign(tr.dataset, { kind: a.kind, name: a.name });
	});
}

// POST /v1/advice/apply with the page's query: the versions it added, or
// found there already.
async function apply(view, controls, result) {
	const done = await api('POST', `/v1/advice/apply${query(params(controls))}`);
	const added = done.applied.filter((x) => x.result === 'added');

	view.notice(added.length ? `added ${added.map((x) => x.version).join(', ')}`
		: 'nothing to add: every template\'s proposal is its slice, or a version of it already');
	fill(result, el('h2', { text: 'Applied' }), table(['Template', 'Result', 'Version', 'Memory', 'Compute', 'Was'],
		done.applied.map((x) => [x.template, x.result === 'exists' ? 'already there' : x.result, x.version || '-',
			mib(x.mem_mib), `${x.compute_pct} %`, `${mib(x.was_mem_mib)} × ${x.was_compute_pct} %`]),
		'no template\'s runs to apply'));
}
