// dom.js — what every page of the console (docs/console.md) builds with:
// elements made from data (text is always set as text, never parsed as
// HTML, since names, commands, reasons and logs come from users), the
// units the API speaks (MiB, percent, RFC 3339 times) written for people,
// a colour per tenant, and the split bars that draw a card's slices or a
// quota's use. Styles are classes of app.css; only widths and colours are
// set from here (element.style, which the console's CSP allows).

// el(tag, props, ...children): a new element. props: class, text, title,
// href, type, value, name, placeholder, min, max, step, for, id, disabled,
// checked, selected, data (an object for dataset), on (an object of event
// handlers). children: elements, strings, or null (skipped), or arrays.
export function el(tag, props = {}, ...children) {
	const node = document.createElement(tag);

	for (const [key, value] of Object.entries(props || {}))
		propSet(node, key, value);
	append(node, children);
	return node;
}

function propSet(node, key, value) {
	if (value === undefined || value === null || value === false)
		return;
	if (key === 'class')
		node.className = value;
	else if (key === 'text')
		node.textContent = String(value);
	else if (key === 'data')
		Object.assign(node.dataset, value);
	else if (key === 'on')
		for (const [event, handler] of Object.entries(value))
			node.addEventListener(event, handler);
	else if (key === 'value') {
		if ('defaultValue' in node)
			node.defaultValue = String(value); // what a form's reset() comes back to
		node.value = String(value);
	}
	else if (key === 'checked' || key === 'selected' || key === 'disabled')
		node[key] = true;
	else
		node.setAttribute(key, String(value));
}

function append(node, children) {
	for (const child of children.flat(Infinity)) {
		if (child === null || child === undefined || child === false)
			continue;
		node.append(child instanceof Node ? child : document.createTextNode(String(child)));
	}
}

// Appends children (as el takes them: null is skipped) to node.
export function add(node, ...children) {
	append(node, children);
	return node;
}

// Replaces what node holds with children.
export function fill(node, ...children) {
	node.replaceChildren();
	append(node, children);
	return node;
}

// A table: head is a list of column titles, rows a list of lists of cells
// (strings or elements); empty says what an empty table means.
export function table(head, rows, empty = 'none') {
	const body = rows.length
		? rows.map((cells) => el('tr', {}, cells.map((c) => el('td', {}, c))))
		: [el('tr', {}, el('td', { class: 'empty', colspan: head.length, text: empty }))];

	return el('table', { class: 'grid' },
		el('thead', {}, el('tr', {}, head.map((h) => el('th', { text: h })))),
		el('tbody', {}, body));
}

// A labelled form field: label text, the input, and an optional hint.
export function field(label, input, hint) {
	return el('label', { class: 'field' },
		el('span', { class: 'field-label', text: label }), input,
		hint ? el('span', { class: 'hint', text: hint }) : null);
}

// A <select> of options: [value, text] pairs (or plain strings).
export function select(name, options, chosen) {
	return el('select', { name },
		options.map((o) => {
			const [value, text] = Array.isArray(o) ? o : [o, o];

			return el('option', { value, text, selected: value === chosen });
		}));
}

// ---- units ----------------------------------------------------------------

// 4096 -> "4 GiB", 1536 -> "1.5 GiB", 512 -> "512 MiB".
export function mib(n) {
	if (n === null || n === undefined)
		return '-';
	if (Math.abs(n) >= 1024)
		return `${round(n / 1024, 1)} GiB`;
	return `${round(n, 0)} MiB`;
}

// "4G", "512M", "1.5g", "2048" (MiB) -> MiB; NaN when it is none of these.
export function parseMib(text) {
	const m = /^\s*(\d+(?:\.\d+)?)\s*([gGmM]?)(?:i?[bB])?\s*$/.exec(text);

	if (!m)
		return NaN;
	const n = Number(m[1]) * (m[2].toLowerCase() === 'g' ? 1024 : 1);

	return Number.isInteger(n) ? n : Math.round(n);
}

export function pct(n, digits = 0) {
	return n === null || n === undefined || Number.isNaN(n) ? '-' : `${round(n, digits)} %`;
}

export function round(n, digits) {
	const f = 10 ** digits;

	return Math.round(n * f) / f;
}

// A number with up to `digits` decimals, trailing zeros dropped.
export function num(n, digits = 4) {
	return n === null || n === undefined ? '-' : String(round(n, digits));
}

