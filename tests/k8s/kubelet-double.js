#!/usr/bin/env node
// kubelet-double.js — the kubelet's side of the device plugin API v1beta1,
// played with grpc-js (another gRPC implementation than the plugin's C
// core) in the real kubelet's call order, for tests/k8s/test-device-plugin.sh.
// It follows the kubelet double contract that the grpc-go double
// (kubelet-double-go) follows too:
//
//   kubelet-double.js --dir DIR --resource NAME --allocate N [--timeout-ms 10000]
//                     [--scenario full|preferred|allocate] [--order listed|interleaved]
//
// One JSON object per line on stdout (events: listening, registered, list,
// preferred, allocate, prestart, reregistered, list2, waiting-health,
// unhealthy), diagnostics on stderr. Exit 0: the whole scenario passed;
// 1: a step failed or timed out (one line on stderr says which); 2: bad
// usage. Messages come from src/k8s/deviceplugin/api.proto, kubelet's own.
//
// Beyond the contract (this double's own, for test-e2e.sh): --scenario
// preferred stops after GetPreferredAllocation (registered, list,
// preferred); --scenario allocate after Allocate (and PreStartContainer),
// one container started as a kubelet starts it (test-bill.sh); --order interleaved offers the available ids a unit of each
// device in turn, as the real kubelet's unordered sets may give them,
// rather than in the plugin's list order.
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.join(__dirname, '..', '..', 'src', 'k8s', 'deviceplugin', 'api.proto');
const USAGE = 'usage: kubelet-double.js --dir DIR --resource NAME --allocate N [--timeout-ms MS] ' +
  '[--scenario full|preferred|allocate] [--order listed|interleaved]';

function usage(why) {
  process.stderr.write(`kubelet-double: ${why}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { timeoutMs: 10000, scenario: 'full', order: 'listed' };
  const names = { '--dir': 'dir', '--resource': 'resource', '--allocate': 'allocate',
                  '--timeout-ms': 'timeoutMs', '--scenario': 'scenario', '--order': 'order' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    if (!key) usage(`unknown option ${argv[i]}`);
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    o[key] = argv[i + 1];
  }
  if (!o.dir || !o.resource || o.allocate === undefined)
    usage('--dir, --resource and --allocate are required');
  for (const key of ['allocate', 'timeoutMs']) {
    if (!/^[0-9]+$/.test(String(o[key])) || Number(o[key]) < 1)
      usage(`--${key === 'allocate' ? 'allocate' : 'timeout-ms'} must be a whole number above 0`);
    o[key] = Number(o[key]);
  }
  if (!['full', 'preferred', 'allocate'].includes(o.scenario))
    usage('--scenario is full, preferred or allocate');
  if (!['listed', 'interleaved'].includes(o.order)) usage('--order is listed or interleaved');
  o.dir = path.resolve(o.dir);
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const api = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, {
  keepCase: true, longs: Number, defaults: true,
})).v1beta1;

// One line on stdout, written at once (no buffering across a crash).
function emit(event) {
  fs.writeSync(1, JSON.stringify(event) + '\n');
}

class Failure extends Error {}

function fail(why) {
  throw new Failure(why);
}

// A promise that fails after the scenario's timeout, naming what it waited for.
function timed(promise, what) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    const why = `timed out after ${opts.timeoutMs} ms waiting for ${what}`;
    timer = setTimeout(() => reject(new Failure(why)), opts.timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function unary(client, method, request) {
  return timed(new Promise((resolve, reject) => {
    const deadline = Date.now() + opts.timeoutMs;
    client[method](request, { deadline }, (err, reply) => {
      if (err) reject(new Failure(`${method} failed: ${err.code} ${err.details}`));
      else resolve(reply);
    });
  }), method);
}

function elapsedMs(t0) {
  return Math.round(Number(process.hrtime.bigint() - t0) / 1e6);
}

// The Register handler's checks and its call back to the plugin, as the
// kubelet does before it answers Register.
async function pluginConnected(request) {
  if (request.version !== 'v1beta1') fail(`Register: version "${request.version}", want "v1beta1"`);
  if (request.resource_name !== opts.resource)
    fail(`Register: resource_name "${request.resource_name}", want "${opts.resource}"`);
  const e = request.endpoint;
  if (!e || e.includes('/') || e === '.' || e === '..')
    fail(`Register: endpoint "${e}" is not a plain file name in ${opts.dir}`);
  const client = new api.DevicePlugin(`unix://${path.join(opts.dir, e)}`,
                                      grpc.credentials.createInsecure(),
                                      { 'grpc.default_authority': 'localhost' });
  const options = await unary(client, 'GetDevicePluginOptions', {});
  return { client, endpoint: e, resource: request.resource_name, options };
}

