// page-usage.js — the Utilization page: physical against effective
// utilization, per card and for the pool, over the last hour, day or week,
// from the usage records (GET /v1/usage; docs/api.md, "Metering"). A
// record says how long a task's slice held a card (compute_pct over its
// interval) and how much device time the task used (used_ms); cut into
// time buckets:
//   physical  = device time used / the bucket's time (all the card's tasks)
//   effective = device time used / device time allocated (compute_pct × time)
// The pool's are the same sums over every card. Drawn with Chart.js
// (Debian's libjs-chart.js, served at lib/chart.js) when it is there;
// without it, a banner says what to install, and the tables still show
// every number. The queue now, and each running task's effective
// utilization over the last sampling, come from GET /v1/status.
import { get, getAll, query } from './api.js';
import { add, el, field, fill, num, pct, round, seconds, select, table, tenantCell, when } from './dom.js';

const WINDOWS = {
	minutes: { ms: 600e3, buckets: 60, text: 'the last 10 minutes (10 s buckets)' },
	hour: { ms: 3600e3, buckets: 60, text: 'the last hour (1 min buckets)' },
	day: { ms: 86400e3, buckets: 96, text: 'the last day (15 min buckets)' },
	week: { ms: 7 * 86400e3, buckets: 84, text: 'the last week (2 h buckets)' },
};
const REFRESH_MS = 15000;
// How much earlier than the window a record may start and still reach
// into it (the longest a record lasts: --sample-ms is at most an hour).
const RECORD_SLACK_MS = 3600e3;

export async function render(view) {
	const data = el('div', { id: 'usage' });
	const controls = el('form', { class: 'filters', id: 'usage-controls' },
		field('Over', select('window', Object.entries(WINDOWS).map(([k, w]) => [k, w.text]), 'hour')),
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

function chartsAvailable() {
	return typeof window.Chart === 'function';
}

function chartLibraryBanner() {
	if (chartsAvailable())
		return null;
	return el('div', { class: 'banner', id: 'chart-missing' },
		el('strong', { text: 'The charting library is missing. ' }),
		'The server serves Debian\'s Chart.js at /ui/lib/chart.js and did not find it: install the package ',
		el('code', { text: 'libjs-chart.js' }), ' (apt-get install libjs-chart.js; scripts/install-deps.sh demo does), ' +
		'or start the server with --ui-chart-js PATH. Every number is still in the tables below.');
}

async function refresh(view, controls, data, charts) {
	const w = WINDOWS[controls.elements.window.value];
	const tenant = controls.elements.tenant ? controls.elements.tenant.value : '';
	const to = Date.now(), from = to - w.ms;
	const [devices, status, all] = await Promise.all([get('/v1/devices'), get('/v1/status'),
		getAll(`/v1/usage${query({ since_ms: from - RECORD_SLACK_MS, tenant })}`, 'usage', 100000)]);

	if (!view.live)
		return;
	const records = all.filter((r) => r.end_ms > from && r.start_ms < to);
	const cards = cardsOf(devices.devices || [], records);
	const series = bucketize(records, cards, from, to, w.buckets);

	charts.splice(0).forEach((c) => c.destroy());
	fill(data, queueTiles(status),
		el('p', { class: 'hint', text: `Over ${w.text}: ${view.admin ? 'all tenants\' tasks (or the one chosen)'
			: 'your tasks\' use of each card (other tenants\' is not yours to see)'}.` }),
		el('div', { class: 'charts' }, [{ key: 'pool', title: 'The pool' }, ...cards].map((c) =>
			seriesDraw(c, series.get(c.key), from, w, charts))),
		summaryTable(cards, series, status, w), runningTable(status.tasks));
}

// The cards to show: the agent's, and any others the records name.
function cardsOf(devices, records) {
	const cards = devices.map((d) => ({ key: d.uuid, title: `#${d.index} ${d.name}` }));
	const known = new Set(cards.map((c) => c.key));

	for (const r of records)
		if (!known.has(r.device)) {
			known.add(r.device);
			cards.push({ key: r.device, title: `${r.model} (${r.device.slice(0, 12)}, gone)` });
		}
	return cards;
}

// Per card and for the pool: device time used and allocated in each of n
// buckets of [from, to] (a record over several buckets is shared pro rata).
function bucketize(records, cards, from, to, n) {
	const width = (to - from) / n;
	const series = new Map([['pool', seriesNew(n, width * cards.length)]]);

	cards.forEach((c) => series.set(c.key, seriesNew(n, width)));
	for (const r of records) {
		const len = r.end_ms - r.start_ms;
		const first = Math.max(0, Math.floor((r.start_ms - from) / width));
		const last = Math.min(n - 1, Math.floor((r.end_ms - from) / width));

		for (let b = first; b <= last && len > 0; b++) {
			const start = from + b * width;
			const overlap = Math.min(start + width, r.end_ms) - Math.max(start, r.start_ms);

			if (overlap > 0)
				for (const s of [series.get(r.device), series.get('pool')]) {
					s.used[b] += (r.used_ms * overlap) / len;
					s.allocated[b] += (r.compute_pct / 100) * overlap;
				}
		}
	}
	return series;
}

function seriesNew(n, capacity) {
	return { used: new Array(n).fill(0), allocated: new Array(n).fill(0), capacity };
}

// Physical and effective utilization (percent) of bucket b; effective is
// null where nothing was allocated.
function ratios(s, b) {
	return {
		physical: (100 * s.used[b]) / s.capacity,
		effective: s.allocated[b] > 0 ? (100 * s.used[b]) / s.allocated[b] : null,
		allocated: (100 * s.allocated[b]) / s.capacity,
	};
}

function sum(a) {
	return a.reduce((x, y) => x + y, 0);
}

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
			el('div', { text: status.sample_ms ? `every ${status.sample_ms} ms` : '' })));
}

