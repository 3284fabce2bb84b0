#!/usr/bin/env node
// apiserver-double.js — a Kubernetes API server double for gpupool's tests
// (tests/k8s/test-kube-client.c) and benchmarks: a real HTTP server that
// speaks the kube-apiserver's REST and watch protocol for what gpupool uses
// (src/k8s/client.h): Nodes, Pods (with the binding, eviction and status
// subresources) and Events of core/v1, and Deployments of apps/v1 (with the
// status and scale subresources, and a minimal Deployment controller), kept
// in memory.
//
//   node apiserver-double.js [--port N] [--token T] [--bookmark-ms N]
//                            [--pod-termination-ms N]
//
// It listens on 127.0.0.1, port N (0, the default: any free port) and
// prints {"port":N} as its first line on stdout. With --token T every
// Kubernetes request needs "Authorization: Bearer T" (401 otherwise).
// Watches with allowWatchBookmarks=true get a BOOKMARK every --bookmark-ms
// (default 1000). A bound pod that is deleted is first marked
// (deletionTimestamp, MODIFIED) and removed (DELETED) --pod-termination-ms
// later (default 0: at once, as if its kubelet stopped it immediately).
// It exits on SIGTERM, and by itself once the process that started it is
// gone.
//
// As the real server: one resourceVersion counter for everything (a
// string in metadata.resourceVersion); uid, creationTimestamp and
// namespace filled on create; pods' status reset on create and changed
// only through .../status; lists with limit and continue tokens, field
// and label selectors; merge patches (RFC 7386) only, other patch types
// get 415; a stale metadata.resourceVersion in a PUT or patch gets 409
// Conflict; watches replay the history kept since the last compaction,
// an older resourceVersion gets HTTP 200 then an ERROR event (a Status
// with code 410, reason Expired) and the end; a newer one than the
// server's gets 504 (ResourceVersionTooLarge); objects entering or
// leaving a watch's selector are ADDED or DELETED for it. Every error is
// a v1 Status. Simplified: namespaces need not exist, no admission, no
// validation beyond names, a pod's containers and a deployment's spec.
//
// Deployments (apps/v1): /apis/apps/v1/[namespaces/NS/]deployments[/NAME
// [/status|/scale]] as the other resources; metadata.generation 1, +1 when
// the spec changes; spec.replicas defaults to 1; 422 without
// spec.selector.matchLabels, with template labels not matching it, no
// template containers, replicas below 0, or a changed selector. .../scale:
// an autoscaling/v1 Scale ({metadata: {name, namespace, uid,
// resourceVersion, creationTimestamp}, spec: {replicas}, status: {replicas,
// selector: "k=v,..."}}) read, or written by PUT or merge patch (only the
// deployment's spec.replicas changes; the answer is the new Scale). After
// every change of a deployment or of a pod it owns, a minimal controller
// (a ReplicaSet's, without ReplicaSet objects) keeps its live pods (not
// being deleted, not Succeeded/Failed: those are replaced) at
// spec.replicas: new ones from its template, DEPLOY-HASH-xxxxx (HASH: 10
// characters of the template's hash) labelled pod-template-hash=HASH and
// controlled by ReplicaSet DEPLOY-HASH (its uid stable per deployment and
// HASH); the newest (creationTimestamp, then name) deleted first, an older
// template's all at once (as Recreate); then status {observedGeneration,
// replicas}. Its pods are created and deleted as by a client's POST and
// DELETE (watchers see them, /_double/requests does not); a deleted
// deployment's pods are deleted (as by garbage collection).
//
// Test controls (not Kubernetes; never need the token):
//   POST /_double/compact        history up to now expires (older
//                                resourceVersions get 410)
//   POST /_double/drop-watches   every open watch connection is cut
//   GET  /_double/requests       the requests seen so far: [{method, path
//                                (with the query), contentType}]
//   DELETE /_double/requests     forgets them
//   POST /_double/fail {"method","pathPrefix","status","count"}
//                                the next `count` matching requests get
//                                `status` with a Status body (count 0
//                                removes the rule; method optional)
//
// Fast enough for a benchmark of thousands of nodes and pods: objects in
// Maps, each object serialized once per version, watchers of pods by node
// name indexed, no scan per request except lists.
'use strict';

const http = require('http');
const crypto = require('crypto');

// ---- options ----------------------------------------------------------------

const USAGE = 'usage: apiserver-double.js [--port N] [--token T] [--bookmark-ms N] ' +
	'[--pod-termination-ms N]';

function parseArgs(argv) {
	const o = { port: 0, token: null, bookmarkMs: 1000, podTerminationMs: 0 };
	const numeric = { '--port': 'port', '--bookmark-ms': 'bookmarkMs',
		'--pod-termination-ms': 'podTerminationMs' };
	for (let i = 0; i < argv.length; i += 2) {
		const flag = argv[i], value = argv[i + 1];
		if (value === undefined)
			die(`${flag}: a value is missing; ${USAGE}`);
		if (flag === '--token') {
			o.token = value;
		} else if (numeric[flag]) {
			if (!/^\d+$/.test(value))
				die(`${flag} ${value}: not a whole number; ${USAGE}`);
			o[numeric[flag]] = Number(value);
		} else {
			die(`${flag}: unknown option; ${USAGE}`);
		}
	}
	if (o.port > 65535)
		die(`--port ${o.port}: not a port (0..65535)`);
	if (o.bookmarkMs < 1)
		die('--bookmark-ms must be at least 1');
	return o;
}

function die(message) {
	process.stderr.write(`apiserver-double: ${message}\n`);
	process.exit(2);
}

// ---- Status objects and errors -----------------------------------------------

const REASONS = {
	400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound',
	405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Expired', 413: 'RequestEntityTooLarge',
	415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests',
	500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

class ApiError extends Error {
	constructor(code, reason, message, details) {
		super(message);
		this.code = code;
		this.reason = reason || REASONS[code] || '';
		this.details = details;
	}
}

function statusObject(code, reason, message, details) {
	const s = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
		message, reason, code };
	if (details)
		s.details = details;
	if (!reason)
		delete s.reason;
	return s;
}

function successStatus(code, details) {
	const s = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code };
	if (details)
		s.details = details;
	return s;
}

// "deployments.apps" for a resource of a group, "pods" for core's (as the
// real server names them in messages).
function qualified(res) {
	return res.group ? `${res.plural}.${res.group}` : res.plural;
}

// A Status's details about an object.
function details(res, name) {
	return res.group ? { name, group: res.group, kind: res.plural } : { name, kind: res.plural };
}

function notFound(res, name) {
	return new ApiError(404, 'NotFound', `${qualified(res)} "${name}" not found`,
		details(res, name));
}

