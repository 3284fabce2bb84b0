// page-tenants.js — the Tenants and quotas page: what each tenant's
// running tasks hold against its quota's guaranteed and borrowable parts,
// overall and per device model (GET /v1/tenants has the quotas and, as
// `in_use`, what the scheduler charges them with; it is null without the
// server's agent, when nothing runs). A tenant sees itself, and nothing
// of the administration below; the admin every tenant, and manages them:
// adds one with a quota or explicitly unlimited (POST /v1/tenants: its
// token is shown once), changes a quota (PATCH /v1/tenants/NAME), gives
// a tenant a new token (POST /v1/tenants/NAME/token: the old one stops
// working at once; the new one is shown once) and removes one (DELETE
// /v1/tenants/NAME), the last two asked twice.
import { api, get, getAll } from './api.js';
import { add, barMark, confirmButton, el, field, fill, mib, parseMib, pct, splitBar, tenantColour, when }
	from './dom.js';

const REFRESH_MS = 5000;

export async function render(view) {
	const data = el('div', { id: 'tenants' });
	const token = el('div', { id: 'token-shown' });
	const again = () => refresh(view, data).catch(view.error);

	add(view.main, el('h1', { text: 'Tenants and quotas' }),
		el('p', { class: 'hint', text: 'Each bar: what the running tasks hold, up to the guarantee (the mark), ' +
			'then borrowed (lighter) up to guaranteed + borrowable; past that in red. An unlimited tenant ' +
			'has no limit and nothing guaranteed: all it holds is borrowed, and taken back for a tenant ' +
			'within its guarantee.' }), token, data);
	if (view.admin)
		add(view.main, el('h2', { text: 'Add a tenant' }), addForm(view, async () => {
			await view.tenantsReload();
			await again();
		}));
	view.tokenBox = token;
	await refresh(view, data);
	view.every(REFRESH_MS, again);
}

async function refresh(view, data) {
	const [{ tenants }, running] = await Promise.all([get('/v1/tenants'),
		getAll('/v1/tasks?state=running', 'tasks')]);

	// Not while a button asks for its confirmation or a form is open.
	if (!view.live || data.querySelector('.armed, .quota-form:not([hidden])'))
		return;
	fill(data, el('div', { class: 'tenant-cards' }, tenants.map((t) =>
		tenantDraw(view, t, running.filter((r) => r.tenant === t.name), () => refresh(view, data)))));
}

// What a quota's in_use says, as {mem, compute} (nothing held: zeros).
function used(inUse) {
	return { mem: inUse ? inUse.mem_mib : 0, compute: inUse ? inUse.compute_pct : 0 };
}

function tenantDraw(view, t, tasks, changed) {
	const swatch = el('span', { class: 'swatch' });

	swatch.style.backgroundColor = tenantColour(t.name);
	return el('section', { class: 'tenant-card', data: { tenant: t.name, unlimited: Boolean(t.unlimited) } },
		el('div', { class: 'card-head' }, swatch, el('span', { class: 'card-model', text: t.name }),
			t.admin ? el('span', { class: 'badge badge-admin', text: 'admin' }) : null,
			t.unlimited ? el('span', { class: 'badge badge-info', text: 'unlimited' }) : null,
			el('span', { class: 'hint', text: `${tasks.length} running; user ${t.user || 'auto'}; priorities up to ` +
				`${t.priority_max}; since ${when(t.created)}` })),
		quotaRows('overall', t, used(t.in_use), t.name),
		t.model_quotas.map((q) => quotaRows(`on ${q.model}`, q, used(q.in_use), t.name, q.model)),
		view.admin ? adminRow(view, t, changed) : null);
}

// ---- the admin's -------------------------------------------------------------------

function adminRow(view, t, changed) {
	const form = quotaForm(view, t, changed);
	const buttons = el('div', { class: 'tenant-admin' },
		el('button', { type: 'button', class: 'ack quota-change', data: { tenant: t.name }, text: 'Change the quota',
			on: { click: () => { form.hidden = !form.hidden; } } }),
		confirmButton('New token', { class: 'danger token-new', data: { tenant: t.name } },
			() => tokenNew(view, t).then(changed).catch(view.error)),
		t.admin ? null : confirmButton('Remove', { class: 'danger tenant-remove', data: { tenant: t.name } },
			() => tenantRemove(view, t).then(changed).catch(view.error)));

	return el('div', {}, buttons, form);
}

// The quota's fields (sizes as 4G, 512M; percents over all cards).
function quotaFields(t = {}) {
	const size = (name, v) => el('input', { name, size: 8, value: v === undefined ? '' : `${v}M`, placeholder: '0' });
	const number = (name, v, props = {}) => el('input', { name, type: 'number', min: 0, value: v ?? '', placeholder: '0', ...props });

	return [
		field('Memory guaranteed', size('mem_guaranteed', t.mem_guaranteed_mib), 'over all its cards'),
		field('borrowable', size('mem_borrowable', t.mem_borrowable_mib)),
		field('Compute guaranteed %', number('compute_guaranteed', t.compute_guaranteed_pct), '200 = two cards'),
		field('borrowable %', number('compute_borrowable', t.compute_borrowable_pct)),
		field('Unlimited', el('input', { type: 'checkbox', name: 'unlimited', checked: Boolean(t.unlimited) }),
			'no quota, nothing guaranteed'),
		field('Priorities up to', number('priority_max', t.priority_max ?? 5, { max: 9 })),
	];
}