// An RFC 3339 time as local "HH:MM:SS" today, else "YYYY-MM-DD HH:MM".
export function when(iso) {
	if (!iso)
		return '-';
	const t = new Date(iso), now = new Date();
	const two = (n) => String(n).padStart(2, '0');
	const clock = `${two(t.getHours())}:${two(t.getMinutes())}`;

	if (t.toDateString() === now.toDateString())
		return `${clock}:${two(t.getSeconds())}`;
	return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${clock}`;
}

// Seconds as "42 s", "3 min", "2.5 h".
export function seconds(s) {
	if (s === null || s === undefined)
		return '-';
	if (s < 120)
		return `${round(s, s < 10 ? 1 : 0)} s`;
	if (s < 7200)
		return `${round(s / 60, 0)} min`;
	return `${round(s / 3600, 1)} h`;
}

// The current month in UTC, "YYYY-MM", as the API's month= is.
export function monthNow() {
	return new Date().toISOString().slice(0, 7);
}

// ---- tenants' colours -----------------------------------------------------

// Distinct colours, given to tenants in the order of their ids, so that
// the first ten tenants never share one; a tenant whose id is not known
// (one removed, in a bill) gets one from its name.
const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16',
	'#f97316', '#14b8a6'];
const tenantIds = new Map();

// The tenants GET /v1/tenants gave (the admin: all; a tenant: itself).
export function tenantsKnow(tenants) {
	tenantIds.clear();
	tenants.forEach((t) => tenantIds.set(t.name, t.id));
}

// A colour of its own for each tenant, the same on every page.
export function tenantColour(name) {
	let hash = 0;

	if (tenantIds.has(name))
		return PALETTE[(tenantIds.get(name) - 1) % PALETTE.length];
	for (const c of String(name))
		hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
	return `hsl(${(hash * 137) % 360}, 62%, 52%)`;
}

export const OTHERS_COLOUR = 'hsl(0, 0%, 72%)';

// A tenant's name after a swatch of its colour.
export function tenantCell(name) {
	const dot = el('span', { class: 'swatch' });

	dot.style.backgroundColor = tenantColour(name);
	return el('span', { class: 'tenant' }, dot, name);
}

// ---- split bars -----------------------------------------------------------

// A bar of `total` units split into segments, each {value, colour, title,
// label, data}: its width is its part of the total (a part past the total
// shrinks the scale so that everything shows).
export function splitBar(total, segments, extraClass = '') {
	const sum = segments.reduce((s, g) => s + Math.max(0, g.value), 0);
	const scale = Math.max(total, sum) || 1;
	const bar = el('div', { class: `bar ${extraClass}`.trim(), data: { scale } });

	for (const g of segments) {
		if (g.value <= 0)
			continue;
		const wide = g.value / scale > 0.05; // room for its label
		const seg = el('div', { class: `seg ${g.class || ''}`.trim(), title: g.title, data: g.data },
			g.label && wide ? el('span', { class: 'seg-label', text: g.label }) : null);

		seg.style.width = `${(100 * g.value) / scale}%`;
		if (g.colour)
			seg.style.backgroundColor = g.colour;
		bar.append(seg);
	}
	return bar;
}

// A mark on a bar of splitBar's at `at` units (a quota's guarantee).
export function barMark(bar, at, title) {
	const mark = el('div', { class: 'bar-mark', title });

	mark.style.left = `${Math.min(100, (100 * at) / Number(bar.dataset.scale))}%`;
	bar.append(mark);
	return bar;
}

// A badge: a small coloured word (a state, a level, a health).
export function badge(text, kind = text) {
	return el('span', { class: `badge badge-${kind}`, text });
}

// A button that asks for a second click (within 5 s) before it acts:
// action() runs once, the button disabled meanwhile. While it waits for
// the second click it has the class "armed" (pages do not redraw it then).
export function confirmButton(text, props, action) {
	const button = el('button', { type: 'button', class: 'danger', text, ...props });
	let armed = null;

	button.addEventListener('click', async () => {
		if (!armed) {
			button.textContent = `Confirm: ${text.toLowerCase()}`;
			button.classList.add('armed');
			armed = setTimeout(() => {
				armed = null;
				button.textContent = text;
				button.classList.remove('armed');
			}, 5000);
			return;
		}
		clearTimeout(armed);
		button.classList.remove('armed');
		button.disabled = true;
		await action();
	});
	return button;
}