// Each card's and the pool's averages over the window, and NVML's now.
function summaryTable(cards, series, status, w) {
	const now = new Map(status.devices.map((d) => [d.uuid, d]));
	const rows = [{ key: 'pool', title: 'The pool' }, ...cards].map((c) => {
		const s = series.get(c.key), n = s.used.length;
		const used = sum(s.used), allocated = sum(s.allocated), d = now.get(c.key);

		return el('tr', { data: { card: c.key } }, [c.title, share((100 * used) / (s.capacity * n)),
			share(allocated > 0 ? (100 * used) / allocated : null), share((100 * allocated) / (s.capacity * n)),
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

// A bucket's start as the axis shows it: 15:04:10, 15:04, or Tue 15:00.
function labelOf(t, w) {
	const d = new Date(t);
	const two = (n) => String(n).padStart(2, '0');
	const hm = `${two(d.getHours())}:${two(d.getMinutes())}`;

	if (w.ms <= 600e3)
		return `${hm}:${two(d.getSeconds())}`;
	return w.ms > 86400e3 ? `${d.toLocaleDateString(undefined, { weekday: 'short' })} ${hm}` : hm;
}

// One card's (or the pool's) series: a line chart, or without Chart.js a
// table of the buckets that saw use.
function seriesDraw(card, s, from, w, charts) {
	const n = s.used.length, width = w.ms / n;
	const points = s.used.map((_, b) => ({ t: from + b * width, ...ratios(s, b) }));
	const box = el('div', { class: 'chart-card', data: { card: card.key } }, el('h3', { text: card.title }));

	if (!chartsAvailable()) {
		const used = points.filter((p) => p.allocated > 0);

		box.append(table(['From', 'Physical', 'Effective', 'Allocated'],
			used.map((p) => [labelOf(p.t, w), pct(p.physical, 1), pct(p.effective, 1), pct(p.allocated, 1)]),
			'no use in this window'));
		return box;
	}
	const canvas = el('canvas', { class: 'chart', 'aria-label': `utilization of ${card.title}` });

	box.append(el('div', { class: 'chart-box' }, canvas));
	charts.push(new window.Chart(canvas, chartConfig(points, w)));
	return box;
}

function chartConfig(points, w) {
	const line = (label, key, colour) => ({
		label, data: points.map((p) => (p[key] === null ? null : round(p[key], 2))), borderColor: colour,
		backgroundColor: colour, borderWidth: 2, pointRadius: 0, spanGaps: false, tension: 0.2,
	});

	return {
		type: 'line',
		data: {
			labels: points.map((p) => labelOf(p.t, w)),
			datasets: [line('physical %', 'physical', '#2563eb'), line('effective %', 'effective', '#f59e0b'),
				line('allocated %', 'allocated', '#9ca3af')],
		},
		options: {
			animation: false, responsive: true, maintainAspectRatio: false,
			interaction: { mode: 'index', intersect: false },
			scales: { y: { beginAtZero: true, suggestedMax: 100, title: { display: true, text: '%' } },
				x: { ticks: { maxTicksLimit: 5, autoSkip: true, maxRotation: 0 } } },
			plugins: { legend: { labels: { boxWidth: 12 } } },
		},
	};
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