// The Registration service on DIR/kubelet.sock; registered() resolves
// with the next Register's result (after GetDevicePluginOptions).
async function registrationServe() {
  const sock = path.join(opts.dir, 'kubelet.sock');
  let settle;
  const registered = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  registered.catch(() => {});
  fs.rmSync(sock, { force: true });
  const server = new grpc.Server();
  server.addService(api.Registration.service, {
    Register: (call, callback) => {
      pluginConnected(call.request).then((info) => {
        callback(null, {});
        settle.resolve(info);
      }, (err) => {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: err.message });
        settle.reject(err);
      });
    },
  });
  await new Promise((resolve, reject) => {
    server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
      if (err) reject(new Failure(`cannot serve on ${sock}: ${err.message}`));
      else resolve();
    });
  });
  return { server, registered: () => timed(registered, 'Register') };
}

// ListAndWatch with its responses queued; next() waits for one.
function listAndWatch(client) {
  const call = client.ListAndWatch({});
  const queue = [];
  let waiter = null;
  let ended = null;
  const settle = () => {
    if (!waiter) return;
    if (queue.length) waiter.resolve(queue.shift());
    else if (ended) waiter.reject(ended);
    else return;
    waiter = null;
  };
  call.on('data', (m) => { queue.push(m); settle(); });
  call.on('error', (err) => {
    ended = new Failure(`ListAndWatch ended: ${err.code} ${err.details}`);
    settle();
  });
  call.on('end', () => { ended = ended || new Failure('ListAndWatch ended'); settle(); });
  return {
    call,
    next: (what) => timed(new Promise((resolve, reject) => {
      waiter = { resolve, reject };
      settle();
    }), what),
  };
}

function devicesOf(response) {
  return response.devices.map((d) => ({
    id: d.ID,
    health: d.health,
    numa: d.topology ? d.topology.nodes.map((n) => n.ID) : [],
  }));
}

// The ids a unit of each device in turn: "A::0", "B::0", "A::1", "B::1", ...
function interleaved(ids) {
  const byDevice = new Map();
  for (const id of ids) {
    const device = id.split('::')[0];
    if (!byDevice.has(device)) byDevice.set(device, []);
    byDevice.get(device).push(id);
  }
  const lists = [...byDevice.values()], out = [];
  for (let i = 0; out.length < ids.length; i++)
    for (const list of lists) if (i < list.length) out.push(list[i]);
  return out;
}

async function choose(client, options, devices) {
  let available = devices.filter((d) => d.health === 'Healthy').map((d) => d.id);
  if (opts.order === 'interleaved') available = interleaved(available);
  if (!options.get_preferred_allocation_available) {
    if (available.length < opts.allocate)
      fail(`only ${available.length} healthy ids, want ${opts.allocate}`);
    return available.slice(0, opts.allocate);
  }
  const reply = await unary(client, 'GetPreferredAllocation', {
    container_requests: [{ available_deviceIDs: available, must_include_deviceIDs: [],
                           allocation_size: opts.allocate }],
  });
  if (reply.container_responses.length !== 1)
    fail(`GetPreferredAllocation: ${reply.container_responses.length} container responses, want 1`);
  const ids = reply.container_responses[0].deviceIDs;
  emit({ event: 'preferred', ids });
  if (ids.length !== opts.allocate || new Set(ids).size !== ids.length ||
      !ids.every((id) => available.includes(id)))
    fail(`GetPreferredAllocation: ${JSON.stringify(ids)} is not ${opts.allocate} distinct ` +
         'available ids');
  return ids;
}

