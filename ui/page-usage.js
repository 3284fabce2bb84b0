// page-usage.js — the Utilization page: what the pool's cards did over
// time, in four sets of charts, each set on ONE y-axis so that its cards
// (or tenants) compare at a glance:
//   - utilization, physical against effective, per card and for the
//     pool, from the usage records (GET /v1/usage; docs/api.md,
//     "Metering"). A record says how long a task's slice held a card
//     (compute_pct over its interval) and how much device time the task
//     used (used_ms); cut into time buckets:
//       physical  = device time used / the bucket's time (all the card's tasks)
//       effective = device time used / device time allocated (compute_pct × time)
//   - memory per card, used (NVML) and held by the slices, and per
//     tenant, held and used by its tasks' processes; the queue's length
//     and oldest wait — the meter's history (GET /v1/series).
// The window starts no earlier than the server's history (GET /v1/status:
// metered_since_ms), so a fresh server shows its own minutes and counts
// no time before it existed; the default window is the shortest that
// holds that history. Drawn with Chart.js (charts.js); without it every
// chart is a table. The queue now, and each running task's effective
// utilization over the last sampling, come from GET /v1/status.
import { get, getAll, query } from './api.js';
import { chartCard, chartLibraryBanner, sharedMax, timeLabel } from './charts.js';
import { add, el, field, fill, num, pct, seconds, select, table, tenantCell, tenantColour, when } from './dom.js';

const WINDOWS = {
	minutes: { ms: 600e3, width: 10e3, text: 'the last 10 minutes (10 s buckets)' },
	hour: { ms: 3600e3, width: 60e3, text: 'the last hour (1 min buckets)' },
	day: { ms: 86400e3, width: 900e3, text: 'the last day (15 min buckets)' },
	week: { ms: 7 * 86400e3, width: 7200e3, text: 'the last week (2 h buckets)' },
};
const REFRESH_MS = 15000;
// How much earlier than the window a record may start and still reach
// into it (the longest a record lasts: --sample-ms is at most an hour).
const RECORD_SLACK_MS = 3600e3;
const GIB = 1024;

export async function render(view) {
	const status = await get('/v1/status');
	const data = el('div', { id: 'usage' });
	const controls = el('form', { class: 'filters', id: 'usage-controls' },
		field('Over', select('window', Object.entries(WINDOWS).map(([k, w]) => [k, w.text]), fittedWindow(status))),
		view.admin ? field('Tenant', select('tenant', [['', 'every tenant'], ...view.tenants.map((t) => t.name)], '')) : null,
		el('button', { type: 'submit', text: 'Refresh' }));
	const charts = [];
	const again = () => refresh(view, controls, data, charts).catch(view.error);

	controls.addEventListener('change', again);
	controls.addEventListener('submit', (e) => { e.preventDefault(); again(); });
	add(view.main, el('h1', { text: 'Utilization' }), chartLibraryBanner(), controls, data);
	await refresh(view, controls, data, charts);
	view.every(REFRESH_MS, again);
	const leave = view.leave;
	view.leave = () => { leave(); charts.forEach((c) => c.destroy()); };
}

// Since when the server knows anything: its history, else its start.
function metered(status) {
	return status.metered_since_ms || status.started_ms || Date.now();
}

// The shortest window that holds the server's whole history.
function fittedWindow(status) {
	const age = Date.now() - metered(status);

	return Object.keys(WINDOWS).find((k) => WINDOWS[k].ms >= age) || 'week';
}

// The buckets of [from, to): width each, the last one cut at to.
function bucketsOf(from, to, width) {
	const list = [];

	for (let t = from; t < to; t += width)
		list.push({ t, len: Math.min(width, to - t) });
	return list.length ? list : [{ t: from, len: Math.max(1, to - from) }];
}

