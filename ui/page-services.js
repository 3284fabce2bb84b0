// page-services.js — the Services page (#/services) and one service's
// page (#/services/TENANT/NAME): a service is a task kept as replicas
// that scale with their load (docs/operations.md, "Services"). The list
// (GET /v1/services: the caller's, the admin everyone's) with each
// service's replicas, share, utilization and last step; the form that
// creates one (POST /v1/services: the replicas' slice and command, and
// the autoscaler's policy); and on its page its replicas with their
// placements (cards as GET /v1/devices numbers them), its scaling steps
// with who took them and why (GET /v1/services/NAME: the autoscaler's,
// as "service:NAME", and those by hand), a step by hand (PATCH
// /v1/services/NAME) and its removal (DELETE, asked twice).
import { api, get, query } from './api.js';
import { add, badge, confirmButton, el, field, fill, mib, parseMib, pct, select, table, tenantCell, when }
	from './dom.js';
import { placed } from './page-tasks.js';

const REFRESH_MS = 3000;

// The tenant's name of a service (GET /v1/services gives its tenant_id).
function tenantOf(view, s) {
	const t = view.tenants.find((x) => x.id === s.tenant_id);

	return t ? t.name : view.me.name;
}

function servicePath(view, s, tenant) {
	return `/v1/services/${encodeURIComponent(s)}${view.admin ? query({ tenant }) : ''}`;
}

// "3 of 3 running", "1 of 2 running, 1 queued".
function replicasText(s) {
	const live = s.replica_tasks.filter((r) => !r.cancelling);
	const running = live.filter((r) => r.state === 'running').length;

	return `${running} of ${s.replicas} running${live.length > running ? `, ${live.length - running} queued` : ''}`;
}

function utilization(s) {
	return s.utilization === null ? 'not sampled yet' : pct(100 * s.utilization, 1);
}

// ---- the list and the form ------------------------------------------------------

export async function render(view) {
	if (view.params.name)
		return renderOne(view);
	const list = el('div', { id: 'service-list' });
	const again = () => refresh(view, list).catch(view.error);

	add(view.main, el('h1', { text: 'Services' }),
		el('p', { class: 'hint', text: 'A service keeps a task running as replicas: one that ends is replaced, ' +
			'and the autoscaler grows each replica\'s share, then adds replicas, while they are busy, and ' +
			'takes them back when they are idle. Every step is recorded with its reason.' }),
		list, el('h2', { text: 'Create a service' }), await createForm(view, again));
	await refresh(view, list);
	view.every(REFRESH_MS, again);
}

async function refresh(view, list) {
	const { services } = await get('/v1/services');

	if (!view.live || list.querySelector('.armed'))
		return;
	fill(list, table(['Name', 'Tenant', 'Replicas', 'Share', 'Utilization', 'Autoscale', 'Last step', ''],
		services.map((s) => {
			const tenant = tenantOf(view, s);

			return [el('a', { href: `#/services/${encodeURIComponent(tenant)}/${encodeURIComponent(s.name)}`,
				class: 'service-link', text: s.name, data: { service: s.name } }),
			tenantCell(tenant), replicasText(s), `${s.share_pct} %`, utilization(s),
			s.spec.autoscale ? `${s.spec.policy.min_replicas}–${s.spec.policy.max_replicas}` : 'fixed',
			el('span', { class: 'reason', text: s.crash_loop || s.last_decision || '-' }),
			removeButton(view, s.name, tenant, () => refresh(view, list))];
		}), 'no service yet'));
}

function removeButton(view, name, tenant, changed) {
	return confirmButton('Remove', { class: 'danger service-remove', data: { service: name } }, async () => {
		try {
			await api('DELETE', servicePath(view, name, tenant));
			view.notice(`service ${name} removed; its replicas are being cancelled`);
		} catch (e) {
			view.error(e);
		}
		await changed();
	});
}

