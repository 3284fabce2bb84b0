// charts.js — the console's charts (docs/console.md), shared by the
// pages that draw series over time (Utilization, a task's page): line
// charts with Chart.js (Debian's libjs-chart.js, served at lib/chart.js)
// when it is there, else a table of the same points; the banner that
// says what to install; the time labels; and the scale a set of charts
// shares, so that cards (or tenants) are drawn against ONE y-axis and
// can be compared at a glance. A series' points that were not measured
// are null: drawn as a gap, never as zero.
import { el, round, table } from './dom.js';

export function chartsAvailable() {
	return typeof window.Chart === 'function';
}

export function chartLibraryBanner() {
	if (chartsAvailable())
		return null;
	return el('div', { class: 'banner', id: 'chart-missing' },
		el('strong', { text: 'The charting library is missing. ' }),
		'The server serves Debian\'s Chart.js at /ui/lib/chart.js and did not find it: install the package ',
		el('code', { text: 'libjs-chart.js' }), ' (apt-get install libjs-chart.js; scripts/install-deps.sh demo does), ' +
		'or start the server with --ui-chart-js PATH. Every number is still in the tables below.');
}

// A time as an axis shows it for a span of spanMs: 15:04:10, 15:04, or
// Tue 15:00.
export function timeLabel(t, spanMs) {
	const d = new Date(t);
	const two = (n) => String(n).padStart(2, '0');
	const hm = `${two(d.getHours())}:${two(d.getMinutes())}`;

	if (spanMs <= 1800e3)
		return `${hm}:${two(d.getSeconds())}`;
	return spanMs > 86400e3 ? `${d.toLocaleDateString(undefined, { weekday: 'short' })} ${hm}` : hm;
}

// The top of a y-axis that holds every value of every series of a set of
// charts (at least `floor`), rounded up to a readable step: the one scale
// the set shares.
export function sharedMax(seriesList, floor = 0) {
	let top = floor;

	for (const s of seriesList)
		for (const v of s)
			if (v !== null && v !== undefined && v > top)
				top = v;
	if (top <= 0)
		return 1;
	const step = 10 ** Math.floor(Math.log10(top));

	return Math.ceil(top / (step / 2)) * (step / 2);
}

// One chart in its card: title, the x labels, the datasets ({label, data,
// colour, axis: 'y' or 'y2', dashed}), the y-axis's title and top (yMax:
// the set's shared scale; null lets Chart.js choose), and for a second
// axis its title. Without Chart.js a table of the rows where something
// was measured. charts collects the Chart objects (the page destroys
// them). data: the card's dataset attributes (for tests and people).
export function chartCard({ title, labels, datasets, yTitle, yMax = null, y2Title = null, charts, data = {},
	empty = 'nothing measured in this window', format = (v) => String(round(v, 1)) }) {
	const measured = datasets.reduce((n, d) => n + d.data.filter((v) => v !== null && v !== undefined).length, 0);
	const box = el('div', { class: 'chart-card', data: { ...data, points: measured, ymax: yMax === null ? '' : yMax } },
		el('h3', { text: title }));

	if (!chartsAvailable()) {
		const rows = labels.map((l, i) => [l, ...datasets.map((d) => d.data[i])])
			.filter((r) => r.slice(1).some((v) => v !== null && v !== undefined));

		box.append(table(['Time', ...datasets.map((d) => d.label)],
			rows.map((r) => [r[0], ...r.slice(1).map((v) => (v === null || v === undefined ? '-' : format(v)))]), empty));
		return box;
	}
	const canvas = el('canvas', { class: 'chart', 'aria-label': title });

	box.append(el('div', { class: 'chart-box' }, canvas));
	charts.push(new window.Chart(canvas, lineConfig(labels, datasets, yTitle, yMax, y2Title)));
	return box;
}

function lineConfig(labels, datasets, yTitle, yMax, y2Title) {
	const scales = {
		y: { beginAtZero: true, title: { display: true, text: yTitle } },
		x: { ticks: { maxTicksLimit: 6, autoSkip: true, maxRotation: 0 } },
	};

	if (yMax !== null)
		scales.y.max = yMax;
	if (y2Title)
		scales.y2 = { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false },
			title: { display: true, text: y2Title } };
	return {
		type: 'line',
		data: {
			labels,
			datasets: datasets.map((d) => ({
				label: d.label, data: d.data.map((v) => (v === null || v === undefined ? null : round(v, 2))),
				borderColor: d.colour, backgroundColor: d.colour, borderWidth: 2, pointRadius: d.points ? 2 : 0,
				spanGaps: false, tension: 0.2, yAxisID: d.axis || 'y', borderDash: d.dashed ? [5, 4] : [],
			})),
		},
		options: {
			animation: false, responsive: true, maintainAspectRatio: false,
			interaction: { mode: 'index', intersect: false },
			scales,
			plugins: { legend: { labels: { boxWidth: 12 } } },
		},
	};
}
