// page-pool.js — the Pool page: the node of the server's agent and each of
// its cards (GET /v1/nodes, /v1/devices, /v1/status), every card drawn as
// two bars, memory and compute, split into the slices of the running tasks
// (GET /v1/tasks?state=running: placement names the cards), coloured by
// tenant and labelled with their tasks' names and ids; hovering a slice
// names its task. A tenant sees its own slices;
// what other tenants' slices hold is one grey part, as the API counts it
// (allocated_*) without saying whose.
import { get, getAll } from './api.js';
import { add, badge, el, fill, mib, OTHERS_COLOUR, pct, seconds, splitBar, tenantColour, when } from './dom.js';

const REFRESH_MS = 3000;

export async function render(view) {
	const data = el('div', { id: 'pool' });

	add(view.main, el('h1', { text: 'Pool' }), data);
	await refresh(view, data);
	view.every(REFRESH_MS, () => refresh(view, data).catch(view.error));
}

async function refresh(view, data) {
	const [nodes, devices, running, status] = await Promise.all([
		get('/v1/nodes'), get('/v1/devices'), getAll('/v1/tasks?state=running', 'tasks'),
		get('/v1/status')]);

	if (!view.live)
		return;
	if (!devices.agent) {
		fill(data, el('p', { class: 'note', text: devices.note }));
		return;
	}
	const window = new Map(status.devices.map((d) => [d.uuid, d.utilization_window_pct]));

	fill(data, nodesDraw(nodes.nodes, status.queue), legendDraw(running, view.admin),
		el('div', { class: 'cards' }, devices.devices.map((d) => cardDraw(d, running, window.get(d.uuid), view.admin))));
}

function nodesDraw(nodes, queue) {
	return el('div', { class: 'tiles' }, nodes.map((n) => el('div', { class: 'tile node', data: { host: n.hostname } },
		el('div', { class: 'tile-title', text: n.hostname }),
		el('div', { text: `driver ${n.driver_version}, CUDA ${n.cuda_version || '-'}` }),
		el('div', { text: `${n.devices_usable} of ${n.devices} devices usable, ${mib(n.memory_total_mib)}` }),
		el('div', { text: `${n.tasks_running} tasks running; sampled ${when(n.sampled)}` }))),
	el('div', { class: 'tile' },
		el('div', { class: 'tile-title', text: 'Queue' }),
		el('div', { id: 'queue-length', text: `${queue.length} waiting` }),
		el('div', { text: `oldest ${seconds(queue.oldest_wait_s)}` })));
}

// The tenants whose slices are drawn, with their colours.
function legendDraw(running, admin) {
	const names = [...new Set(running.map((t) => t.tenant))].sort();

	return el('div', { class: 'legend' },
		names.map((n) => legendItem(tenantColour(n), n)),
		admin ? null : legendItem(OTHERS_COLOUR, 'other tenants\' tasks (not yours to see)'),
		legendItem('', 'free', 'swatch-free'));
}

function legendItem(colour, text, cls = '') {
	const swatch = el('span', { class: `swatch ${cls}`.trim() });

	if (colour)
		swatch.style.backgroundColor = colour;
	return el('span', { class: 'legend-item' }, swatch, text);
}

// The running tasks on the device whose UUID is uuid (a placement is
// "GPU-a,GPU-b", a MIG instance "GPU-a@4").
function tasksOn(uuid, running) {
	return running.filter((t) => t.placement.split(',').some((p) => p.split('@')[0] === uuid));
}

function cardDraw(d, running, windowPct, admin) {
	const mine = tasksOn(d.uuid, running);

	return el('section', { class: `card health-${d.health}`, data: { uuid: d.uuid, index: d.index } },
		el('div', { class: 'card-head' },
			el('span', { class: 'card-index', text: `#${d.index}` }),
			el('span', { class: 'card-model', text: d.name }),
			badge(d.vendor, 'vendor'), badge(d.health)),
		el('div', { class: 'card-facts' },
			el('span', { text: `driver ${d.driver_version}${d.cuda_version ? `, CUDA ${d.cuda_version}` : ''}` }),
			el('span', { text: `${d.pci_bus_id}` }),
			d.partition_set ? el('span', { text: `partitions: ${d.partition_set}` }) : null),
		d.compatible ? null : el('div', { class: 'incompatible', text: `incompatible: ${d.reason}` }),
		barRow('memory', memoryBar(d, mine),
			`${mib(d.allocated_memory_mib)} of ${mib(d.memory_total_mib)} allocated; in use (NVML) ${mib(d.memory_used_mib)}`),
		barRow('compute', computeBar(d, mine),
			`${pct(d.allocated_compute_pct)} allocated; utilization ${pct(d.utilization_pct)} now, ` +
			`${pct(windowPct, 1)} over the window`),
		el('div', { class: 'card-tasks', text: `${d.tasks_running} task(s) running` +
			(d.tasks.length ? `; ${admin ? 'tasks' : 'yours'}: ${d.tasks.join(', ')}` : '') }));
}

function barRow(label, bar, caption) {
	return el('div', { class: 'bar-row' },
		el('span', { class: 'bar-name', text: label }), bar,
		el('span', { class: 'bar-caption', text: caption }));
}

function slice(t, value, unitText) {
	return {
		value, colour: tenantColour(t.tenant), label: `#${t.id} ${t.name}`, data: { task: t.id, tenant: t.tenant },
		title: `task ${t.id} "${t.name}" of ${t.tenant}: ${unitText}` +
			`${t.whole ? ' (whole device)' : ''}, priority ${t.priority}, ${t.isolation}; ${t.command}`,
	};
}

// What other tenants' tasks hold of the device, beside the caller's own.
function others(d, heldByMine, value) {
	const count = d.tasks_running - d.tasks.length;

	return value > 0.5 && count > 0 ? {
		value, colour: OTHERS_COLOUR, class: 'seg-others',
		title: `${count} task(s) of other tenants hold this much (${heldByMine ? 'beside yours' : 'all of it'})`,
	} : { value: 0 };
}

function memoryBar(d, mine) {
	const segs = mine.map((t) => {
		const m = t.whole ? d.memory_total_mib : t.mem_mib;

		return slice(t, m, mib(m));
	});
	const held = segs.reduce((s, g) => s + g.value, 0);

	segs.push(others(d, held > 0, d.allocated_memory_mib - held));
	return splitBar(d.memory_total_mib, segs, 'bar-memory');
}

function computeBar(d, mine) {
	const segs = mine.map((t) => {
		const c = t.whole ? 100 : t.compute_pct;

		return slice(t, c, pct(c));
	});
	const held = segs.reduce((s, g) => s + g.value, 0);

	segs.push(others(d, held > 0, d.allocated_compute_pct - held));
	return splitBar(100, segs, 'bar-compute');
}