async function createForm(view, created) {
	const { templates } = await get('/v1/templates');
	const input = (name, props = {}) => el('input', { name, id: `service-${name}`, ...props });
	const number = (name, props) => input(name, { type: 'number', ...props });
	const form = el('form', { class: 'submit', id: 'service-form' },
		el('div', { class: 'form-row' },
			field('Name', input('name', { required: 'required', placeholder: 'web' })),
			field('Template', select('template', [['', 'none: give the slice'],
				...templates.map((t) => [t.name, `${t.name} (${mib(t.mem_mib)} × ${t.compute_pct} %)`])], '')),
			field('Memory', input('mem', { placeholder: '2G', size: 8 }), 'per replica'),
			field('Compute %', number('compute', { min: 1, max: 100, placeholder: '30' })),
			field('Model', input('model', { placeholder: 'any', size: 10 })),
			field('Priority', number('priority', { min: 0, max: 9, value: 5 }))),
		el('div', { class: 'form-row' },
			field('Command', input('command', { class: 'wide', required: 'required',
				placeholder: './serve --port 0' }), 'each replica runs it, by /bin/sh -c')),
		el('div', { class: 'form-row' },
			field('Replicas', number('replicas', { min: 1, max: 64, value: 1 }), 'to start with'),
			field('Min', number('min_replicas', { min: 1, max: 64, value: 1 })),
			field('Max', number('max_replicas', { min: 1, max: 64, value: 4 })),
			field('Autoscale', input('autoscale', { type: 'checkbox', checked: true })),
			field('Out above %', number('out_pct', { min: 1, max: 200, value: 80 })),
			field('for (s)', number('out_window_s', { min: 1, value: 300 })),
			field('In below %', number('in_pct', { min: 0, max: 100, value: 20 })),
			field('for (s)', number('in_window_s', { min: 1, value: 1800 })),
			field('Cooldown (s)', number('cooldown_s', { min: 0, value: 300 })),
			field('Share up to %', number('share_max_pct', { min: 1, max: 100, placeholder: 'twice' }))),
		el('button', { type: 'submit', id: 'service-create', text: 'Create the service' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		create(view, form).then(created).catch(view.error);
	});
	return form;
}

function createBody(form) {
	const f = form.elements;
	const body = { name: f.name.value.trim(), command: f.command.value.trim(), priority: Number(f.priority.value),
		autoscale: f.autoscale.checked };

	if (f.model.value.trim())
		body.model = f.model.value.trim();
	if (f.template.value) {
		body.template = f.template.value;
	} else {
		body.mem_mib = parseMib(f.mem.value);
		body.compute_pct = Number(f.compute.value);
		if (Number.isNaN(body.mem_mib))
			throw new Error(`memory "${f.mem.value}": give a size such as 2G or 512M, or choose a template`);
	}
	for (const name of ['replicas', 'min_replicas', 'max_replicas', 'out_pct', 'out_window_s', 'in_pct',
		'in_window_s', 'cooldown_s', 'share_max_pct'])
		if (f[name].value !== '')
			body[name] = Number(f[name].value);
	return body;
}

async function create(view, form) {
	const s = await api('POST', '/v1/services', createBody(form));

	view.notice(`service ${s.name} created: ${s.replicas} replica(s) of ${s.share_pct} %`);
	location.hash = `#/services/${encodeURIComponent(view.me.name)}/${encodeURIComponent(s.name)}`;
}

// ---- one service -----------------------------------------------------------------

async function renderOne(view) {
	const { name, tenant } = view.params;
	const box = el('div', { id: 'service' });
	const steps = el('div', { id: 'service-steps' });

	add(view.main, el('h1', {}, `Service ${name}`), box,
		el('h2', { text: 'Scale by hand' }), scaleForm(view, name, tenant, () => again()),
		el('h2', { text: 'Scaling steps, newest first' }), steps);
	const again = () => refreshOne(view, name, tenant, box, steps);

	await again();
	view.every(REFRESH_MS, () => again().catch(view.error));
}

async function refreshOne(view, name, tenant, box, steps) {
	const [s, devices] = await Promise.all([get(servicePath(view, name, tenant)), get('/v1/devices')]);

	if (!view.live || box.querySelector('.armed'))
		return;
	const indexes = new Map((devices.devices || []).map((d) => [d.uuid, d.index]));
	const p = s.spec.policy;

	fill(box, el('div', { class: 'task-head' }, badge(s.spec.autoscale ? 'autoscaled' : 'fixed', 'info'),
		s.crash_loop ? badge('crash-looping', 'failed') : null,
		el('span', { class: 'reason', id: 'service-replicas', data: { replicas: s.replicas },
			text: `${s.replicas} replica(s) of ${s.share_pct} % wanted: ${replicasText(s)}; utilization ${utilization(s)}` }),
		removeButton(view, name, tenant, async () => { location.hash = '#/services'; })),
	el('dl', { class: 'facts' }, [
		['Tenant', tenantCell(tenant)], ['Command', el('code', { text: s.spec.task.command })],
		['Slice', `${mib(s.spec.task.mem_mib)} × ${s.share_pct} % (from ${p.share_min_pct} up to ${p.share_max_pct} %)`],
		['Template', s.spec.task.template || '-'], ['Model', s.spec.task.model || 'any'],
		['Replicas', `${p.min_replicas} to ${p.max_replicas}`],
		['Out', `above ${p.out_pct} % for ${p.out_window_s} s`], ['In', `below ${p.in_pct} % for ${p.in_window_s} s`],
		['Margin', `${p.margin_pct} %`], ['Cooldown', `${p.cooldown_s} s; steps of ${p.step_pct} %`],
		['Last step', s.last_decision || '-'], ['Created', when(new Date(s.created_ms).toISOString())],
		...(s.crash_loop ? [['Crashes', el('span', { class: 'reason', id: 'crash-loop', text: s.crash_loop })]] : []),
	].map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)])),
	el('h2', { text: 'Replicas' }),
	table(['Task', 'State', 'Share', 'Memory', 'Effective', 'Cards', 'Placement', 'Reason'],
		s.replica_tasks.map((r) => [el('a', { href: `#/tasks/${r.id}`, text: String(r.id), class: 'replica-link',
			data: { task: r.id } }), badge(r.cancelling ? 'cancelling' : r.state, r.state === 'queued' ? 'pending' : r.state),
		`${r.compute_pct} %`, mib(r.mem_mib), r.effective === null ? '-' : pct(100 * r.effective, 1),
		placed(r.placement, indexes), el('code', { text: r.placement || '-' }), el('span', { class: 'reason', text: r.reason })]),
		'no replica'));
	fill(steps, el('div', { id: 'step-table' }, table(['Time', 'Step', 'Replicas', 'Share', 'By', 'Why'],
		s.steps.map((x) => [when(new Date(x.ts_ms).toISOString()), badge(x.step, 'info'), String(x.replicas),
			`${x.share_pct} %`, x.who, el('span', { class: 'reason step-reason', text: x.reason })]),
		'no step yet: the autoscaler steps once the replicas have been busy (or idle) for its window')));
}

function scaleForm(view, name, tenant, changed) {
	const form = el('form', { class: 'change', id: 'scale-form' },
		field('Replicas', el('input', { name: 'replicas', type: 'number', min: 1, max: 64, value: 1 })),
		field('Reason', el('input', { name: 'reason', class: 'wide', maxlength: 200, placeholder: 'why, for the steps and the audit log' })),
		el('button', { type: 'submit', id: 'scale-button', text: 'Scale' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		const body = { replicas: Number(form.elements.replicas.value) };

		if (form.elements.reason.value.trim())
			body.reason = form.elements.reason.value.trim();
		api('PATCH', servicePath(view, name, tenant), body)
			.then((s) => view.notice(`service ${name}: ${s.replicas} replica(s) wanted`))
			.then(changed).catch(view.error);
	});
	return form;
}
