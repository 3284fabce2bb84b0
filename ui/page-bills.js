// page-bills.js — the Bills page: a month's bill per tenant and device
// model (GET /v1/bill): allocated against used GPU-hours, memory
// GiB-hours, the price and the cost, each tenant's subtotal and the total;
// and the CSV download, the very bytes `gpupool bill -o csv` prints (GET
// /v1/bill?format=csv, fetched with the token and saved from a Blob, since
// a plain link could not send the token). A tenant's bill is its own.
import { get, query, request } from './api.js';
import { add, el, field, fill, monthNow, num, pct, select, table, tenantCell } from './dom.js';

export async function render(view) {
	const data = el('div', { id: 'bill' });
	const controls = el('form', { class: 'filters', id: 'bill-controls' },
		field('Month (UTC)', el('input', { type: 'month', name: 'month', value: monthNow(), required: 'required' })),
		view.admin ? field('Tenant', select('tenant', [['', 'every tenant'], ...view.tenants.map((t) => t.name)], '')) : null,
		el('button', { type: 'submit', text: 'Show' }),
		el('button', { type: 'button', id: 'bill-csv', text: 'Download CSV',
			on: { click: () => csvDownload(view, controls).catch(view.error) } }));
	const again = () => refresh(view, controls, data).catch(view.error);

	controls.addEventListener('change', again);
	controls.addEventListener('submit', (e) => { e.preventDefault(); again(); });
	add(view.main, el('h1', { text: 'Bills' }), controls, data);
	await refresh(view, controls, data);
}

function params(controls) {
	return { month: controls.elements.month.value, tenant: controls.elements.tenant ? controls.elements.tenant.value : '' };
}

async function refresh(view, controls, data) {
	const bill = await get(`/v1/bill${query(params(controls))}`);

	if (!view.live)
		return;
	fill(data, el('p', { class: 'hint', text: `${bill.month}: ${bill.totals.records} usage records. ` +
		'Allocated GPU-hours: the slices\' compute shares over the time they were held; used: the device ' +
		'time the tasks used; cost: allocated GPU-hours × the model\'s price per hour (--price).' }),
	bill.note ? el('div', { class: 'banner', text: `${bill.note}: ${bill.unpriced_models.join(', ')}` }) : null,
	el('h2', { text: 'Per tenant and device model' }),
	table(['Tenant', 'Model', 'Vendor', 'Records', 'Allocated GPU-h', 'Used GPU-h', 'Used / allocated',
		'Memory GiB-h', 'Price / h', 'Cost'], bill.rows.map((r) => [tenantCell(r.tenant), r.model, r.vendor,
		String(r.records), ...figures(r), r.priced ? num(r.price_per_hour, 4) : 'no price', num(r.cost, 6)]),
	'no usage in this month'),
	el('h2', { text: 'Per tenant' }),
	table(['Tenant', 'Records', 'Allocated GPU-h', 'Used GPU-h', 'Used / allocated', 'Memory GiB-h', 'Cost'],
		[...bill.tenants.map((t) => [tenantCell(t.tenant), String(t.records), ...figures(t), num(t.cost, 6)]),
			[el('strong', { text: 'Total' }), String(bill.totals.records), ...figures(bill.totals),
				el('strong', { text: num(bill.totals.cost, 6) })]]));
}

function figures(r) {
	return [num(r.allocated_gpu_hours, 6), num(r.used_gpu_hours, 6),
		pct(r.allocated_gpu_hours > 0 ? (100 * r.used_gpu_hours) / r.allocated_gpu_hours : null, 1),
		num(r.allocated_mem_gib_hours, 6)];
}

// The file name the server gives the CSV (Content-Disposition), or one
// made of the month.
function fileName(reply, month) {
	const m = /filename="([^"]+)"/.exec(reply.headers.get('Content-Disposition') || '');

	return m ? m[1] : `gpupool-bill-${month}.csv`;
}

async function csvDownload(view, controls) {
	const p = params(controls);
	const reply = await request('GET', `/v1/bill${query({ ...p, format: 'csv' })}`);
	const blob = await reply.blob();
	const url = URL.createObjectURL(blob);
	const link = el('a', { href: url, download: fileName(reply, p.month), class: 'hidden-link' });

	document.body.append(link);
	link.click();
	link.remove();
	setTimeout(() => URL.revokeObjectURL(url), 10000);
	view.notice(`saved ${link.download} (${blob.size} bytes)`);
}