function conflict(res, name, why) {
	return new ApiError(409, 'Conflict',
		`Operation cannot be fulfilled on ${qualified(res)} "${name}": ${why}`,
		details(res, name));
}

const STALE = 'the object has been modified; please apply your changes to the latest ' +
	'version and try again';

// ---- resources ------------------------------------------------------------------

// What the double serves: plural → how its objects look. `fields` are the
// field selectors the real server supports for it (besides metadata.name
// and metadata.namespace); `group` its API group (none: core).
const RESOURCES = {
	nodes: { plural: 'nodes', kind: 'Node', apiVersion: 'v1', namespaced: false,
		fields: ['spec.unschedulable'] },
	pods: { plural: 'pods', kind: 'Pod', apiVersion: 'v1', namespaced: true,
		fields: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName',
			'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase',
			'status.podIP', 'status.nominatedNodeName'] },
	events: { plural: 'events', kind: 'Event', apiVersion: 'v1', namespaced: true,
		fields: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name',
			'involvedObject.uid', 'involvedObject.apiVersion',
			'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason',
			'reportingComponent', 'source', 'type'] },
	deployments: { plural: 'deployments', kind: 'Deployment', group: 'apps',
		apiVersion: 'apps/v1', namespaced: true, fields: [] },
};

// One version of an object: the object (never changed once stored) and
// its JSON, made when first needed, as a watch event's object (with kind
// and apiVersion) and as a list item (without, as the real server).
class Version {
	constructor(obj) {
		this.obj = obj;
		this.full = null;
		this.item = null;
	}

	json() {
		if (this.full === null)
			this.full = JSON.stringify(this.obj);
		return this.full;
	}

	itemJson() {
		if (this.item === null) {
			const rest = { ...this.obj };
			delete rest.kind;
			delete rest.apiVersion;
			this.item = JSON.stringify(rest);
		}
		return this.item;
	}
}

function keyOf(res, ns, name) {
	return res.namespaced ? `${ns}/${name}` : name;
}