async function allocate(client, ids) {
  const reply = await unary(client, 'Allocate', { container_requests: [{ devices_ids: ids }] });
  if (reply.container_responses.length !== 1)
    fail(`Allocate: ${reply.container_responses.length} container responses, want 1`);
  const c = reply.container_responses[0];
  emit({
    event: 'allocate',
    envs: c.envs,
    mounts: c.mounts.map((m) => ({ containerPath: m.container_path, hostPath: m.host_path,
                                   readOnly: m.read_only })),
    devices: c.devices.map((d) => ({ containerPath: d.container_path, hostPath: d.host_path,
                                     permissions: d.permissions })),
    annotations: c.annotations,
  });
}

function registeredEvent(info) {
  return {
    event: 'registered', endpoint: info.endpoint, resource: info.resource,
    options: { preStartRequired: info.options.pre_start_required,
               getPreferredAllocationAvailable: info.options.get_preferred_allocation_available },
  };
}

// A kubelet restart: everything closed, every socket in DIR removed, the
// Registration service made again; the plugin must register again.
async function restart(kubelet, info, watch) {
  const t0 = process.hrtime.bigint();
  watch.call.cancel();
  info.client.close();
  kubelet.server.forceShutdown();
  for (const name of fs.readdirSync(opts.dir)) {
    const file = path.join(opts.dir, name);
    if (fs.lstatSync(file).isSocket()) fs.rmSync(file, { force: true });
  }
  const again = await registrationServe();
  const info2 = await again.registered();
  emit({ event: 'reregistered', ms: elapsedMs(t0) });
  return { kubelet: again, info: info2 };
}

async function waitUnhealthy(watch) {
  emit({ event: 'waiting-health' });
  const t0 = process.hrtime.bigint();
  for (;;) {
    const devices = devicesOf(await watch.next('a list with an Unhealthy device'));
    if (devices.some((d) => d.health === 'Unhealthy')) {
      emit({ event: 'unhealthy', ms: elapsedMs(t0), devices });
      return;
    }
  }
}

async function scenario() {
  let kubelet = await registrationServe();
  emit({ event: 'listening' });
  let info = await kubelet.registered();
  emit(registeredEvent(info));
  let watch = listAndWatch(info.client);
  const devices = devicesOf(await watch.next('the first ListAndWatch response'));
  emit({ event: 'list', devices });
  const ids = await choose(info.client, info.options, devices);
  if (opts.scenario === 'preferred') {
    watch.call.cancel();
    info.client.close();
    kubelet.server.forceShutdown();
    return;
  }
  await allocate(info.client, ids);
  if (info.options.pre_start_required) {
    await unary(info.client, 'PreStartContainer', { devices_ids: ids });
    emit({ event: 'prestart' });
  }
  if (opts.scenario === 'allocate') {
    watch.call.cancel();
    info.client.close();
    kubelet.server.forceShutdown();
    return;
  }
  ({ kubelet, info } = await restart(kubelet, info, watch));
  watch = listAndWatch(info.client);
  const again = await watch.next('the first ListAndWatch response after the restart');
  emit({ event: 'list2', devices: devicesOf(again) });
  await waitUnhealthy(watch);
  watch.call.cancel();
  info.client.close();
  kubelet.server.forceShutdown();
}

scenario().then(() => process.exit(0), (err) => {
  process.stderr.write(`kubelet-double: ${err instanceof Failure ? err.message : err.stack}\n`);
  process.exit(1);
});
