// page-whatif.js — the What-if page (#/whatif): the pool's own history
// replayed (`gpupool sim --history`, docs/operations.md): a period's
// tasks as they ran, on the pool's cards under the server's policy, and
// under a variant — another policy, other cards, other slices per
// template or task name, the slices the advice proposes — side by side
// with their ratios (POST /v1/sim/history: the server replays them with
// the module the command uses, so the figures are the command's). A
// tenant replays its own tasks. The runs made on this page stay listed,
// newest first, while the tab is open, to compare variants.
import { api } from './api.js';
import { add, el, field, fill, monthNow, num, table } from './dom.js';

const runs = []; // {n, at, asked, result}, newest first: this tab's

export async function render(view) {
	const results = el('div', { id: 'whatif-runs' });
	const form = formOf(view, results);

	add(view.main, el('h1', { text: 'What-if: the pool\'s history replayed' }),
		el('p', { class: 'hint', text: 'Each task arrives when it was submitted, asks for its slice and runs as long ' +
			'as its usage records say; a smaller share than it used stretches its run, less memory than its ' +
			'peak would have failed it. Not modelled: quotas and preemption, host limits, partitions, restarts, ' +
			'autoscaling (a service\'s replicas replay as they ran).' }),
		form, results);
	runsDraw(results);
}

function textarea(name, placeholder) {
	return el('textarea', { name, rows: 2, cols: 28, placeholder });
}

