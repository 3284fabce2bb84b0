// page-templates.js — the Templates page: the slice templates (GET
// /v1/templates), each also as the YAML description `gpupool template
// show NAME -o yaml` prints (name, models as a list, memory_mib,
// compute_pct, isolation, runtime, time; src/cli/cmd-admin.c); for the admin, a form
// that adds one (POST /v1/templates) and a button that removes one
// (DELETE /v1/templates/NAME).
import { api, get } from './api.js';
import { add, confirmButton, el, field, fill, mib, parseMib, select, table } from './dom.js';

export async function render(view) {
	const list = el('div', { id: 'template-list' });
	const again = () => refresh(view, list).catch(view.error);

	add(view.main, el('h1', { text: 'Templates' }),
		el('p', { class: 'hint', text: 'A template is a named slice shape: submit with it (the Tasks page, ' +
			'or gpupool submit --template NAME) instead of giving memory and compute.' }), list,
		el('h2', { text: 'Add a template' }),
		view.admin ? addForm(view, again)
			: el('p', { class: 'hint', id: 'template-admin-only', text: 'Only the admin adds templates.' }));
	await refresh(view, list);
}

async function refresh(view, list) {
	const { templates } = await get('/v1/templates');

	if (!view.live)
		return;
	fill(list, table(['Name', 'Models', 'Memory', 'Compute', 'Isolation', 'YAML', ''],
		templates.map((t) => [el('strong', { text: t.name }), t.models || 'any', mib(t.mem_mib), `${t.compute_pct} %`,
			t.isolation, el('pre', { class: 'yaml', data: { template: t.name }, text: templateYaml(t) }),
			view.admin ? removeButton(view, t, () => refresh(view, list)) : '']),
		'no template yet'));
}

function removeButton(view, t, changed) {
	return confirmButton('Remove', { data: { template: t.name } }, async () => {
		try {
			await api('DELETE', `/v1/templates/${encodeURIComponent(t.name)}`);
			view.notice(`template "${t.name}" removed; tasks that took their shape from it keep it`);
		} catch (e) {
			view.error(e);
		}
		await changed();
	});
}

// ---- YAML as the CLI writes it --------------------------------------------

const SPECIAL_WORDS = new Set(['y', 'n', 'yes', 'no', 'true', 'false', 'on', 'off', 'null']);

// A string as libyaml writes it for gpupool (src/cli/yaml.c): plain when it
// starts with a letter, is no YAML special word and has nothing YAML would
// read otherwise; else single-quoted.
function yamlString(s) {
	const plain = /^[A-Za-z][A-Za-z0-9._/|+-]*( [A-Za-z0-9._/|+-]+)*$/.test(s) &&
		!SPECIAL_WORDS.has(s.toLowerCase());

	return plain ? s : `'${s.replaceAll('\'', '\'\'')}'`;
}

// "a100, t4" -> ["a100", "t4"], as the CLI splits a template's models.
function modelsList(models) {
	return models.split(',').map((m) => m.trim()).filter(Boolean);
}

// A time limit as --time writes it (src/base/parse.c's gp_time_limit_text):
// H:MM:SS, D-HH:MM:SS, or unlimited.
function timeText(seconds) {
	const two = (n) => String(n).padStart(2, '0');
	const d = Math.floor(seconds / 86400), h = Math.floor(seconds / 3600) % 24;
	const m = Math.floor(seconds / 60) % 60, s = seconds % 60;

	if (!seconds)
		return 'unlimited';
	return d ? `${d}-${two(h)}:${two(m)}:${two(s)}` : `${h}:${two(m)}:${two(s)}`;
}

export function templateYaml(t) {
	const models = modelsList(t.models || '');

	return [`name: ${yamlString(t.name)}`,
		models.length ? ['models:', ...models.map((m) => `- ${yamlString(m)}`)] : 'models: []',
		`memory_mib: ${t.mem_mib}`, `compute_pct: ${t.compute_pct}`, `isolation: ${yamlString(t.isolation)}`,
		`runtime: ${yamlString(t.runtime || '')}`, `time: ${yamlString(timeText(t.time_limit_s || 0))}`,
	].flat().join('\n') + '\n';
}

// ---- adding one -------------------------------------------------------------

function addForm(view, added) {
	const form = el('form', { class: 'submit', id: 'template-form' },
		el('div', { class: 'form-row' },
			field('Name', el('input', { name: 'name', required: 'required', placeholder: 't4-half' })),
			field('Memory', el('input', { name: 'mem', required: 'required', placeholder: '8G', size: 8 }), 'per device'),
			field('Compute %', el('input', { name: 'compute', type: 'number', min: 1, max: 100, required: 'required' })),
			field('Models', el('input', { name: 'models', placeholder: 'any' }), 'comma list: A100,T4'),
			field('Isolation', select('isolation', ['hard', 'shared'], 'hard'))),
		el('button', { type: 'submit', id: 'template-add', text: 'Add the template' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		templateAdd(view, form).then(added).catch(view.error);
	});
	return form;
}

async function templateAdd(view, form) {
	const f = form.elements;
	const body = { name: f.name.value.trim(), mem_mib: parseMib(f.mem.value), compute_pct: Number(f.compute.value),
		isolation: f.isolation.value };

	if (Number.isNaN(body.mem_mib))
		throw new Error(`memory "${f.mem.value}": give a size such as 8G or 512M`);
	if (f.models.value.trim())
		body.models = f.models.value.trim();
	const t = await api('POST', '/v1/templates', body);

	view.notice(`template "${t.name}" added`);
	form.reset();
}