// The four quota fields of a form, in the API's units; all 0 when it is
// unlimited. Throws for a size that is none.
function quotaOf(form) {
	const f = form.elements;
	const size = (name) => {
		const v = f[name].value.trim() === '' ? 0 : parseMib(f[name].value);

		if (Number.isNaN(v))
			throw new Error(`"${f[name].value}": give a size such as 16G or 512M`);
		return v;
	};

	if (f.unlimited.checked)
		return { mem_guaranteed_mib: 0, mem_borrowable_mib: 0, compute_guaranteed_pct: 0, compute_borrowable_pct: 0 };
	return { mem_guaranteed_mib: size('mem_guaranteed'), mem_borrowable_mib: size('mem_borrowable'),
		compute_guaranteed_pct: Number(f.compute_guaranteed.value || 0),
		compute_borrowable_pct: Number(f.compute_borrowable.value || 0) };
}

function quotaForm(view, t, changed) {
	const form = el('form', { class: 'change quota-form', data: { tenant: t.name }, hidden: 'hidden' },
		el('div', { class: 'form-row' }, quotaFields(t)),
		el('button', { type: 'submit', class: 'quota-save', text: 'Save the quota' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		const body = { ...quotaOf(form), priority_max: Number(form.elements.priority_max.value) };

		api('PATCH', `/v1/tenants/${encodeURIComponent(t.name)}`, body).then((after) => {
			view.notice(`tenant ${t.name}: ${after.unlimited ? 'unlimited' : `${mib(after.mem_guaranteed_mib)} + ` +
				`${mib(after.mem_borrowable_mib)} of memory, ${pct(after.compute_guaranteed_pct)} + ` +
				`${pct(after.compute_borrowable_pct)} of compute`}; priorities up to ${after.priority_max}`);
			form.hidden = true;
		}).then(changed).catch(view.error);
	});
	return form;
}

// A token, shown this once, with what it is for.
function tokenShow(view, name, token, what) {
	fill(view.tokenBox, el('div', { class: 'banner token-box', data: { tenant: name } },
		el('strong', { text: `${what} — shown this once: ` }),
		el('code', { id: 'new-token', data: { tenant: name }, text: token }),
		el('div', { class: 'hint', text: `Give it to ${name} (gpupool --token, $GPUPOOL_TOKEN, or this console's ` +
			'sign-in); the server keeps only its hash.' }),
		el('button', { type: 'button', class: 'ack', text: 'Hide it',
			on: { click: () => fill(view.tokenBox) } })));
}

async function tokenNew(view, t) {
	const reply = await api('POST', `/v1/tenants/${encodeURIComponent(t.name)}/token`);

	tokenShow(view, t.name, reply.token, `The new token of ${t.name}; the old one no longer works`);
	view.notice(`tenant ${t.name} has a new token; the one before no longer works`);
	if (t.name === view.me.name)
		await view.resign(reply.token); // the admin's own: this console goes on with it
}

async function tenantRemove(view, t) {
	await api('DELETE', `/v1/tenants/${encodeURIComponent(t.name)}`);
	view.notice(`tenant ${t.name} removed: its token no longer works; its tasks, records and bills are kept`);
	await view.tenantsReload();
}

function addForm(view, added) {
	const form = el('form', { class: 'submit', id: 'tenant-form' },
		el('div', { class: 'form-row' },
			field('Name', el('input', { name: 'name', required: 'required', placeholder: 'vision' })),
			field('Unix user', el('input', { name: 'user', placeholder: 'automatic', size: 12 }), 'NAME, NAME:GROUP or UID:GID')),
		el('div', { class: 'form-row' }, quotaFields()),
		el('p', { class: 'hint', text: 'A tenant has a quota (a guarantee, and what it may borrow on top), or is ' +
			'explicitly unlimited.' }),
		el('button', { type: 'submit', id: 'tenant-add', text: 'Add the tenant' }));

	form.addEventListener('submit', (e) => {
		e.preventDefault();
		tenantAdd(view, form).then(added).catch(view.error);
	});
	return form;
}

async function tenantAdd(view, form) {
	const f = form.elements;
	const body = { name: f.name.value.trim(), priority_max: Number(f.priority_max.value) };
	const quota = quotaOf(form);

	if (f.unlimited.checked)
		body.unlimited = true;
	else
		Object.assign(body, quota);
	if (f.user.value.trim())
		body.user = f.user.value.trim();
	const t = await api('POST', '/v1/tenants', body);

	tokenShow(view, t.name, t.token, `The token of ${t.name}`);
	view.notice(`tenant ${t.name} added, ${t.unlimited ? 'unlimited' : 'with its quota'}`);
	form.reset();
}

// ---- the bars ----------------------------------------------------------------------

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