function now() {
	return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function clone(obj) {
	return JSON.parse(JSON.stringify(obj));
}

function isObject(v) {
	return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// RFC 7386: a JSON merge patch applied to target (a new value; neither
// argument is changed).
function mergePatch(target, patch) {
	if (!isObject(patch))
		return patch;
	const out = isObject(target) ? { ...target } : {};
	for (const [k, v] of Object.entries(patch)) {
		if (v === null)
			delete out[k];
		else
			out[k] = mergePatch(out[k], v);
	}
	return out;
}

// JSON with the keys of objects sorted: one text for equal values.
function canonicalJson(v) {
	if (Array.isArray(v))
		return `[${v.map(canonicalJson).join(',')}]`;
	if (!isObject(v))
		return JSON.stringify(v);
	return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
		.join(',')}}`;
}

// Bytes as Kubernetes' "safe" characters (no vowels, no 0, 1, 3), one each.
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

function safeEncode(bytes) {
	return [...bytes].map((b) => SAFE[b % SAFE.length]).join('');
}

// ---- selectors ------------------------------------------------------------------

function fieldValue(obj, path) {
	let v = obj;
	for (const part of path.split('.')) {
		if (!isObject(v))
			return '';
		v = v[part];
	}
	return v === undefined || v === null ? '' : String(v);
}

// "a=b,c!=d" → [{path, negate, value}]; a field the resource does not
// support is a 400, as on the real server.
function parseFieldSelector(res, text) {
	const terms = [];
	for (const term of text.split(',').filter((t) => t !== '')) {
		const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(term);
		if (!m)
			throw new ApiError(400, 'BadRequest',
				`unable to parse requirement: invalid field selector "${term}"`);
		const path = m[1].trim();
		if (path !== 'metadata.name' && path !== 'metadata.namespace' &&
		    !res.fields.includes(path))
			throw new ApiError(400, 'BadRequest', `field label not supported: ${path}`);
		terms.push({ path, negate: m[2] === '!=', value: m[3] });
	}
	return terms;
}

// Splits at commas outside parentheses ("a in (x,y),b" → 2 terms).
function splitTerms(text) {
	const terms = [];
	let depth = 0, start = 0;
	for (let i = 0; i <= text.length; i++) {
		const c = text[i];
		if (c === '(')
			depth++;
		else if (c === ')')
			depth--;
		else if ((c === ',' && depth === 0) || i === text.length) {
			const t = text.slice(start, i).trim();
			if (t !== '')
				terms.push(t);
			start = i + 1;
		}
	}
	return terms;
}

const LABEL_KEY = '[A-Za-z0-9][-A-Za-z0-9_./]*';
const LABEL_TERMS = [
	[new RegExp(`^(${LABEL_KEY})\\s*(==|=|!=)\\s*([-A-Za-z0-9_.]*)$`), (m) =>
		({ key: m[1], op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]] })],
	[new RegExp(`^(${LABEL_KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`), (m) =>
		({ key: m[1], op: m[2], values: m[3].split(',').map((v) => v.trim()) })],
	[new RegExp(`^!\\s*(${LABEL_KEY})$`), (m) => ({ key: m[1], op: '!' })],
	[new RegExp(`^(${LABEL_KEY})$`), (m) => ({ key: m[1], op: 'exists' })],
];

function parseLabelSelector(text) {
	return splitTerms(text).map((term) => {
		for (const [re, make] of LABEL_TERMS) {
			const m = re.exec(term);
			if (m)
				return make(m);
		}
		throw new ApiError(400, 'BadRequest',
			`unable to parse requirement: invalid label selector "${term}"`);
	});
}

function labelMatches(labels, t) {
	const has = Object.prototype.hasOwnProperty.call(labels, t.key);
	switch (t.op) {
	case 'exists': return has;
	case '!': return !has;
	case 'in': return has && t.values.includes(labels[t.key]);
	default: return !has || !t.values.includes(labels[t.key]);
	}
}

// A request's selectors: {ns, fields, labels, node} (node: the value of
// an spec.nodeName= term, for the watchers' index).
function parseSelectors(res, ns, query) {
	const fields = parseFieldSelector(res, query.get('fieldSelector') || '');
	const labels = parseLabelSelector(query.get('labelSelector') || '');
	const byNode = fields.find((f) => f.path === 'spec.nodeName' && !f.negate);
	return { ns, fields, labels, node: byNode ? byNode.value : null,
		empty: fields.length === 0 && labels.length === 0 };
}

function selects(sel, obj) {
	const meta = obj.metadata || {};
	if (sel.ns && meta.namespace !== sel.ns)
		return false;
	for (const f of sel.fields)
		if ((fieldValue(obj, f.path) === f.value) === f.negate)
			return false;
	const labels = meta.labels || {};
	return sel.labels.every((t) => labelMatches(labels, t));
}

// ---- the store ------------------------------------------------------------------

// What a watcher of `sel` sees of a change from prev to obj (either may be
// null): ADDED, MODIFIED, DELETED or nothing.
function seenAs(sel, type, prev, obj) {
	const now_ = obj !== null && selects(sel, obj);
	const before = prev !== null && selects(sel, prev);
	if (type === 'DELETED')
		return before ? 'DELETED' : null;
	if (now_ && before)
		return 'MODIFIED';
	if (now_)
		return 'ADDED';
	return before ? 'DELETED' : null;
}

// One change in the history: its resourceVersion, the version after it
// (for DELETED: the last one) and before it, and its lines, each made once.
class Change {
	constructor(rv, res, type, version, prev) {
		this.rv = rv;
		this.res = res;
		this.type = type;
		this.version = version;
		this.prev = prev;
		this.lines = {};
	}

	line(type) {
		if (!this.lines[type])
			this.lines[type] = `{"type":"${type}","object":${this.version.json()}}\n`;
		return this.lines[type];
	}

	deliver(w) {
		const type = seenAs(w.sel, this.type, this.type === 'ADDED' ? null : this.prev.obj,
			this.type === 'DELETED' ? null : this.version.obj);
		if (type)
			w.write(this.line(type));
	}
}

const HISTORY_MAX = 200000;

class Store {
	constructor(options) {
		this.options = options;
		this.rv = 1;
		this.compacted = 1;
		this.history = [];
		this.objects = {};
		this.sorted = {};
		this.watchers = {};
		this.onCommit = null;
		for (const plural of Object.keys(RESOURCES)) {
			this.objects[plural] = new Map();
			this.sorted[plural] = null;
			this.watchers[plural] = { all: new Set(), byNode: new Map() };
		}
	}

	get(res, key) {
		return this.objects[res.plural].get(key);
	}

	// Stores obj (a new object, not shared) as the next version; type
	// ADDED, MODIFIED or DELETED; tells the watchers.
	commit(res, type, obj, prev) {
		const rv = ++this.rv;
		obj.metadata.resourceVersion = String(rv);
		const version = new Version(obj);
		const key = keyOf(res, obj.metadata.namespace, obj.metadata.name);
		if (type === 'DELETED')
			this.objects[res.plural].delete(key);
		else
			this.objects[res.plural].set(key, version);
		if (type !== 'MODIFIED')
			this.sorted[res.plural] = null;
		const change = new Change(rv, res, type, version, prev || null);
		this.remember(change);
		this.notify(change);
		if (this.onCommit)
			this.onCommit(change);
		return version;
	}

	remember(change) {
		this.history.push(change);
		if (this.history.length > HISTORY_MAX) {
			const drop = this.history.length / 2;
			this.compacted = this.history[drop - 1].rv;
			this.history = this.history.slice(drop);
		}
	}

	compact() {
		this.compacted = this.rv;
		this.history = [];
	}

	notify(change) {
		const set = this.watchers[change.res.plural];
		for (const w of set.all)
			change.deliver(w);
		const nodes = new Set([nodeOf(change.version.obj)]);
		if (change.prev)
			nodes.add(nodeOf(change.prev.obj));
		for (const node of nodes)
			for (const w of set.byNode.get(node) || [])
				change.deliver(w);
	}

	// The changes after rv (a number the caller checked is not compacted).
	changesAfter(rv) {
		let lo = 0, hi = this.history.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (this.history[mid].rv <= rv)
				lo = mid + 1;
			else
				hi = mid;
		}
		return this.history.slice(lo);
	}

	// The keys of a resource, sorted (lists and their continue tokens).
	sortedKeys(res) {
		if (this.sorted[res.plural] === null)
			this.sorted[res.plural] = [...this.objects[res.plural].keys()].sort();
		return this.sorted[res.plural];
	}

	subscribe(w) {
		const set = this.watchers[w.res.plural];
		if (w.sel.node === null) {
			set.all.add(w);
			return;
		}
		if (!set.byNode.has(w.sel.node))
			set.byNode.set(w.sel.node, new Set());
		set.byNode.get(w.sel.node).add(w);
	}

	unsubscribe(w) {
		const set = this.watchers[w.res.plural];
		set.all.delete(w);
		const nodeSet = set.byNode.get(w.sel.node);
		if (nodeSet) {
			nodeSet.delete(w);
			if (nodeSet.size === 0)
				set.byNode.delete(w.sel.node);
		}
	}

	allWatchers() {
		const out = [];
		for (const set of Object.values(this.watchers)) {
			out.push(...set.all);
			for (const nodeSet of set.byNode.values())
				out.push(...nodeSet);
		}
		return out;
	}
}

function nodeOf(obj) {
	return (obj.spec && obj.spec.nodeName) || '';
}

// ---- requests -------------------------------------------------------------------

const BODY_MAX = 3 * 1024 * 1024;

function readBody(req) {
	return new Promise((resolve, reject) => {
		const chunks = [];
		let size = 0;
		req.on('data', (c) => {
			size += c.length;
			if (size > BODY_MAX) {
				reject(new ApiError(413, 'RequestEntityTooLarge',
					'the request body is larger than 3 MiB'));
				req.destroy();
				return;
			}
			chunks.push(c);
		});
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', reject);
	});
}

function mediaType(req) {
	return (req.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
}

async function readJson(req) {
	if (mediaType(req) !== 'application/json')
		throw new ApiError(415, 'UnsupportedMediaType',
			`the body of the request was in an unknown format "${mediaType(req)}" - ` +
			'accepted media types include: application/json');
	return parseJson(await readBody(req));
}

// A merge patch's body (other patch types get 415).
async function readMergePatch(req) {
	if (mediaType(req) !== 'application/merge-patch+json')
		throw new ApiError(415, 'UnsupportedMediaType',
			`the body of the request was in an unknown format "${mediaType(req)}" - accepted ` +
			'media types include: application/merge-patch+json');
	return parseJson(await readBody(req));
}

function parseJson(text) {
	try {
		const v = JSON.parse(text);
		if (!isObject(v))
			throw new Error('not a JSON object');
		return v;
	} catch (e) {
		throw new ApiError(400, 'BadRequest', `the request body is not a JSON object: ${e.message}`);
	}
}

function send(res, code, body, headers) {
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	res.writeHead(code, { 'Content-Type': 'application/json',
		'Content-Length': Buffer.byteLength(text), ...(headers || {}) });
	res.end(text);
}

function sendError(res, e) {
	const headers = e.code === 429 ? { 'Retry-After': '1' } : undefined;
	send(res, e.code, statusObject(e.code, e.reason, e.message, e.details), headers);
}

// ---- validation ---------------------------------------------------------------

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function invalid(res, name, field, why) {
	const kind = res.group ? `${res.kind}.${res.group}` : res.kind;
	return new ApiError(422, 'Invalid', `${kind} "${name}" is invalid: ${field}: ${why}`,
		{ ...details(res, name), kind: res.kind,
			causes: [{ reason: 'FieldValueInvalid', message: why, field }] });
}

function checkName(res, name) {
	if (name.length > 253 || !DNS_SUBDOMAIN.test(name))
		throw invalid(res, name, 'metadata.name', `Invalid value: "${name}": a lowercase ` +
			'RFC 1123 subdomain must consist of lower case alphanumeric characters, ' +
			"'-' or '.', and must start and end with an alphanumeric character");
}

function checkKind(res, body) {
	if (body.kind !== undefined && body.kind !== res.kind)
		throw new ApiError(400, 'BadRequest',
			`the kind "${body.kind}" does not match the resource ${res.plural} (kind ${res.kind})`);
	if (body.apiVersion !== undefined && body.apiVersion !== res.apiVersion)
		throw new ApiError(400, 'BadRequest', `the apiVersion "${body.apiVersion}" is not ` +
			`${res.apiVersion} (${res.group || 'core'}/v1 ${res.kind})`);
}

function checkNamespace(res, ns, meta) {
	if (res.namespaced && meta.namespace !== undefined && meta.namespace !== ns)
		throw new ApiError(400, 'BadRequest', 'the namespace of the provided object does not ' +
			'match the namespace sent on the request');
}

function checkPod(name, obj) {
	const containers = obj.spec && obj.spec.containers;
	if (!Array.isArray(containers) || containers.length === 0)
		throw invalid(RESOURCES.pods, name, 'spec.containers', 'Required value');
}

// spec.replicas (of a Deployment or a Scale): a whole number (400 else,
// as a failed decode), at least 0 (422 else).
function checkReplicas(res, name, r) {
	if (!Number.isInteger(r))
		throw new ApiError(400, 'BadRequest', `spec.replicas: ${JSON.stringify(r)} is not an integer`);
	if (r < 0)
		throw invalid(res, name, 'spec.replicas', `Invalid value: ${r}: must be greater than or ` +
			'equal to 0');
}

const DEPLOYMENT_DEFAULTS = { replicas: 1, revisionHistoryLimit: 10, progressDeadlineSeconds: 600,
	strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } } };

// A deployment's defaults, checks and metadata.generation (1 on create, +1
// when the spec changes); was: its version before, null on create (the
// status is then dropped: it is the controller's).
function prepareDeployment(name, obj, was) {
	const res = RESOURCES.deployments;
	const spec = obj.spec = { ...DEPLOYMENT_DEFAULTS, ...(isObject(obj.spec) ? obj.spec : {}) };
	if (spec.replicas === null)
		spec.replicas = 1;
	checkReplicas(res, name, spec.replicas);
	const sel = isObject(spec.selector) ? spec.selector.matchLabels : null;
	const t = isObject(spec.template) ? spec.template : {};
	const labels = isObject(t.metadata) && isObject(t.metadata.labels) ? t.metadata.labels : {};
	if (!isObject(sel) || Object.keys(sel).length === 0)
		throw invalid(res, name, 'spec.selector', 'Required value');
	if (Object.entries(sel).some(([k, v]) => labels[k] !== v))
		throw invalid(res, name, 'spec.template.metadata.labels', `Invalid value: ` +
			`${JSON.stringify(labels)}: \`selector\` does not match template \`labels\``);
	if (!isObject(t.spec) || !Array.isArray(t.spec.containers) || t.spec.containers.length === 0)
		throw invalid(res, name, 'spec.template.spec.containers', 'Required value');
	if (was && canonicalJson(spec.selector) !== canonicalJson(was.spec.selector))
		throw invalid(res, name, 'spec.selector', `Invalid value: ${JSON.stringify(spec.selector)}: ` +
			'field is immutable');
	obj.metadata.generation = was === null ? 1 :
		was.metadata.generation + (canonicalJson(spec) === canonicalJson(was.spec) ? 0 : 1);
	if (was === null)
		delete obj.status;
}

// DeleteOptions.preconditions: {uid, resourceVersion}, each optional.
function checkPreconditions(res, obj, pre) {
	if (!isObject(pre))
		return;
	const meta = obj.metadata;
	if (pre.uid && pre.uid !== meta.uid)
		throw conflict(res, meta.name, `Precondition failed: UID in precondition: ${pre.uid}, ` +
			`UID in object meta: ${meta.uid}`);
	if (pre.resourceVersion && pre.resourceVersion !== meta.resourceVersion)
		throw conflict(res, meta.name, 'Precondition failed: ResourceVersion in precondition: ' +
			`${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`);
}

function qosClass(spec) {
	const all = [...(spec.initContainers || []), ...(spec.containers || [])];
	let any = false, guaranteed = true;
	for (const c of all) {
		const r = (c && c.resources) || {};
		const req = r.requests || {}, lim = r.limits || {};
		for (const name of ['cpu', 'memory']) {
			if (req[name] !== undefined || lim[name] !== undefined)
				any = true;
			if (lim[name] === undefined || (req[name] !== undefined && req[name] !== lim[name]))
				guaranteed = false;
		}
	}
	if (!any)
		return 'BestEffort';
	return guaranteed ? 'Guaranteed' : 'Burstable';
}

// ---- the handlers ---------------------------------------------------------------

class Double {
	constructor(options) {
		this.options = options;
		this.store = new Store(options);
		this.requests = [];
		this.faults = [];
		this.pending = new Map();
		this.reconciling = false;
		this.store.onCommit = (change) => this.changed(change);
	}

	// ---- create, read, update, delete ----

	async create(req, res, ns) {
		return [201, this.insert(res, ns, await readJson(req)).json()];
	}

	// A new object (a client's POST, or a pod of the Deployment
	// controller) checked, filled and stored: its version.
	insert(res, ns, body) {
		checkKind(res, body);
		const meta = isObject(body.metadata) ? body.metadata : {};
		checkNamespace(res, ns, meta);
		let name = meta.name;
		if (!name && meta.generateName)
			name = meta.generateName + safeEncode(crypto.randomBytes(5));
		if (!name)
			throw invalid(res, '', 'metadata.name', 'Required value: name or generateName is required');
		checkName(res, name);
		if (this.store.get(res, keyOf(res, ns, name)))
			throw new ApiError(409, 'AlreadyExists', `${qualified(res)} "${name}" already exists`,
				details(res, name));
		const obj = clone(body);
		obj.kind = res.kind;
		obj.apiVersion = res.apiVersion;
		obj.metadata = { ...meta, name, uid: crypto.randomUUID(), creationTimestamp: now() };
		delete obj.metadata.resourceVersion;
		if (res.namespaced)
			obj.metadata.namespace = ns;
		if (res.plural === 'pods')
			this.preparePod(name, obj);
		if (res.plural === 'deployments')
			prepareDeployment(name, obj, null);
		return this.store.commit(res, 'ADDED', obj);
	}

	preparePod(name, obj) {
		checkPod(name, obj);
		obj.spec = { schedulerName: 'default-scheduler', restartPolicy: 'Always',
			terminationGracePeriodSeconds: 30, ...obj.spec };
		obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec) };
	}

	existing(res, ns, name) {
		const v = this.store.get(res, keyOf(res, ns, name));
		if (!v)
			throw notFound(res, name);
		return v;
	}

	read(res, ns, name) {
		return [200, this.existing(res, ns, name).json()];
	}

	async replace(req, res, ns, name, sub) {
		const old = this.existing(res, ns, name);
		const body = await readJson(req);
		checkKind(res, body);
		const meta = isObject(body.metadata) ? body.metadata : {};
		if (meta.name !== name)
			throw new ApiError(400, 'BadRequest',
				`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
		checkNamespace(res, ns, meta);
		return this.update(res, old, { ...body, kind: res.kind, apiVersion: res.apiVersion }, sub);
	}

	async patch(req, res, ns, name, sub) {
		const old = this.existing(res, ns, name);
		const patch = await readMergePatch(req);
		return this.update(res, old, mergePatch(old.obj, patch), sub);
	}

	// The new object (from a PUT or a patch) checked and stored; `sub` is
	// "status" for the status subresource (only the status changes),
	// else the status is kept (as the real server does for pods and nodes).
	update(res, old, next, sub) {
		const was = old.obj, meta = isObject(next.metadata) ? next.metadata : {};
		if (meta.resourceVersion !== undefined && meta.resourceVersion !== was.metadata.resourceVersion)
			throw conflict(res, was.metadata.name, STALE);
		for (const field of ['name', 'namespace', 'uid', 'creationTimestamp'])
			if (meta[field] !== undefined && meta[field] !== was.metadata[field])
				throw invalid(res, was.metadata.name, `metadata.${field}`, 'field is immutable');
		let obj = clone(next);
		if (sub === 'status')
			obj = { ...clone(was), status: obj.status };
		else if (res.plural !== 'events')
			obj.status = was.status;
		if (obj.status === undefined)
			delete obj.status;
		obj.metadata = { ...obj.metadata, name: was.metadata.name, uid: was.metadata.uid,
			creationTimestamp: was.metadata.creationTimestamp,
			resourceVersion: was.metadata.resourceVersion };
		if (res.namespaced)
			obj.metadata.namespace = was.metadata.namespace;
		if (res.plural === 'pods')
			checkPod(was.metadata.name, obj);
		if (res.plural === 'deployments')
			prepareDeployment(was.metadata.name, obj, was);
		if (JSON.stringify(obj) === old.json())
			return [200, old.json()];
		return [200, this.store.commit(res, 'MODIFIED', obj, old).json()];
	}

	async remove(req, res, ns, name, query) {
		const old = this.existing(res, ns, name);
		const text = await readBody(req);
		const options = text.trim() === '' ? {} : parseJson(text);
		checkPreconditions(res, old.obj, options.preconditions);
		let grace = query.get('gracePeriodSeconds');
		if (grace === null)
			grace = options.gracePeriodSeconds;
		return this.removeObject(res, old, grace);
	}

	// A delete (a client's, or the Deployment controller's): a bound pod
	// gracefully, `grace` seconds (undefined or null: its own), the rest
	// at once.
	removeObject(res, old, grace) {
		if (res.plural !== 'pods')
			return this.removeNow(res, old, successStatus(200,
				{ ...details(res, old.obj.metadata.name), uid: old.obj.metadata.uid }));
		const pod = old.obj;
		if (grace === undefined || grace === null)
			grace = pod.spec.terminationGracePeriodSeconds;
		if (!pod.spec.nodeName || Number(grace) === 0)
			return this.removeNow(res, old, null);
		if (pod.metadata.deletionTimestamp)
			return [200, old.json()];
		return this.terminate(res, old, Number(grace));
	}

	removeNow(res, old, answer) {
		const obj = clone(old.obj);
		const last = this.store.commit(res, 'DELETED', obj, old);
		return [200, answer || last.json()];
	}

	// A bound pod deleted gracefully: marked now, gone when its (absent)
	// kubelet has stopped it, --pod-termination-ms later.
	terminate(res, old, grace) {
		const obj = clone(old.obj);
		obj.metadata.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString()
			.replace(/\.\d+Z$/, 'Z');
		obj.metadata.deletionGracePeriodSeconds = grace;
		const marked = this.store.commit(res, 'MODIFIED', obj, old);
		const key = keyOf(res, obj.metadata.namespace, obj.metadata.name);
		setTimeout(() => {
			const current = this.store.get(res, key);
			if (current && current.obj.metadata.uid === obj.metadata.uid)
				this.removeNow(res, current, null);
		}, this.options.podTerminationMs);
		return [200, marked.json()];
	}

	// ---- binding ----

	async bind(req, ns, name) {
		const res = RESOURCES.pods;
		const body = await readJson(req);
		const old = this.existing(res, ns, name);
		const meta = isObject(body.metadata) ? body.metadata : {};
		const target = isObject(body.target) ? body.target : {};
		if (body.kind !== undefined && body.kind !== 'Binding')
			throw new ApiError(400, 'BadRequest', `the kind "${body.kind}" is not Binding`);
		if (meta.name !== undefined && meta.name !== name)
			throw new ApiError(400, 'BadRequest', 'the name of the binding does not match the pod on the URL');
		if (!target.name || (target.kind !== undefined && target.kind !== 'Node'))
			throw invalid(res, name, 'target', 'Required value: a Node by name');
		const pod = old.obj, bindingRes = { plural: 'pods/binding' };
		if (meta.uid && meta.uid !== pod.metadata.uid)
			throw conflict(bindingRes, name, `Precondition failed: UID in precondition: ${meta.uid}, ` +
				`UID in object meta: ${pod.metadata.uid}`);
		if (pod.metadata.deletionTimestamp)
			throw conflict(bindingRes, name, `pod ${name} is being deleted, cannot be assigned to a host`);
		if (pod.spec.nodeName)
			throw conflict(bindingRes, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
		this.store.commit(res, 'MODIFIED', this.bound(pod, target.name, meta.annotations), old);
		return [201, JSON.stringify(successStatus(201))];
	}

	// ---- eviction (policy/v1): a graceful delete, the pod's own grace
	// unless the Eviction's deleteOptions say another; no disruption
	// budgets here. ----

	async evict(req, ns, name) {
		const res = RESOURCES.pods;
		const body = await readJson(req);
		const old = this.existing(res, ns, name);
		const meta = isObject(body.metadata) ? body.metadata : {};
		if (body.kind !== 'Eviction')
			throw new ApiError(400, 'BadRequest', `the kind "${body.kind}" is not Eviction`);
		if (meta.name !== undefined && meta.name !== name)
			throw new ApiError(400, 'BadRequest', 'the name of the eviction does not match the pod on the URL');
		const options = isObject(body.deleteOptions) ? body.deleteOptions : {};
		let grace = options.gracePeriodSeconds;
		if (grace === undefined || grace === null)
			grace = old.obj.spec.terminationGracePeriodSeconds;
		if (!old.obj.spec.nodeName || Number(grace) === 0)
			this.removeNow(res, old, null);
		else if (!old.obj.metadata.deletionTimestamp)
			this.terminate(res, old, Number(grace));
		return [201, JSON.stringify(successStatus(201))];
	}

	bound(pod, node, annotations) {
		const obj = clone(pod);
		obj.spec.nodeName = node;
		if (isObject(annotations))
			obj.metadata.annotations = { ...(obj.metadata.annotations || {}), ...annotations };
		const conditions = (obj.status.conditions || []).filter((c) => c.type !== 'PodScheduled');
		conditions.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null,
			lastTransitionTime: now() });
		obj.status.conditions = conditions;
		return obj;
	}

	// ---- the scale subresource of deployments: an autoscaling/v1 Scale
	// read, or written (a PUT or merge patch: spec.replicas only) ----

	async scale(req, ns, name) {
		const res = RESOURCES.deployments, old = this.existing(res, ns, name);
		if (req.method === 'GET')
			return [200, JSON.stringify(scaleOf(old.obj))];
		const next = req.method === 'PUT' ? await readJson(req) :
			mergePatch(scaleOf(old.obj), await readMergePatch(req));
		const meta = isObject(next.metadata) ? next.metadata : {};
		const spec = isObject(next.spec) ? next.spec : {};
		if (next.kind !== undefined && next.kind !== 'Scale')
			throw new ApiError(400, 'BadRequest', `the kind "${next.kind}" is not Scale`);
		if (meta.name !== undefined && meta.name !== name)
			throw new ApiError(400, 'BadRequest',
				`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
		const replicas = spec.replicas === undefined ? 0 : spec.replicas;
		checkReplicas({ kind: 'Scale', group: 'autoscaling' }, name, replicas);
		const d = clone(old.obj);
		d.spec.replicas = replicas;
		d.metadata.resourceVersion = meta.resourceVersion;
		const [, json] = this.update(res, old, d, null);
		return [200, JSON.stringify(scaleOf(JSON.parse(json)))];
	}

	// ---- lists ----

	list(res, ns, query) {
		const sel = parseSelectors(res, ns, query);
		const limit = Number(query.get('limit') || 0);
		const token = query.get('continue');
		let rv = this.store.rv, keys = this.store.sortedKeys(res), start = 0;
		if (token) {
			const c = this.parseContinue(token);
			rv = c.rv;
			start = lowerBound(keys, c.start);
		}
		const items = [];
		let i = start;
		for (; i < keys.length && (limit <= 0 || items.length < limit); i++) {
			const v = this.store.get(res, keys[i]);
			if (selects(sel, v.obj))
				items.push(v.itemJson());
		}
		const more = i < keys.length && limit > 0 && this.anyMore(res, keys, i, sel);
		const meta = { resourceVersion: String(rv) };
		if (more) {
			meta.continue = makeContinue(rv, keys[i - 1] + '\u0000');
			if (sel.empty && !ns)
				meta.remainingItemCount = keys.length - i;
		}
		return [200, `{"kind":"${res.kind}List","apiVersion":"${res.apiVersion}","metadata":` +
			`${JSON.stringify(meta)},"items":[${items.join(',')}]}`];
	}

	anyMore(res, keys, from, sel) {
		if (sel.empty && !sel.ns)
			return true;
		for (let i = from; i < keys.length; i++)
			if (selects(sel, this.store.get(res, keys[i]).obj))
				return true;
		return false;
	}

	parseContinue(token) {
		let c;
		try {
			c = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
		} catch (e) {
			c = null;
		}
		if (!c || typeof c.rv !== 'number' || typeof c.start !== 'string')
			throw new ApiError(400, 'BadRequest', 'continue key is not valid: not a token of this server');
		if (c.rv < this.store.compacted)
			throw new ApiError(410, 'Expired', 'The provided continue parameter is too old to ' +
				'display a consistent list result. You can start a new list without the ' +
				'continue parameter.');
		return c;
	}

	// ---- requests that change nothing but the double ----

	control(req, res, url) {
		const store = this.store;
		const route = `${req.method} ${url.pathname}`;
		switch (route) {
		case 'POST /_double/compact':
			store.compact();
			return send(res, 200, { compacted: String(store.compacted) });
		case 'POST /_double/drop-watches': {
			const watchers = store.allWatchers();
			for (const w of watchers)
				w.drop();
			return send(res, 200, { dropped: watchers.length });
		}
		case 'GET /_double/requests':
			return send(res, 200, this.requests);
		case 'DELETE /_double/requests':
			this.requests = [];
			return send(res, 200, {});
		case 'POST /_double/fail':
			return readBody(req).then((text) => send(res, 200, this.addFault(parseJson(text))))
				.catch((e) => sendError(res, e));
		default:
			return sendError(res, new ApiError(404, 'NotFound', `no test control ${route}`));
		}
	}

	addFault(f) {
		if (typeof f.pathPrefix !== 'string' || !Number.isInteger(f.status) || f.status < 400 ||
		    f.status > 599 || !Number.isInteger(f.count) || f.count < 0)
			throw new ApiError(400, 'BadRequest', 'a fault is {"method","pathPrefix","status" ' +
				'(400..599),"count" (0 removes the rule)}');
		const same = (g) => g.pathPrefix === f.pathPrefix && (g.method || '') === (f.method || '');
		this.faults = this.faults.filter((g) => !same(g));
		if (f.count > 0)
			this.faults.push({ method: f.method || '', pathPrefix: f.pathPrefix, status: f.status,
				count: f.count });
		return { faults: this.faults };
	}

	fault(req) {
		const f = this.faults.find((g) => (!g.method || g.method === req.method) &&
			req.url.startsWith(g.pathPrefix));
		if (!f)
			return null;
		if (--f.count === 0)
			this.faults = this.faults.filter((g) => g !== f);
		return new ApiError(f.status, REASONS[f.status] || 'InternalError',
			`injected by the API server double (${f.status} for ${f.pathPrefix})`);
	}
}