async function refresh(view, controls, data, charts) {
	const w = WINDOWS[controls.elements.window.value];
	const tenant = controls.elements.tenant ? controls.elements.tenant.value : '';
	const status = await get('/v1/status');
	const to = Date.now(), since = metered(status), from = Math.max(to - w.ms, since);
	const [devices, all, series] = await Promise.all([get('/v1/devices'),
		getAll(`/v1/usage${query({ since_ms: from - RECORD_SLACK_MS, tenant })}`, 'usage', 100000),
		get(`/v1/series${query({ since_ms: from, until_ms: to, step_ms: Math.round(w.width), tenant })}`)]);

	if (!view.live)
		return;
	const buckets = bucketsOf(from, to, w.width);
	const records = all.filter((r) => r.end_ms > from && r.start_ms < to);
	const cards = cardsOf(devices.devices || [], records);
	const usage = bucketize(records, cards, from, w.width, buckets);
	const span = to - from;

	charts.splice(0).forEach((c) => c.destroy());
	fill(data, queueTiles(status),
		el('p', { class: 'hint', id: 'usage-window', data: { from, to, since },
			text: `${from > to - w.ms ? `Since the server's history began (${when(new Date(since).toISOString())}), ` +
				`within ${w.text}` : `Over ${w.text}`}: ${view.admin ? 'all tenants\' tasks (or the one chosen)'
				: 'your tasks\' use of each card (other tenants\' is not yours to see)'}.` }),
		el('h2', { text: 'Utilization, physical and effective' }),
		utilizationCharts(cards, usage, buckets, span, charts),
		el('h2', { text: 'Memory per card: used (NVML) and held by the slices' }),
		memoryCharts(cards, series, buckets, from, w.width, span, charts),
		el('h2', { text: 'Memory per tenant: held by its tasks, used by their processes' }),
		tenantCharts(series, buckets, from, w.width, span, charts),
		el('h2', { text: 'The queue: its length and oldest wait' }),
		queueChart(series, buckets, from, w.width, span, charts),
		summaryTable(cards, usage, buckets, status, w), runningTable(status.tasks));
}

// The cards to show: the agent's, and any others the records name.
function cardsOf(devices, records) {
	const cards = devices.map((d) => ({ key: d.uuid, title: `#${d.index} ${d.name}`, total: d.memory_total_mib }));
	const known = new Set(cards.map((c) => c.key));

	for (const r of records)
		if (!known.has(r.device)) {
			known.add(r.device);
			cards.push({ key: r.device, title: `${r.model} (${r.device.slice(0, 12)}, gone)`, total: 0 });
		}
	return cards;
}

// ---- utilization, from the usage records ---------------------------------------

// Per card and for the pool: device time used and allocated in each
// bucket (a record over several buckets is shared pro rata).
function bucketize(records, cards, from, width, buckets) {
	const n = buckets.length;
	const series = new Map([['pool', seriesNew(n, cards.length)]]);

	cards.forEach((c) => series.set(c.key, seriesNew(n, 1)));
	for (const r of records) {
		const len = r.end_ms - r.start_ms;
		const first = Math.max(0, Math.floor((r.start_ms - from) / width));
		const last = Math.min(n - 1, Math.floor((r.end_ms - from) / width));

		for (let b = first; b <= last && len > 0; b++) {
			const start = buckets[b].t;
			const overlap = Math.min(start + buckets[b].len, r.end_ms) - Math.max(start, r.start_ms);

			if (overlap > 0)
				for (const s of [series.get(r.device), series.get('pool')]) {
					s.used[b] += (r.used_ms * overlap) / len;
					s.allocated[b] += (r.compute_pct / 100) * overlap;
				}
		}
	}
	return series;
}

function seriesNew(n, cards) {
	return { used: new Array(n).fill(0), allocated: new Array(n).fill(0), cards };
}

// Physical, effective and allocated utilization (percent) of bucket b;
// effective is null where nothing was allocated.
function ratios(s, b, len) {
	const capacity = s.cards * len;

	return {
		physical: (100 * s.used[b]) / capacity,
		effective: s.allocated[b] > 0 ? (100 * s.used[b]) / s.allocated[b] : null,
		allocated: (100 * s.allocated[b]) / capacity,
	};
}

function sum(a) {
	return a.reduce((x, y) => x + y, 0);
}

function utilizationCharts(cards, usage, buckets, span, charts) {
	const labels = buckets.map((b) => timeLabel(b.t, span));
	const all = [{ key: 'pool', title: 'The pool' }, ...cards].map((c) => {
		const s = usage.get(c.key);
		const points = buckets.map((b, i) => ratios(s, i, b.len));

		return { card: c, physical: points.map((p) => p.physical), effective: points.map((p) => p.effective),
			allocated: points.map((p) => p.allocated) };
	});
	const yMax = sharedMax(all.flatMap((a) => [a.physical, a.effective, a.allocated]), 100);

	return el('div', { class: 'charts', id: 'utilization-charts' }, all.map((a) => chartCard({
		title: a.card.title, labels, yTitle: '%', yMax, charts, data: { card: a.card.key, kind: 'utilization' },
		datasets: [{ label: 'physical %', data: a.physical, colour: '#2563eb' },
			{ label: 'effective %', data: a.effective, colour: '#f59e0b' },
			{ label: 'allocated %', data: a.allocated, colour: '#9ca3af' }],
	})));
}

// ---- memory and the queue, from the meter's history ------------------------------

// A series' points as values per bucket: pick(point) where the bucket has
// one, else fill (null: not measured).
function perBucket(points, buckets, from, width, pick, fill = null) {
	const values = buckets.map(() => fill);

	for (const p of points || []) {
		const b = Math.round((p.t - from) / width);

		if (b >= 0 && b < values.length)
			values[b] = pick(p);
	}
	return values;
}

function gib(v) {
	return v === null || v === undefined ? null : v / GIB;
}

function memoryCharts(cards, series, buckets, from, width, span, charts) {
	const byUuid = new Map(series.devices.map((d) => [d.uuid, d]));
	const labels = buckets.map((b) => timeLabel(b.t, span));
	const shown = cards.filter((c) => byUuid.has(c.key) || c.total);
	// One scale for every card: the largest card's memory.
	const yMax = sharedMax([shown.map((c) => gib(c.total || byUuid.get(c.key)?.memory_total_mib || 0))]);

	return el('div', { class: 'charts', id: 'memory-charts' }, shown.map((c) => {
		const d = byUuid.get(c.key);

		return chartCard({
			title: c.title, labels, yTitle: 'GiB', yMax, charts, format: (v) => `${v.toFixed(2)} GiB`,
			data: { card: c.key, kind: 'memory' },
			datasets: [
				{ label: 'used (NVML)', data: perBucket(d && d.points, buckets, from, width, (p) => gib(p.memory_used_mib)), colour: '#dc2626' },
				{ label: 'held by slices', data: perBucket(d && d.points, buckets, from, width, (p) => gib(p.allocated_memory_mib)), colour: '#2563eb' },
			],
		});
	}));
}

function tenantCharts(series, buckets, from, width, span, charts) {
	const labels = buckets.map((b) => timeLabel(b.t, span));
	// A bucket the meter sampled in, where a tenant has no point, saw it
	// hold nothing: 0, not a gap.
	const sampled = perBucket(series.queue, buckets, from, width, () => true, false);
	const lines = series.tenants.map((t) => {
		const held = perBucket(t.points, buckets, from, width, (p) => gib(p.allocated_memory_mib));
		const used = perBucket(t.points, buckets, from, width, (p) => gib(p.memory_used_mib));

		return { tenant: t.tenant, held: held.map((v, i) => (v === null && sampled[i] ? 0 : v)),
			used: used.map((v, i) => (v === null && sampled[i] ? 0 : v)) };
	});
	const yMax = sharedMax(lines.flatMap((l) => [l.held, l.used]));

	if (!lines.length)
		return el('p', { class: 'hint', id: 'tenant-charts', text: 'No tenant held memory in this window.' });
	return el('div', { class: 'charts', id: 'tenant-charts' }, lines.map((l) => chartCard({
		title: l.tenant, labels, yTitle: 'GiB', yMax, charts, format: (v) => `${v.toFixed(2)} GiB`,
		data: { tenant: l.tenant, kind: 'tenant-memory' },
		datasets: [{ label: 'held', data: l.held, colour: tenantColour(l.tenant) },
			{ label: 'used by its processes', data: l.used, colour: '#dc2626', dashed: true }],
	})));
}

function queueChart(series, buckets, from, width, span, charts) {
	const labels = buckets.map((b) => timeLabel(b.t, span));

	return el('div', { class: 'charts', id: 'queue-charts' }, chartCard({
		title: 'Queue', labels, yTitle: 'tasks waiting', y2Title: 'oldest wait (s)', charts, data: { kind: 'queue' },
		datasets: [{ label: 'length', data: perBucket(series.queue, buckets, from, width, (p) => p.length), colour: '#7c3aed' },
			{ label: 'oldest wait (s)', data: perBucket(series.queue, buckets, from, width, (p) => p.oldest_wait_s),
				colour: '#f97316', axis: 'y2' }],
	}));
}

// ---- tiles and tables ---------------------------------------------------------------

function queueTiles(status) {
	return el('div', { class: 'tiles' },
		el('div', { class: 'tile' }, el('div', { class: 'tile-title', text: 'Queue now' }),
			el('div', { class: 'tile-number', id: 'queue-now', text: String(status.queue.length) }),
			el('div', { text: 'tasks waiting' })),
		el('div', { class: 'tile' }, el('div', { class: 'tile-title', text: 'Oldest wait' }),
			el('div', { class: 'tile-number', id: 'oldest-wait', text: seconds(status.queue.oldest_wait_s) }),
			el('div', { text: 'since its submission' })),
		el('div', { class: 'tile' }, el('div', { class: 'tile-title', text: 'Sampled' }),
			el('div', { text: status.sampled ? when(status.sampled) : 'not yet' }),
			el('div', { text: status.sample_ms ? `every ${status.sample_ms} ms` : '' })),
		el('div', { class: 'tile' }, el('div', { class: 'tile-title', text: 'Server started' }),
			el('div', { id: 'server-started', text: when(status.started) }),
			el('div', { text: status.metered_since_ms ? `metered since ${when(new Date(status.metered_since_ms).toISOString())}`
				: 'nothing metered yet' })));
}

// Each card's and the pool's averages over the window, and NVML's now.
function summaryTable(cards, usage, buckets, status, w) {
	const now = new Map(status.devices.map((d) => [d.uuid, d]));
	const time = sum(buckets.map((b) => b.len));
	const rows = [{ key: 'pool', title: 'The pool' }, ...cards].map((c) => {
		const s = usage.get(c.key);
		const used = sum(s.used), allocated = sum(s.allocated), d = now.get(c.key);

		return el('tr', { data: { card: c.key } }, [c.title, share((100 * used) / (s.cards * time)),
			share(allocated > 0 ? (100 * used) / allocated : null), share((100 * allocated) / (s.cards * time)),
			num(used / 3.6e6, 6), d ? pct(d.utilization_pct) : '-', d ? pct(d.utilization_window_pct, 1) : '-',
		].map((v, i) => el('td', { class: i ? `num col-${i}` : '' }, v)));
	});

	return el('div', {}, el('h2', { text: `Averages over ${w.text}` }),
		el('table', { class: 'grid', id: 'usage-summary' },
			el('thead', {}, el('tr', {}, ['Card', 'Physical', 'Effective', 'Allocated', 'GPU-hours used',
				'NVML now', 'NVML over the alert window'].map((h) => el('th', { text: h })))),
			el('tbody', {}, rows)));
}

// A percentage with the digits a small one needs (0.04 %, 12.3 %).
function share(v) {
	return pct(v, v !== null && v > 0 && v < 1 ? 2 : 1);
}

// The running tasks' effective utilization over the last sampling.
function runningTable(tasks) {
	return el('div', {}, el('h2', { text: 'Running tasks, last sampling' }),
		table(['ID', 'Tenant', 'Name', 'Share', 'Effective', 'Memory used', 'Running'],
			tasks.map((t) => [el('a', { href: `#/tasks/${t.id}`, text: String(t.id) }), tenantCell(t.tenant), t.name,
				pct(t.compute_pct), t.effective_utilization === null ? 'not sampled yet' : pct(100 * t.effective_utilization, 1),
				`${t.memory_used_mib} MiB`, seconds(t.running_s)]),
			'no task running'));
}
