// api.js — the console's only way to the server: the REST API of
// docs/api.md, asked with the signed-in user's bearer token, as any
// client would (the console has no endpoints of its own). The token lives
// in the tab's sessionStorage: it goes when the tab is closed or the user
// signs out. An answer that is not 2xx becomes an ApiError carrying the
// server's own {"error": ...} message, for the page to show.

const TOKEN_KEY = 'gpupool.token';

export function tokenGet() {
	return sessionStorage.getItem(TOKEN_KEY);
}

export function tokenSet(token) {
	sessionStorage.setItem(TOKEN_KEY, token);
}

export function tokenClear() {
	sessionStorage.removeItem(TOKEN_KEY);
}

// An answer the API refused: status, the server's message, what was asked.
export class ApiError extends Error {
	constructor(status, message, method, path) {
		super(message);
		this.status = status;
		this.method = method;
		this.path = path;
	}

	// "GET /v1/tasks/7: 403 Forbidden: task 7 belongs to another tenant"
	describe() {
		const names = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
			409: 'Conflict', 413: 'Too Large', 500: 'Server Error', 503: 'Unavailable' };
		const status = this.status ? `${this.status} ${names[this.status] || ''}`.trim() : 'no answer';

		return `${this.method} ${this.path}: ${status}: ${this.message}`;
	}
}

// Called with the error when the server no longer knows the token (401).
let unauthorized = () => {};

export function onUnauthorized(handler) {
	unauthorized = handler;
}

// The raw answer to METHOD PATH (a JSON body when body is given), with the
// token; throws ApiError when the server could not be reached or said no.
export async function request(method, path, body, token = tokenGet()) {
	const headers = {};
	let reply;

	if (token)
		headers.Authorization = `Bearer ${token}`;
	if (body !== undefined)
		headers['Content-Type'] = 'application/json';
	try {
		reply = await fetch(path, { method, headers, cache: 'no-store',
			body: body === undefined ? undefined : JSON.stringify(body) });
	} catch (e) {
		throw new ApiError(0, `the server could not be reached (${e.message})`, method, path);
	}
	if (!reply.ok)
		throw await errorOf(reply, method, path);
	return reply;
}

async function errorOf(reply, method, path) {
	const text = await reply.text();
	let message = text.trim() || reply.statusText;

	try {
		message = JSON.parse(text).error || message;
	} catch {
		// not JSON: the text itself is the message
	}
	const error = new ApiError(reply.status, message, method, path);

	if (reply.status === 401)
		unauthorized(error);
	return error;
}

// The JSON answer to METHOD PATH.
export async function api(method, path, body) {
	const reply = await request(method, path, body);

	return reply.json();
}

export const get = (path) => api('GET', path);

// Every item of a paged list (docs/api.md: `next_after` is the cursor for
// `after=`, null on the last page) past the cursor `from`: the `key`
// arrays of all the pages.
export async function getAll(path, key, limit = 2000, from = 0) {
	const items = [];
	let after = from;

	for (;;) {
		const sep = path.includes('?') ? '&' : '?';
		const page = await get(`${path}${sep}limit=${limit}&after=${after}`);

		items.push(...page[key]);
		if (page.next_after === null || page.next_after === undefined)
			return items;
		after = page.next_after;
	}
}

// A query string of the parameters that have a value: {a: 1, b: ''} -> "?a=1".
export function query(params) {
	const q = new URLSearchParams();

	for (const [key, value] of Object.entries(params))
		if (value !== '' && value !== null && value !== undefined)
			q.set(key, value);
	const text = q.toString();

	return text ? `?${text}` : '';
}