function lowerBound(keys, key) {
	let lo = 0, hi = keys.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

function makeContinue(rv, start) {
	return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64');
}

// ---- watches --------------------------------------------------------------------

// One open watch: its response, what it selects, its timers.
class Watch {
	constructor(double, http_, res, sel, query) {
		this.store = double.store;
		this.http = http_;
		this.res = res;
		this.sel = sel;
		this.timers = [];
		this.closed = false;
		const seconds = Number(query.get('timeoutSeconds') || 1800);
		this.timers.push(setTimeout(() => this.end(), seconds * 1000));
		const bookmarks = query.get('allowWatchBookmarks');
		if (bookmarks === 'true' || bookmarks === '1')
			this.timers.push(setInterval(() => this.bookmark(), double.options.bookmarkMs));
		http_.on('close', () => this.close());
	}

	write(line) {
		if (!this.closed)
			this.http.write(line);
	}

	bookmark() {
		this.write(`{"type":"BOOKMARK","object":{"kind":"${this.res.kind}",` +
			`"apiVersion":"${this.res.apiVersion}",` +
			`"metadata":{"resourceVersion":"${this.store.rv}"}}}\n`);
	}

	// timeoutSeconds passed: the stream ends cleanly.
	end() {
		if (!this.closed)
			this.http.end();
		this.close();
	}

	// The connection cut without an end (drop-watches).
	drop() {
		this.close();
		this.http.socket && this.http.socket.destroy();
	}

	close() {
		if (this.closed)
			return;
		this.closed = true;
		for (const t of this.timers)
			clearTimeout(t);
		this.store.unsubscribe(this);
	}
}

function watchError(http_, code, reason, message) {
	http_.write(JSON.stringify({ type: 'ERROR', object: statusObject(code, reason, message) }) + '\n');
	http_.end();
}

Double.prototype.watch = function (res, ns, query, http_) {
	const sel = parseSelectors(res, ns, query);
	const from = query.get('resourceVersion') || '';
	if (from !== '' && from !== '0' && !/^\d+$/.test(from))
		throw new ApiError(400, 'BadRequest', `resourceVersion "${from}" is not a resource version`);
	const rv = Number(from);
	if (from !== '' && from !== '0' && rv > this.store.rv)
		throw new ApiError(504, 'Timeout', `Too large resource version: ${rv}, current: ${this.store.rv}`,
			{ causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
				retryAfterSeconds: 1 });
	http_.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
	http_.flushHeaders();
	if (from !== '' && from !== '0' && rv < this.store.compacted)
		return watchError(http_, 410, 'Expired',
			`too old resource version: ${rv} (${this.store.compacted})`);
	const w = new Watch(this, http_, res, sel, query);
	if (from === '' || from === '0')
		this.replayCurrent(res, w);
	else
		for (const change of this.store.changesAfter(rv))
			if (change.res === res)
				change.deliver(w);
	this.store.subscribe(w);
};

// A watch from "now": every current object it selects, ADDED.
Double.prototype.replayCurrent = function (res, w) {
	for (const v of this.store.objects[res.plural].values())
		if (selects(w.sel, v.obj))
			w.write(`{"type":"ADDED","object":${v.json()}}\n`);
};

// ---- Deployments: their Scale and their controller ----

function scaleOf(d) {
	const m = d.metadata, sel = d.spec.selector.matchLabels;
	return { kind: 'Scale', apiVersion: 'autoscaling/v1',
		metadata: { name: m.name, namespace: m.namespace, uid: m.uid,
			resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
		spec: { replicas: d.spec.replicas },
		status: { replicas: (d.status && d.status.replicas) || 0,
			selector: Object.keys(sel).sort().map((k) => `${k}=${sel[k]}`).join(',') } };
}

// The pod-template-hash of a template: 10 safe characters of its sha256.
function templateHash(template) {
	return safeEncode(crypto.createHash('sha256').update(canonicalJson(template)).digest()
		.subarray(0, 10));
}

// The uid of a deployment's (implied) ReplicaSet for a hash: stable.
function rsUid(d, hash) {
	const h = crypto.createHash('sha256').update(`${d.metadata.uid}/${hash}`).digest('hex');
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

// A new pod of d's template for its ReplicaSet DEPLOY-HASH, controlled by it.
function podFor(d, hash) {
	const t = d.spec.template, meta = isObject(t.metadata) ? t.metadata : {};
	const rs = `${d.metadata.name}-${hash}`;
	const metadata = { generateName: `${rs}-`, labels: { ...meta.labels, 'pod-template-hash': hash },
		ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: rsUid(d, hash),
			controller: true, blockOwnerDeletion: true }] };
	if (isObject(meta.annotations))
		metadata.annotations = clone(meta.annotations);
	return { metadata, spec: clone(t.spec) };
}

// The ownerReference of a pod's controller, or {}.
function controllerRef(pod) {
	const refs = pod.metadata.ownerReferences;
	return (Array.isArray(refs) && refs.find((r) => isObject(r) && r.controller === true)) || {};
}

function podHash(pod) {
	return (pod.metadata.labels || {})['pod-template-hash'] || '';
}

// Whether pod is deployment d's (d's ReplicaSet for its hash controls it).
function ownedBy(d, pod) {
	return pod.metadata.namespace === d.metadata.namespace &&
		controllerRef(pod).uid === rsUid(d, podHash(pod));
}

// Neither being deleted nor ended: what a ReplicaSet counts.
function live(pod) {
	const phase = pod.status && pod.status.phase;
	return !pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

// The deployment controlling pod, or null.
Double.prototype.ownerOf = function (pod) {
	const rs = controllerRef(pod).name, hash = podHash(pod), res = RESOURCES.deployments;
	if (typeof rs !== 'string' || !rs.endsWith(`-${hash}`))
		return null;
	const v = this.store.get(res, keyOf(res, pod.metadata.namespace, rs.slice(0, -hash.length - 1)));
	return v && ownedBy(v.obj, pod) ? v.obj : null;
};

// After every change (the store's hook): a deployment changed, or whose
// pod did, is reconciled; what that changes queues it again, until
// nothing does. A failure is the controller's, not the request's: logged.
Double.prototype.changed = function (change) {
	const obj = change.version.obj;
	const d = change.res === RESOURCES.deployments ? obj :
		change.res === RESOURCES.pods ? this.ownerOf(obj) : null;
	if (d === null)
		return;
	this.pending.set(d.metadata.uid, d);
	if (this.reconciling)
		return;
	this.reconciling = true;
	for (const [uid, next] of this.pending) {
		this.pending.delete(uid);
		try {
			this.reconcile(next);
		} catch (e) {
			process.stderr.write(`apiserver-double: deployment ${next.metadata.name}: ${e.message}\n`);
		}
	}
	this.reconciling = false;
};

// Keeps deployment d's live pods at spec.replicas of its template: those
// of another template deleted, missing ones made, the newest extra ones
// deleted (the newest first); then its status. d gone (its last
// version): all its pods deleted.
Double.prototype.reconcile = function (d) {
	const res = RESOURCES.deployments, pods = RESOURCES.pods, ns = d.metadata.namespace;
	const v = this.store.get(res, keyOf(res, ns, d.metadata.name));
	const current = v && v.obj.metadata.uid === d.metadata.uid ? v : null;
	const hash = current && templateHash(current.obj.spec.template);
	const owned = () => [...this.store.objects.pods.values()].filter((p) => ownedBy(d, p.obj));
	for (const p of owned())
		if (!p.obj.metadata.deletionTimestamp && (!current || (live(p.obj) && podHash(p.obj) !== hash)))
			this.removeObject(pods, p, null);
	if (!current)
		return;
	const want = current.obj.spec.replicas;
	const age = (p) => `${p.obj.metadata.creationTimestamp} ${p.obj.metadata.name}`;
	const mine = owned().filter((p) => live(p.obj)).sort((a, b) => (age(a) < age(b) ? -1 : 1));
	for (let n = mine.length; n < want; n++)
		this.insert(pods, ns, podFor(current.obj, hash));
	for (const p of mine.slice(want).reverse())
		this.removeObject(pods, p, null);
	const count = owned().filter((p) => live(p.obj)).length;
	const status = { observedGeneration: current.obj.metadata.generation, replicas: count || undefined };
	this.update(res, current, { ...clone(current.obj), status }, 'status');
};

// ---- routing --------------------------------------------------------------------

// /api/v1/... and /apis/apps/v1/... → {res, ns, name, sub} or null.
function route(pathname) {
	const p = pathname.split('/').filter((s) => s !== '');
	const base = p[0] === 'api' ? 2 : p[0] === 'apis' ? 3 : 0;
	if (base === 0 || p[base - 1] !== 'v1')
		return null;
	let i = base, ns = '';
	if (p[i] === 'namespaces' && p.length >= i + 3) {
		ns = decodeURIComponent(p[i + 1]);
		i += 2;
	}
	const res = RESOURCES[p[i]];
	if (!res || res.apiVersion !== p.slice(1, base).join('/') || (ns && !res.namespaced) ||
	    p.length > i + 3)
		return null;
	const name = p[i + 1] === undefined ? null : decodeURIComponent(p[i + 1]);
	const sub = p[i + 2] || null;
	if (name !== null && res.namespaced && !ns)
		return null;
	if (sub !== null && !(res.plural === 'pods' && (sub === 'binding' || sub === 'eviction')) &&
	    !(res.plural === 'deployments' && sub === 'scale') && sub !== 'status')
		return null;
	return { res, ns, name, sub };
}

const ALLOWED = {
	collection: ['GET', 'POST'],
	item: ['GET', 'PUT', 'PATCH', 'DELETE'],
	binding: ['POST'],
	eviction: ['POST'],
	status: ['GET', 'PUT', 'PATCH'],
	scale: ['GET', 'PUT', 'PATCH'],
};

Double.prototype.dispatch = async function (req, http_, url) {
	const r = route(url.pathname);
	if (!r)
		throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
	const shape = r.name === null ? 'collection' : r.sub === null ? 'item' : r.sub;
	if (!ALLOWED[shape].includes(req.method))
		throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the ` +
			`requested resource (${req.method} ${url.pathname})`);
	const q = url.searchParams, { res, ns, name, sub } = r;
	if (shape === 'collection' && req.method === 'GET') {
		const w = q.get('watch');
		if (w === 'true' || w === '1')
			return this.watch(res, ns, q, http_);
		return this.list(res, ns, q);
	}
	if (shape === 'collection')
		return this.create(req, res, ns);
	if (shape === 'binding')
		return this.bind(req, ns, name);
	if (shape === 'eviction')
		return this.evict(req, ns, name);
	if (shape === 'scale')
		return this.scale(req, ns, name);
	switch (req.method) {
	case 'GET': return this.read(res, ns, name);
	case 'PUT': return this.replace(req, res, ns, name, sub);
	case 'PATCH': return this.patch(req, res, ns, name, sub);
	default: return this.remove(req, res, ns, name, q);
	}
};

Double.prototype.authorized = function (req) {
	if (this.options.token === null)
		return true;
	return req.headers.authorization === `Bearer ${this.options.token}`;
};

Double.prototype.handle = function (req, http_) {
	const url = new URL(req.url, 'http://double');
	if (url.pathname.startsWith('/_double/'))
		return this.control(req, http_, url);
	if (req.method === 'GET' && ['/healthz', '/readyz', '/livez'].includes(url.pathname)) {
		http_.writeHead(200, { 'Content-Type': 'text/plain' });
		return http_.end('ok');
	}
	this.requests.push({ method: req.method, path: req.url,
		contentType: req.headers['content-type'] || '' });
	const fault = this.fault(req);
	if (fault)
		return sendError(http_, fault);
	if (!this.authorized(req))
		return sendError(http_, new ApiError(401, 'Unauthorized', 'Unauthorized'));
	Promise.resolve()
		.then(() => this.dispatch(req, http_, url))
		.then((answer) => { if (answer) send(http_, answer[0], answer[1]); })
		.catch((e) => {
			if (!(e instanceof ApiError))
				e = new ApiError(500, 'InternalError', `the double failed: ${e.stack || e}`);
			if (http_.headersSent)
				return watchError(http_, e.code, e.reason, e.message);
			sendError(http_, e);
		});
};

// ---- main -----------------------------------------------------------------------

function main() {
	const options = parseArgs(process.argv.slice(2));
	const double = new Double(options);
	const server = http.createServer((req, res) => double.handle(req, res));
	// Connections stay open as long as the client keeps them (as the real
	// server's); watches run for as long as their timeoutSeconds.
	server.keepAliveTimeout = 0;
	server.requestTimeout = 0;
	server.headersTimeout = 60000;
	server.timeout = 0;
	server.on('error', (e) => die(`cannot listen on 127.0.0.1:${options.port}: ${e.message}`));
	server.listen(options.port, '127.0.0.1', () => {
		process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
	});
	for (const signal of ['SIGTERM', 'SIGINT'])
		process.on(signal, () => process.exit(0));
	// A double outliving the test that started it (killed before it could
	// clean up) is never wanted: it exits once its parent is gone.
	const parent = process.ppid;
	setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
}

main();
