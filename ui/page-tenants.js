// page-tenants.js — the Tenants and quotas page: what each tenant's
// running tasks hold against its quota's guaranteed and borrowable parts,
// overall and per device model (GET /v1/tenants has the quotas and, as
// `in_use`, what the scheduler charges them with; it is null without the
// server's agent, when nothing runs). A tenant sees itself; the admin
// every tenant.
import { get, getAll } from './api.js';
import { add, barMark, el, fill, mib, pct, splitBar, tenantColour, when } from './dom.js';

const REFRESH_MS = 5000;

export async function render(view) {
	const data = el('div', { id: 'tenants' });

	add(view.main, el('h1', { text: 'Tenants and quotas' }),
		el('p', { class: 'hint', text: 'Each bar: what the running tasks hold, up to the guarantee (the mark), ' +
			'then borrowed (lighter) up to guaranteed + borrowable; past that in red. An unlimited tenant ' +
			'has no limit and nothing guaranteed: all it holds is borrowed, and taken back for a tenant ' +
			'within its guarantee.' }), data);
	await refresh(view, data);
	view.every(REFRESH_MS, () => refresh(view, data).catch(view.error));
}

async function refresh(view, data) {
	const [{ tenants }, running] = await Promise.all([get('/v1/tenants'),
		getAll('/v1/tasks?state=running', 'tasks')]);

	if (!view.live)
		return;
	fill(data, el('div', { class: 'tenant-cards' }, tenants.map((t) =>
		tenantDraw(t, running.filter((r) => r.tenant === t.name)))));
}

// What a quota's in_use says, as {mem, compute} (nothing held: zeros).
function used(inUse) {
	return { mem: inUse ? inUse.mem_mib : 0, compute: inUse ? inUse.compute_pct : 0 };
}

function tenantDraw(t, tasks) {
	const swatch = el('span', { class: 'swatch' });

	swatch.style.backgroundColor = tenantColour(t.name);
	return el('section', { class: 'tenant-card', data: { tenant: t.name } },
		el('div', { class: 'card-head' }, swatch, el('span', { class: 'card-model', text: t.name }),
			t.admin ? el('span', { class: 'badge badge-admin', text: 'admin' }) : null,
			el('span', { class: 'hint', text: `${tasks.length} running; user ${t.user || 'auto'}; since ${when(t.created)}` })),
		quotaRows('overall', t, used(t.in_use), t.name),
		t.model_quotas.map((q) => quotaRows(`on ${q.model}`, q, used(q.in_use), t.name, q.model)));
}

// The memory and compute rows of one quota (overall, or one model's).
function quotaRows(title, q, use, tenant, model = '') {
	return el('div', { class: 'quota', data: { model } },
		el('h3', { text: title }),
		quotaRow('memory', use.mem, q.mem_guaranteed_mib, q.mem_borrowable_mib, mib, tenant),
		quotaRow('compute', use.compute, q.compute_guaranteed_pct, q.compute_borrowable_pct, pct, tenant));
}

function quotaRow(label, used, guaranteed, borrowable, unit, tenant) {
	const limited = guaranteed + borrowable > 0;
	const inGuarantee = limited ? Math.min(used, guaranteed) : 0;
	const borrowed = limited ? Math.max(0, Math.min(used - guaranteed, borrowable)) : used;
	const over = limited ? Math.max(0, used - guaranteed - borrowable) : 0;
	const colour = tenantColour(tenant);
	const bar = splitBar(limited ? guaranteed + borrowable : Math.max(used, 1), [
		{ value: inGuarantee, colour, title: `${unit(inGuarantee)} within the guarantee` },
		{ value: borrowed, colour, class: 'seg-borrowed', title: `${unit(borrowed)} borrowed` },
		{ value: over, class: 'seg-over', title: `${unit(over)} past the quota` },
	], `bar-quota bar-${label}`);

	if (limited)
		barMark(bar, guaranteed, `guaranteed: ${unit(guaranteed)}`);
	return el('div', { class: 'bar-row', data: { part: label, used, guaranteed, borrowable } },
		el('span', { class: 'bar-name', text: label }), bar,
		el('span', { class: 'bar-caption quota-caption', text: limited
			? `${unit(used)} used of ${unit(guaranteed)} guaranteed + ${unit(borrowable)} borrowable` +
				(borrowed > 0 ? ` (borrowing ${unit(borrowed)})` : '')
			: `${unit(used)} used, all borrowed; unlimited: no limit, nothing guaranteed` }));
}