function formOf(view, results) {
	const form = el('form', { class: 'submit', id: 'whatif-form' },
		el('div', { class: 'form-row' },
			field('Month (UTC)', el('input', { type: 'month', name: 'month', value: monthNow() }), 'the tasks submitted in it'),
			field('or since', el('input', { name: 'since', placeholder: 'YYYY-MM-DD[THH:MM]', size: 18 }), 'UTC; instead of the month'),
			field('Recorded policy', el('input', { name: 'recorded_policy', placeholder: 'default', size: 12 }),
				'the server\'s --policy'),
			field('Policy', el('input', { name: 'policy', placeholder: 'as recorded', size: 12 }),
				'the variant\'s (gpupool policies)')),
		el('div', { class: 'form-row' },
			field('Cards', el('input', { name: 'cards', placeholder: 'T4=2,A100=1', size: 16 }), 'instead of the pool\'s'),
			field('Add cards', el('input', { name: 'add_cards', placeholder: 'T4=1 (or -1)', size: 16 })),
			field('Card memory', el('input', { name: 'card_mem', placeholder: 'H100=80G', size: 16 }),
				'of a model the pool lacks; space-separated'),
			field('Advised slices', el('input', { type: 'checkbox', name: 'advised' }), 'the Advice page\'s')),
		el('div', { class: 'form-row' },
			field('Template slices', textarea('template', 'half=1280,25'), 'NAME=MEM,PCT, one a line'),
			field('Task slices', textarea('task', 'infer@vision=2G,30'), 'NAME[@TENANT]=MEM,PCT, one a line'),
			field('Prices', textarea('price', 'T4=0.35'), 'MODEL=PRICE per GPU-hour; none: the server\'s')),
		el('button', { type: 'submit', id: 'whatif-run', text: 'Replay' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		replay(view, form, results).catch(view.error);
	});
	return form;
}

// The non-empty lines (or, for one line, the space-separated words).
function list(text, words = false) {
	return text.split(words ? /\s+/ : /\n/).map((x) => x.trim()).filter(Boolean);
}

function bodyOf(form) {
	const f = form.elements;
	const body = {};

	if (f.since.value.trim())
		body.since = f.since.value.trim();
	else if (f.month.value)
		body.month = f.month.value;
	for (const name of ['recorded_policy', 'policy', 'cards', 'add_cards'])
		if (f[name].value.trim())
			body[name] = f[name].value.trim();
	if (list(f.card_mem.value, true).length)
		body.card_mem = list(f.card_mem.value, true);
	for (const name of ['template', 'task', 'price'])
		if (list(f[name].value).length)
			body[name] = list(f[name].value);
	if (f.advised.checked)
		body.advised = true;
	return body;
}

async function replay(view, form, results) {
	const asked = bodyOf(form);
	const button = form.querySelector('#whatif-run');

	button.disabled = true;
	try {
		const result = await api('POST', '/v1/sim/history', asked);

		runs.unshift({ n: runs.length + 1, at: new Date(), asked, result });
		view.notice(`replayed ${result.tasks} task(s)${result.variant ? ' as recorded and under the variant' : ''}`);
	} finally {
		button.disabled = false;
	}
	if (view.live)
		runsDraw(results);
}

function runsDraw(results) {
	fill(results, runs.length ? runs.map(runDraw)
		: el('p', { class: 'hint', text: 'No replay yet: give a variant (or none, for the recorded set-up alone) and Replay.' }));
}

// "policy fgd; cards T4=1; advised slices"
function askedText(asked) {
	const parts = Object.entries(asked).filter(([k]) => k !== 'month' && k !== 'since')
		.map(([k, v]) => `${k.replace('_', ' ')} ${Array.isArray(v) ? v.join(' ') : v === true ? '' : v}`.trim());

	return parts.length ? parts.join('; ') : 'no variant: the recorded set-up alone';
}

// "2 x Tesla T4, 1 x NVIDIA A100 80GB"
function poolText(run) {
	return run.models.filter((m) => m.cards).map((m) => `${m.cards} × ${m.model}`).join(', ');
}

function slicesText(run) {
	return run.overrides.length ? run.overrides.map((o) => `${o.kind} ${o.name}${o.tenant ? `@${o.tenant}` : ''}=` +
		`${o.mem_mib ? `${o.mem_mib}M` : ''},${o.compute_pct || ''}`).join('; ') : 'as recorded';
}

const FIGURES = [
	['cards', 'cards', 0], ['makespan (s)', 'makespan_s', 1], ['allocated compute %', 'alloc_pct', 1],
	['physical utilization %', 'util_pct', 1], ['queue wait p50 (s)', 'wait_p50_s', 1],
	['queue wait p99 (s)', 'wait_p99_s', 1], ['queue wait max (s)', 'wait_max_s', 1], ['tasks placed', 'placed', 0],
	['tasks never placed', 'never_placed', 0], ['would fail (memory)', 'would_fail', 0],
	['stretched (compute)', 'stretched', 0], ['GPU-hours', 'gpu_hours', 4], ['cost', 'cost', 4],
];

function ratioText(variant, recorded) {
	return recorded ? num(variant / recorded, 2) : '-';
}

function runDraw(x) {
	const r = x.result, v = r.variant;
	const models = [...new Set([...r.recorded.models, ...(v ? v.models : [])].map((m) => m.model))];
	const hours = (run, model) => (run.models.find((m) => m.model === model) || { gpu_hours: 0 }).gpu_hours;
	const rows = [...FIGURES.map(([label, key, digits]) => ({ label, key, a: r.recorded[key], b: v ? v[key] : null, digits })),
		...models.map((m) => ({ label: `GPU-hours ${m}`, key: `model:${m}`, a: hours(r.recorded, m), b: v ? hours(v, m) : null,
			digits: 4 }))];

	return el('section', { class: 'chart-card whatif-run', data: { run: x.n } },
		el('h3', { text: `Run ${x.n}, ${x.at.toLocaleTimeString()}: ${r.month ? `tasks of ${r.month}`
			: `tasks since ${new Date(r.from_ms).toISOString().slice(0, 16)} UTC`}, ${askedText(x.asked)}` }),
		el('p', { class: 'hint', text: `${r.tasks} task(s) replayed${r.never_started ? `, ${r.never_started} never started (left out)` : ''}. ` +
			`Recorded: ${poolText(r.recorded)}, policy ${r.recorded.policy}, slices as recorded.` +
			(v ? ` Variant: ${poolText(v) || 'no cards'}, policy ${v.policy}, slices ${slicesText(v)}.` : ` ${r.note}.`) }),
		el('table', { class: 'grid whatif-table' },
			el('thead', {}, el('tr', {}, ['', 'Recorded', v ? 'Variant' : '', v ? 'Ratio' : ''].map((h) => el('th', { text: h })))),
			el('tbody', {}, rows.map((row) => el('tr', { data: { figure: row.key } },
				el('td', { text: row.label }), el('td', { class: 'num recorded', text: num(row.a, row.digits) }),
				el('td', { class: 'num variant', text: v ? num(row.b, row.digits) : '' }),
				el('td', { class: 'num ratio', text: v ? ratioText(row.b, row.a) : '' }))))));
}
