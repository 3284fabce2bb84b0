#!/usr/bin/env node
// validate-manifests.js — checks deploy/kubernetes before a cluster sees it.
//
//   node tests/k8s/validate-manifests.js [DIR...]     (DIR: deploy/kubernetes)
//
// Reads DIR/kustomization.yaml and every resource file it lists
// (multi-document YAML), and checks:
//   - each object against the official Kubernetes schemas (kubernetes-models,
//     generated from Kubernetes' OpenAPI): types, required fields, formats;
//     and, since those schemas accept fields they do not know, every field
//     the schema's validator never looked at is reported as unknown (what
//     kubectl's strict field validation refuses);
//   - the KubeSchedulerConfiguration inside its ConfigMap, field by field
//     against the extender keys of kube-scheduler's config/v1 (listed in
//     shared/notes/integration-facts.md §3): kubernetes-models has no schema
//     for it, it is not an API object;
//   - the project's rules: every file of DIR is listed in the kustomization
//     and every listed file exists; every container has resources and an
//     image that the kustomization's images: pins; no RBAC rule with "*";
//     the extender's urlPrefix port is the server's --extender-port (the
//     brief's --tcp: see checkServer); the DaemonSet mounts the kubelet's
//     device-plugin folder where --device-plugin-dir says; and the like
//     (each check below says what it protects);
//   - DIR/Dockerfile and the repository's .dockerignore, for what can be
//     checked without building (no container engine here).
// Exit 0 when all is good; otherwise every problem on a line of its own
// ("FILE: OBJECT: what is wrong") and exit 1; 2 for bad usage. Given
// several folders, it checks each on its own (see main).
// tests/k8s/test-manifests.sh runs it on the real folder and on broken
// copies. Node 18 or later (kubernetes-models is an ES module: import()).
'use strict';

const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');
const YAML = require('yaml');

// ---- the contract the manifests implement (brief, src/k8s/names.h) ----
const NAMESPACE = 'gpupool-system';
const SCHEDULER_NAME = 'gpupool-scheduler';
const RESOURCE = 'gpupool.io/gpu';
const KUBELET_PLUGIN_DIR = '/var/lib/kubelet/device-plugins';
// `gpupool server --kubernetes --extender-port PORT` (src/k8s/kube-server.h).
const EXTENDER_PORT_DEFAULT = 8787;
// Where both programs read the key placements are sealed with (seal.h),
// and the Secret it comes from.
const PLACEMENT_KEY_DEFAULT = '/etc/gpupool/placement-key/key';
const PLACEMENT_KEY_SECRET = 'gpupool-placement-key';
const NODE_DEFAULTS = {
  'device-plugin-dir': KUBELET_PLUGIN_DIR,
  'run-dir': '/run/gpupool',
  'shim-host-path': '/var/lib/gpupool/lib/libgpushare.so',
  'metrics-listen': '0.0.0.0:9400',
};
// Files of the folder that are not resources.
const NOT_RESOURCES = ['kustomization.yaml', 'Dockerfile'];
// Objects the cluster has already, which bindings may name.
const BUILTIN_ROLES = [
  'ClusterRole/system:kube-scheduler',
  'ClusterRole/system:volume-scheduler',
  'Role/kube-system/extension-apiserver-authentication-reader',
];
const CLUSTER_SCOPED = ['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass',
  'RuntimeClass', 'StorageClass', 'PersistentVolume', 'CustomResourceDefinition'];
const POD_TEMPLATE_KINDS = ['Deployment', 'DaemonSet', 'StatefulSet', 'ReplicaSet', 'Job'];
// Kustomization fields (kustomize v5), to catch a misspelt one.
const KUSTOMIZATION_KEYS = ['apiVersion', 'kind', 'metadata', 'namespace', 'resources', 'images',
  'transformers', 'generators', 'labels', 'commonLabels', 'commonAnnotations', 'patches',
  'configMapGenerator', 'secretGenerator', 'generatorOptions', 'replicas', 'components',
  'namePrefix', 'nameSuffix', 'replacements', 'buildMetadata', 'sortOptions', 'openapi',
  'crds', 'validators', 'helmCharts', 'helmGlobals'];
const IMAGE_KEYS = ['name', 'newName', 'newTag', 'digest', 'tagSuffix'];

// kube-scheduler config/v1 (integration-facts.md §3): the keys an extender
// may have, and the values the brief fixes for ours.
const EXTENDER_KEYS = ['urlPrefix', 'filterVerb', 'preemptVerb', 'prioritizeVerb', 'weight',
  'bindVerb', 'enableHTTPS', 'tlsConfig', 'httpTimeout', 'nodeCacheCapable',
  'managedResources', 'ignorable'];
// The filter answers one node, held for its bind: no prioritize (kube-scheduler
// takes a single feasible node without scoring), so no weight either.
const EXTENDER_WANT = {
  filterVerb: 'filter', bindVerb: 'bind',
  nodeCacheCapable: true, enableHTTPS: false, httpTimeout: '30s',
  managedResources: [{ name: RESOURCE, ignoredByScheduler: false }], ignorable: false,
};
const SCHEDULER_CONFIG_KEYS = ['apiVersion', 'kind', 'parallelism', 'leaderElection',
  'clientConnection', 'healthzBindAddress', 'metricsBindAddress', 'enableProfiling',
  'enableContentionProfiling', 'percentageOfNodesToScore', 'podInitialBackoffSeconds',
  'podMaxBackoffSeconds', 'profiles', 'extenders', 'delayCacheUntilActive'];
const LEADER_ELECTION_KEYS = ['leaderElect', 'leaseDuration', 'renewDeadline', 'retryPeriod',
  'resourceLock', 'resourceName', 'resourceNamespace'];
const DURATION = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$/;

// The image's runtime libraries (the -dev packages' runtime halves).
const RUNTIME_LIBS = ['libjansson4', 'libsqlite3-0', 'libmicrohttpd12', 'libcurl4',
  'libyaml-0-2', 'libcsv3', 'libnettle8', 'libgrpc29', 'libprotobuf-c1'];
const DEBIAN_12 = /^debian:(12|bookworm)([.-][A-Za-z0-9.-]+)?$/;

// ---- problems ----------------------------------------------------------
const problems = [];
function problem(file, object, what) {
  problems.push(`${file}: ${object}: ${what}`);
}
function id(obj) {
  const kind = obj && obj.kind ? obj.kind : '(no kind)';
  const name = obj && obj.metadata && obj.metadata.name ? obj.metadata.name : '(no name)';
  return `${kind}/${name}`;
}
function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
function list(v) {
  return Array.isArray(v) ? v : [];
}
function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---- YAML ----------------------------------------------------------------
// Every document of a file, as plain objects; YAML errors are problems.
function readDocuments(file, shown) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    problem(shown, '-', `cannot read it: ${e.message}`);
    return [];
  }
  const docs = [];
  YAML.parseAllDocuments(text).forEach((doc, i) => {
    for (const e of doc.errors)
      problem(shown, `document ${i + 1}`, `YAML: ${e.message.split('\n')[0]}`);
    if (doc.errors.length === 0) {
      const value = doc.toJS();
      if (value !== null && value !== undefined)
        docs.push(value);
    }
  });
  return docs;
}

// ---- the official schemas ----------------------------------------------
// The kubernetes-models class for apiVersion/kind, or null.
async function modelClass(apiVersion, kind) {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' ||
      !/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion) || !/^[A-Z][A-Za-z0-9]*$/.test(kind))
    return null;
  try {
    const mod = await import(`kubernetes-models/${apiVersion}/${kind}`);
    return mod[kind] || null;
  } catch (e) {
    return null;
  }
}

// Wraps value so that every property the validator reads is recorded; each
// object met is pushed on seen as {path, keys, read}.
function tracked(value, where, seen) {
  if (value === null || typeof value !== 'object')
    return value;
  const rec = { path: where, keys: Object.keys(value), read: new Set(),
    array: Array.isArray(value) };
  seen.push(rec);
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== 'string')
        return v;
      rec.read.add(key);
      if (v === null || typeof v !== 'object')
        return v;
      if (!children.has(key))
        children.set(key, tracked(v, `${where}/${key}`, seen));
      return children.get(key);
    },
    has(target, key) {
      if (typeof key === 'string')
        rec.read.add(key);
      return Reflect.has(target, key);
    },
  });
}

// Schema errors and unknown fields of one object.
async function checkSchema(shown, obj) {
  const Model = await modelClass(obj.apiVersion, obj.kind);
  if (!Model) {
    problem(shown, id(obj), `no schema for apiVersion ${obj.apiVersion} kind ${obj.kind} ` +
      '(a misspelt apiVersion or kind?)');
    return;
  }
  const seen = [];
  try {
    Model.prototype.validate.call(tracked(obj, '', seen));
  } catch (e) {
    for (const msg of String(e.message).split(/, (?=data[/ ])/))
      problem(shown, id(obj), `schema: ${msg.replace(/^data/, '') || '/'}`);
    return;
  }
  for (const rec of seen) {
    if (rec.array)
      continue;
    for (const key of rec.keys)
      if (!rec.read.has(key))
        problem(shown, id(obj), `unknown field ${rec.path}/${key} (not in the ` +
          `${obj.apiVersion} ${obj.kind} schema: kubectl refuses it)`);
  }
}

// ---- the kustomization ---------------------------------------------------
// {namespace, resources, images, restores: {"Kind/name": namespace}}
function readKustomization(dir, shown) {
  const file = path.join(dir, 'kustomization.yaml');
  const k = { namespace: null, resources: [], images: [], transformerFiles: [], restores: {} };
  if (!fs.existsSync(file)) {
    problem(shown, '-', 'no kustomization.yaml: kubectl apply -k needs it');
    return k;
  }
  const docs = readDocuments(file, shown);
  if (docs.length !== 1 || !isObject(docs[0])) {
    problem(shown, '-', 'must hold exactly one Kustomization object');
    return k;
  }
  const doc = docs[0];
  if (doc.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || doc.kind !== 'Kustomization')
    problem(shown, 'Kustomization', 'apiVersion/kind must be kustomize.config.k8s.io/v1beta1 ' +
      `Kustomization, not ${doc.apiVersion} ${doc.kind}`);
  for (const key of Object.keys(doc))
    if (!KUSTOMIZATION_KEYS.includes(key))
      problem(shown, 'Kustomization', `unknown field ${key}`);
  if (doc.namespace !== NAMESPACE)
    problem(shown, 'Kustomization', `namespace is ${doc.namespace}, want ${NAMESPACE}`);
  k.namespace = doc.namespace;
  k.resources = readResourceList(shown, doc.resources);
  k.images = readImages(shown, doc.images);
  readTransformers(shown, doc.transformers, k);
  return k;
}

function readResourceList(shown, resources) {
  if (!Array.isArray(resources) || resources.length === 0) {
    problem(shown, 'Kustomization', 'resources: must list the manifest files');
    return [];
  }
  const names = [];
  for (const r of resources) {
    if (typeof r !== 'string' || r.includes('/') || r.startsWith('.'))
      problem(shown, 'Kustomization', `resources: ${JSON.stringify(r)} is not a file of this ` +
        'folder (everything gpupool deploys lives here)');
    else if (names.includes(r))
      problem(shown, 'Kustomization', `resources: ${r} is listed twice`);
    else
      names.push(r);
  }
  return names;
}

function readImages(shown, images) {
  const out = [];
  for (const [i, img] of list(images).entries()) {
    const where = `images[${i}]`;
    if (!isObject(img) || typeof img.name !== 'string') {
      problem(shown, 'Kustomization', `${where}: needs a name`);
      continue;
    }
    for (const key of Object.keys(img))
      if (!IMAGE_KEYS.includes(key))
        problem(shown, 'Kustomization', `${where} (${img.name}): unknown field ${key}`);
    if (!img.newTag && !img.digest)
      problem(shown, 'Kustomization', `${where} (${img.name}): no newTag or digest: pin it`);
    else if (img.newTag === 'latest')
      problem(shown, 'Kustomization', `${where} (${img.name}): newTag latest pins nothing`);
    if (out.some((o) => o.name === img.name))
      problem(shown, 'Kustomization', `${where}: ${img.name} is listed twice`);
    out.push(img);
  }
  if (out.length === 0)
    problem(shown, 'Kustomization', 'images: must pin every image the containers use');
  return out;
}

// Inline transformer configurations; PatchTransformers that set
// /metadata/namespace are recorded (they undo `namespace:` for one object).
function readTransformers(shown, transformers, k) {
  for (const [i, t] of list(transformers).entries()) {
    const where = `transformers[${i}]`;
    if (typeof t === 'string' && !t.includes('\n')) {
      k.transformerFiles.push(t);
      continue;
    }
    let cfg;
    try {
      cfg = YAML.parse(String(t));
    } catch (e) {
      problem(shown, 'Kustomization', `${where}: YAML: ${e.message.split('\n')[0]}`);
      continue;
    }
    if (!isObject(cfg) || cfg.apiVersion !== 'builtin' || typeof cfg.kind !== 'string') {
      problem(shown, 'Kustomization', `${where}: not a builtin transformer configuration`);
      continue;
    }
    if (cfg.kind === 'PatchTransformer')
      readNamespacePatch(shown, where, cfg, k);
  }
}

function readNamespacePatch(shown, where, cfg, k) {
  const target = cfg.target || {};
  let ops;
  try {
    ops = YAML.parse(String(cfg.patch || ''));
  } catch (e) {
    problem(shown, 'Kustomization', `${where}: patch: YAML: ${e.message.split('\n')[0]}`);
    return;
  }
  for (const op of list(ops))
    if (isObject(op) && ['add', 'replace'].includes(op.op) && op.path === '/metadata/namespace')
      k.restores[`${target.kind}/${target.name}`] = op.value;
}

// Every file of the folder is listed, and every listed file is there.
function checkFolder(dir, shownDir, k) {
  const listed = new Set([...k.resources, ...k.transformerFiles]);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const shown = `${shownDir}/${entry.name}`;
    if (entry.isDirectory())
      problem(shown, '-', 'a folder: the kustomization takes files of this folder only');
    else if (!NOT_RESOURCES.includes(entry.name) && !listed.has(entry.name))
      problem(shown, '-', 'not listed in kustomization.yaml resources: list it or remove it');
  }
  for (const name of listed)
    if (!fs.existsSync(path.join(dir, name)))
      problem(`${shownDir}/${name}`, '-', 'listed in kustomization.yaml but missing');
}

// ---- objects -------------------------------------------------------------
function checkMetadata(shown, obj, k, names) {
  const md = obj.metadata || {};
  if (typeof md.name !== 'string' || !/^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$/.test(md.name))
    problem(shown, id(obj), 'metadata.name missing or not a valid name');
  const cluster = CLUSTER_SCOPED.includes(obj.kind);
  if (cluster && md.namespace)
    problem(shown, id(obj), `a ${obj.kind} has no namespace (metadata.namespace ${md.namespace})`);
  if (!cluster && md.namespace && md.namespace !== NAMESPACE &&
      k.restores[id(obj)] !== md.namespace)
    problem(shown, id(obj), `metadata.namespace ${md.namespace}: the kustomization's ` +
      `namespace: moves it to ${NAMESPACE} unless a transformer puts it back`);
  const key = `${obj.kind}/${cluster ? '' : namespaceOf(obj, k)}/${md.name}`;
  if (names.has(key))
    problem(shown, id(obj), `defined twice (also in ${names.get(key)})`);
  names.set(key, shown);
}

// Where the object ends up once kustomized.
function namespaceOf(obj, k) {
  return k.restores[id(obj)] || NAMESPACE;
}

function podSpecOf(obj) {
  if (POD_TEMPLATE_KINDS.includes(obj.kind))
    return obj.spec && obj.spec.template && obj.spec.template.spec;
  if (obj.kind === 'Pod')
    return obj.spec;
  return null;
}

function containersOf(pod) {
  return [...list(pod.initContainers), ...list(pod.containers)];
}

// "reg:5000/a/b:tag" -> {name: "reg:5000/a/b", tag: "tag"}
function splitImage(image) {
  const at = image.indexOf('@');
  if (at >= 0)
    return { name: image.slice(0, at), tag: null, digest: image.slice(at + 1) };
  const colon = image.lastIndexOf(':');
  if (colon > image.lastIndexOf('/'))
    return { name: image.slice(0, colon), tag: image.slice(colon + 1) };
  return { name: image, tag: null };
}

function checkContainer(shown, obj, c, k, pod) {
  const where = `${id(obj)}: container ${c.name}`;
  const r = c.resources;
  if (!isObject(r) || Object.keys(r).length === 0)
    problem(shown, where, 'no resources block: give requests (cpu, memory) and a memory limit');
  else
    for (const [part, key] of [['requests', 'cpu'], ['requests', 'memory'], ['limits', 'memory']])
      if (!isObject(r[part]) || r[part][key] === undefined)
        problem(shown, where, `resources.${part}.${key} missing`);
  checkImage(shown, where, c.image, k);
  const sc = c.securityContext || {};
  if (sc.allowPrivilegeEscalation !== false)
    problem(shown, where, 'securityContext.allowPrivilegeEscalation must be false');
  if (sc.privileged === true)
    problem(shown, where, 'privileged: no gpupool container needs it');
  if (!sc.capabilities || !list(sc.capabilities.drop).includes('ALL'))
    problem(shown, where, 'securityContext.capabilities.drop must include ALL');
  const volumes = list(pod.volumes).map((v) => v.name);
  for (const m of list(c.volumeMounts))
    if (!volumes.includes(m.name))
      problem(shown, where, `mounts volume ${m.name}, which the pod does not define`);
}

function checkImage(shown, where, image, k) {
  if (typeof image !== 'string' || image === '') {
    problem(shown, where, 'no image');
    return;
  }
  const img = splitImage(image);
  const pin = k.images.find((i) => i.name === img.name);
  if (!pin)
    problem(shown, where, `image ${img.name} is not in kustomization.yaml images: ` +
      'add it, so that it is pinned and can be retargeted');
  else if (!img.tag && !img.digest)
    problem(shown, where, `image ${image} has no tag`);
  else if (pin.newTag && img.tag !== pin.newTag)
    problem(shown, where, `image tag ${img.tag} differs from the kustomization's newTag ` +
      `${pin.newTag}`);
}

function checkWorkload(shown, obj, k, all) {
  const pod = podSpecOf(obj);
  if (!isObject(pod))
    return;
  for (const c of containersOf(pod))
    checkContainer(shown, obj, c, k, pod);
  const sa = pod.serviceAccountName;
  if (!sa || !all.some((o) => o.obj.kind === 'ServiceAccount' && o.obj.metadata.name === sa))
    problem(shown, id(obj), `serviceAccountName ${sa} is not a ServiceAccount of these manifests`);
}

// RBAC: no "*", and bindings name roles and accounts that exist.
function checkRules(shown, obj) {
  for (const [i, rule] of list(obj.rules).entries())
    for (const field of ['verbs', 'resources', 'apiGroups', 'resourceNames', 'nonResourceURLs'])
      if (list(rule[field]).some((v) => typeof v === 'string' && v.includes('*')))
        problem(shown, id(obj), `rules[${i}]: "*" in ${field}: name exactly what it needs`);
}

function checkBinding(shown, obj, k, all) {
  const ref = obj.roleRef || {};
  const ns = namespaceOf(obj, k);
  const key = ref.kind === 'Role' ? `Role/${ns}/${ref.name}` : `${ref.kind}/${ref.name}`;
  const defined = all.some((o) => o.obj.kind === ref.kind && o.obj.metadata.name === ref.name &&
    (ref.kind !== 'Role' || namespaceOf(o.obj, k) === ns));
  if (!defined && !BUILTIN_ROLES.includes(key))
    problem(shown, id(obj), `roleRef ${key} is neither in these manifests nor a built-in role`);
  for (const s of list(obj.subjects)) {
    if (s.kind !== 'ServiceAccount')
      continue;
    if (s.namespace !== NAMESPACE)
      problem(shown, id(obj), `subject ServiceAccount ${s.name}: namespace must be ${NAMESPACE}` +
        ' (kustomize does not fill it in)');
    if (!all.some((o) => o.obj.kind === 'ServiceAccount' && o.obj.metadata.name === s.name))
      problem(shown, id(obj), `subject ServiceAccount ${s.name} is not in these manifests`);
  }
}

// A Service selects pods of these manifests, on ports they declare.
function checkService(shown, obj, all) {
  const spec = obj.spec || {};
  const selector = spec.selector || {};
  const pods = all.map((o) => o.obj).filter((o) => {
    const labels = (((o.spec || {}).template || {}).metadata || {}).labels || {};
    return podSpecOf(o) && Object.keys(selector).length > 0 &&
      Object.entries(selector).every(([key, v]) => labels[key] === v);
  });
  if (pods.length === 0) {
    problem(shown, id(obj), 'its selector matches no pod template of these manifests');
    return;
  }
  const ports = pods.flatMap((o) => list(podSpecOf(o).containers)).flatMap((c) => list(c.ports));
  for (const p of list(spec.ports)) {
    const target = p.targetPort === undefined ? p.port : p.targetPort;
    if (!ports.some((cp) => cp.name === target || cp.containerPort === target))
      problem(shown, id(obj), `port ${p.name}: targetPort ${target} is no port of its pods`);
  }
  const ann = (obj.metadata || {}).annotations || {};
  if (ann['prometheus.io/port'] !== undefined &&
      !list(spec.ports).some((p) => String(p.port) === ann['prometheus.io/port']))
    problem(shown, id(obj), `prometheus.io/port ${ann['prometheus.io/port']} is not one of ` +
      'its ports');
}

// ---- command lines -------------------------------------------------------
// {flag: value} from ["server", "--tcp", "8787", "--x=y", "--bool"].
function flags(args) {
  const out = {};
  for (let i = 0; i < args.length; i++) {
    const a = String(args[i]);
    if (!a.startsWith('--'))
      continue;
    const eq = a.indexOf('=');
    if (eq > 0)
      out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < args.length && !String(args[i + 1]).startsWith('--'))
      out[a.slice(2)] = String(args[++i]);
    else
      out[a.slice(2)] = true;
  }
  return out;
}

function commandOf(c) {
  return [...list(c.command), ...list(c.args)].map(String);
}

// The containers running `gpupool SUBCOMMAND`, with their pod and object.
function gpupoolContainers(all, subcommand) {
  const found = [];
  for (const { obj, shown } of all) {
    const pod = podSpecOf(obj);
    if (!isObject(pod))
      continue;
    for (const c of list(pod.containers))
      if (list(c.args)[0] === subcommand && splitImage(String(c.image)).name.endsWith('gpupool'))
        found.push({ obj, shown, pod, c, flags: flags(list(c.args)) });
  }
  return found;
}

// The volume behind the mount of container c at mountPath (or null).
function volumeAt(pod, c, mountPath) {
  const norm = (p) => String(p).replace(/\/+$/, '');
  const m = list(c.volumeMounts).find((vm) => norm(vm.mountPath) === norm(mountPath));
  if (!m)
    return null;
  const v = list(pod.volumes).find((vol) => vol.name === m.name);
  return v ? { mount: m, volume: v } : null;
}

// ---- the scheduler configuration ------------------------------------------
function findSchedulerConfigs(all) {
  const found = [];
  for (const { obj, shown } of all) {
    if (obj.kind !== 'ConfigMap')
      continue;
    for (const [key, text] of Object.entries(obj.data || {})) {
      let cfg;
      try {
        cfg = YAML.parse(String(text));
      } catch (e) {
        continue;
      }
      if (isObject(cfg) && cfg.kind === 'KubeSchedulerConfiguration')
        found.push({ cm: obj, shown, key, cfg });
    }
  }
  return found;
}

function checkSchedulerConfig(sc, all) {
  const { cfg, shown } = sc;
  const where = `${id(sc.cm)}: ${sc.key}`;
  if (cfg.apiVersion !== 'kubescheduler.config.k8s.io/v1')
    problem(shown, where, `apiVersion ${cfg.apiVersion}, want kubescheduler.config.k8s.io/v1`);
  for (const key of Object.keys(cfg))
    if (!SCHEDULER_CONFIG_KEYS.includes(key))
      problem(shown, where, `unknown field ${key}`);
  checkLeaderElection(shown, where, cfg.leaderElection, all);
  const profiles = list(cfg.profiles);
  if (profiles.length !== 1 || profiles[0].schedulerName !== SCHEDULER_NAME)
    problem(shown, where, `profiles: want one, schedulerName ${SCHEDULER_NAME}`);
  const extenders = list(cfg.extenders);
  if (extenders.length !== 1) {
    problem(shown, where, `extenders: want exactly one (gpupool's), found ${extenders.length}`);
    return;
  }
  checkExtender(shown, `${where}: extenders[0]`, extenders[0]);
}

function checkLeaderElection(shown, where, le, all) {
  if (!isObject(le) || le.leaderElect !== true) {
    problem(shown, where, 'leaderElection.leaderElect must be true');
    return;
  }
  for (const key of Object.keys(le))
    if (!LEADER_ELECTION_KEYS.includes(key))
      problem(shown, where, `leaderElection: unknown field ${key}`);
  if (typeof le.resourceName !== 'string' || le.resourceName === 'kube-scheduler')
    problem(shown, where, 'leaderElection.resourceName: a lease of its own, not the default ' +
      "scheduler's kube-scheduler");
  if (le.resourceNamespace !== NAMESPACE)
    problem(shown, where, `leaderElection.resourceNamespace must be ${NAMESPACE}`);
  if (le.resourceLock !== undefined && le.resourceLock !== 'leases')
    problem(shown, where, 'leaderElection.resourceLock must be leases');
  const granted = all.some(({ obj }) => obj.kind === 'Role' && list(obj.rules).some((r) =>
    list(r.apiGroups).includes('coordination.k8s.io') && list(r.resources).includes('leases') &&
    list(r.resourceNames).includes(le.resourceName) &&
    ['get', 'update'].every((v) => list(r.verbs).includes(v))));
  if (!granted)
    problem(shown, where, 'no Role lets kube-scheduler get and update the Lease ' +
      le.resourceName);
}

function checkExtender(shown, where, ext) {
  if (!isObject(ext)) {
    problem(shown, where, 'not an object');
    return;
  }
  for (const key of Object.keys(ext))
    if (!EXTENDER_KEYS.includes(key))
      problem(shown, where, `unknown field ${key} (kube-scheduler's Extender has: ` +
        `${EXTENDER_KEYS.join(', ')})`);
  for (const [key, want] of Object.entries(EXTENDER_WANT))
    if (!same(ext[key], want))
      problem(shown, where, `${key} is ${JSON.stringify(ext[key])}, want ${JSON.stringify(want)}`);
  for (const key of ['prioritizeVerb', 'weight'])
    if (key in ext)
      problem(shown, where, `${key} is set: the filter answers the one node it holds, so ` +
        'nothing is left to prioritize');
  if (typeof ext.httpTimeout === 'string' && !DURATION.test(ext.httpTimeout))
    problem(shown, where, `httpTimeout ${ext.httpTimeout} is not a duration (30s, 1m)`);
  let url = null;
  try {
    url = new URL(ext.urlPrefix);
  } catch (e) {
    problem(shown, where, `urlPrefix ${ext.urlPrefix} is not a URL`);
    return;
  }
  if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(url.hostname))
    problem(shown, where, `urlPrefix ${ext.urlPrefix}: want http on 127.0.0.1 (the extender is ` +
      'in the same pod, and unreachable from outside it)');
  if (url.pathname.replace(/\/+$/, '') !== '/extender')
    problem(shown, where, `urlPrefix ${ext.urlPrefix}: the path must be /extender`);
}

// The server's pod: its flags agree with the scheduler configuration, and
// its kube-scheduler reads that configuration. The extender listens on
// 127.0.0.1:--extender-port (default 8787), a listener of its own beside
// the API's --tcp; the two may not share a port.
function checkServer(all, scheds) {
  const servers = gpupoolContainers(all, 'server');
  if (servers.length !== 1) {
    problem('deploy/kubernetes', '-', `want one container running \`gpupool server\`, found ` +
      `${servers.length}`);
    return;
  }
  const s = servers[0];
  const where = `${id(s.obj)}: container ${s.c.name}`;
  if (s.obj.kind !== 'Deployment' || s.obj.spec.replicas !== 1 ||
      (s.obj.spec.strategy || {}).type !== 'Recreate')
    problem(s.shown, id(s.obj), 'the server runs as a Deployment of one replica, ' +
      'strategy Recreate');
  if (s.flags.kubernetes !== true)
    problem(s.shown, where, '`gpupool server` needs --kubernetes here');
  checkPlacementKey(s, where);
  const db = s.flags.db;
  const data = typeof db === 'string' && volumeAt(s.pod, s.c, path.posix.dirname(db));
  if (!data || !data.volume.persistentVolumeClaim)
    problem(s.shown, where, `--db ${db}: its folder must be a PersistentVolumeClaim mount`);
  if (scheds.length !== 1)
    return;
  const sc = scheds[0];
  const ext = list(sc.cfg.extenders)[0] || {};
  let port = null;
  try {
    port = new URL(ext.urlPrefix).port || '80';
  } catch (e) {
    port = null;
  }
  const listen = String(s.flags['extender-port'] || EXTENDER_PORT_DEFAULT);
  if (port !== null && listen !== port)
    problem(s.shown, where, `the extenders' urlPrefix port ${port} (${sc.shown}) is not the ` +
      `server's --extender-port ${listen}`);
  if (s.flags.tcp !== undefined && String(s.flags.tcp) === listen)
    problem(s.shown, where, `--tcp ${s.flags.tcp} is the extender's port too: two listeners ` +
      'on one port');
  const profile = list(sc.cfg.profiles)[0] || {};
  if (s.flags['scheduler-name'] !== profile.schedulerName)
    problem(s.shown, where, `--scheduler-name ${s.flags['scheduler-name']} is not the ` +
      `profile's schedulerName ${profile.schedulerName}`);
  checkSchedulerContainer(s, sc);
}

// The server seals placements and the node programs check the seals with
// the same key: both mount the one Secret where --placement-key reads it.
function checkPlacementKey(x, where) {
  const key = String(x.flags['placement-key'] || PLACEMENT_KEY_DEFAULT);
  const v = volumeAt(x.pod, x.c, path.posix.dirname(key));
  if (!v || !v.volume.secret || v.volume.secret.secretName !== PLACEMENT_KEY_SECRET)
    problem(x.shown, where, `--placement-key ${key}: mount Secret ${PLACEMENT_KEY_SECRET} ` +
      `at ${path.posix.dirname(key)} (pods could forge their placements without it)`);
}

function checkSchedulerContainer(s, sc) {
  const kube = list(s.pod.containers).find((c) =>
    splitImage(String(c.image)).name.endsWith('/kube-scheduler'));
  if (!kube) {
    problem(s.shown, id(s.obj), 'no kube-scheduler container beside the server: the extender ' +
      'listens on 127.0.0.1, only a container of the same pod reaches it');
    return;
  }
  const where = `${id(s.obj)}: container ${kube.name}`;
  const config = flags(commandOf(kube)).config;
  const v = typeof config === 'string' && volumeAt(s.pod, kube, path.posix.dirname(config));
  const ok = v && v.volume.configMap && v.volume.configMap.name === sc.cm.metadata.name &&
    path.posix.basename(config) === sc.key && !v.volume.configMap.items;
  if (!ok)
    problem(s.shown, where, `--config ${config} is not key ${sc.key} of ConfigMap ` +
      `${sc.cm.metadata.name} mounted in this container`);
}

// The node program: its folders are the host's, where the kubelet and the
// sliced containers find them.
function checkNode(all) {
  const nodes = gpupoolContainers(all, 'node');
  if (nodes.length !== 1) {
    problem('deploy/kubernetes', '-', `want one container running \`gpupool node\`, found ` +
      `${nodes.length}`);
    return;
  }
  const n = nodes[0];
  const where = `${id(n.obj)}: container ${n.c.name}`;
  const f = { ...NODE_DEFAULTS, ...n.flags };
  if (n.obj.kind !== 'DaemonSet')
    problem(n.shown, id(n.obj), '`gpupool node` runs as a DaemonSet');
  if (n.flags.kubernetes !== true)
    problem(n.shown, where, '`gpupool node` needs --kubernetes here');
  checkHostMount(n, where, f['device-plugin-dir'], KUBELET_PLUGIN_DIR, '--device-plugin-dir');
  checkHostMount(n, where, f['run-dir'], f['run-dir'], '--run-dir');
  checkShimInstall(n, where, f['shim-host-path']);
  checkNodeName(n, where);
  checkPlacementKey(n, where);
  const port = Number(String(f['metrics-listen']).split(':').pop());
  if (!list(n.c.ports).some((p) => p.name === 'metrics' && p.containerPort === port))
    problem(n.shown, where, `--metrics-listen ${f['metrics-listen']}: no containerPort ` +
      `"metrics" ${port}`);
  checkNodePlacement(n);
}

function checkHostMount(n, where, dir, hostPath, flag) {
  const v = volumeAt(n.pod, n.c, dir);
  if (!v || !v.volume.hostPath || v.volume.hostPath.path.replace(/\/+$/, '') !== hostPath)
    problem(n.shown, where, `${flag} ${dir}: mount the host's ${hostPath} there`);
  else if (v.mount.readOnly)
    problem(n.shown, where, `${flag} ${dir}: the mount must be writable`);
}

function checkShimInstall(n, where, shim) {
  const dir = path.posix.dirname(shim);
  const vol = list(n.pod.volumes).find((v) => v.hostPath && v.hostPath.path === dir);
  const init = vol && list(n.pod.initContainers).find((c) =>
    list(c.volumeMounts).some((m) => m.name === vol.name && !m.readOnly));
  if (!init)
    problem(n.shown, where, `--shim-host-path ${shim}: no init container writes the host's ${dir}`);
}

function checkNodeName(n, where) {
  const env = list(n.c.env).find((e) => e.name === 'NODE_NAME');
  const fromSpec = env && env.valueFrom && env.valueFrom.fieldRef &&
    env.valueFrom.fieldRef.fieldPath === 'spec.nodeName';
  const given = n.flags['node-name'];
  if ((given === undefined || given === '$(NODE_NAME)') && !fromSpec)
    problem(n.shown, where, 'NODE_NAME must come from the downward API (fieldRef spec.nodeName)');
}

function checkNodePlacement(n) {
  if ((n.pod.nodeSelector || {})['gpupool.io/accelerator'] !== 'true')
    problem(n.shown, id(n.obj), 'nodeSelector gpupool.io/accelerator: "true" missing');
  if (n.pod.priorityClassName !== 'system-node-critical')
    problem(n.shown, id(n.obj), 'priorityClassName must be system-node-critical');
  if (!list(n.pod.tolerations).some((t) => t.key === 'nvidia.com/gpu'))
    problem(n.shown, id(n.obj), 'no toleration for the nvidia.com/gpu taint');
}

// ---- the Dockerfile --------------------------------------------------------
// [{stage: {from, name}, op, args}] with continuation lines joined.
function dockerInstructions(text) {
  const out = [];
  let stage = null;
  let pending = '';
  for (const raw of text.split('\n')) {
    if (pending === '' && /^\s*#/.test(raw))
      continue;
    if (/\\\s*$/.test(raw)) {
      pending += raw.replace(/\\\s*$/, ' ');
      continue;
    }
    const line = (pending + raw).trim();
    pending = '';
    if (line === '' || line.startsWith('#'))
      continue;
    const m = /^([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m)
      continue;
    const op = m[1].toUpperCase();
    if (op === 'FROM') {
      const parts = m[2].split(/\s+/).filter((p) => !p.startsWith('--'));
      stage = { from: parts[0], name: /^as$/i.test(parts[1] || '') ? parts[2] : null };
    }
    out.push({ stage, op, args: m[2] });
  }
  return out;
}

function checkDockerfile(dir, shownDir) {
  const shown = `${shownDir}/Dockerfile`;
  let text;
  try {
    text = fs.readFileSync(path.join(dir, 'Dockerfile'), 'utf8');
  } catch (e) {
    problem(shown, '-', 'missing: the image recipe lives here');
    return;
  }
  const ins = dockerInstructions(text);
  const stages = [...new Set(ins.filter((i) => i.op === 'FROM').map((i) => i.stage))];
  if (stages.length < 2) {
    problem(shown, '-', 'want two stages: a build stage and a runtime stage');
    return;
  }
  for (const s of stages)
    if (!DEBIAN_12.test(s.from) && !stages.some((o) => o.name === s.from))
      problem(shown, `FROM ${s.from}`, 'base image must be pinned to a Debian 12 tag ' +
        '(debian:12.N-slim, debian:bookworm-…)');
  const build = stages[0];
  const runtime = stages[stages.length - 1];
  checkBuildStage(shown, build, ins.filter((i) => i.stage === build));
  checkRuntimeStage(shown, build, ins.filter((i) => i.stage === runtime));
}

function checkBuildStage(shown, build, ins) {
  const where = `stage ${build.name || build.from}`;
  if (!build.name)
    problem(shown, where, 'the build stage needs a name (FROM … AS build)');
  const runs = ins.filter((i) => i.op === 'RUN').map((i) => i.args);
  const deps = runs.findIndex((r) => /(^|[\s/;&])scripts\/install-deps\.sh\b/.test(r));
  const make = runs.findIndex((r) => /(^|[;&]\s*)make(\s|$|&)/.test(r));
  const install = runs.findIndex((r) =>
    /\bmake install\b/.test(r) && /\bPREFIX=\/usr\b/.test(r) && /\bDESTDIR=\/out\b/.test(r));
  if (deps < 0)
    problem(shown, where, 'the build dependencies come from scripts/install-deps.sh: RUN it');
  if (make < 0 || install < 0)
    problem(shown, where, 'want RUN make and make install PREFIX=/usr DESTDIR=/out');
  if (deps >= 0 && make >= 0 && deps > make)
    problem(shown, where, 'scripts/install-deps.sh must run before make');
  if (!ins.some((i) => i.op === 'COPY' && /scripts\/install-deps\.sh|^\.\s/.test(i.args)))
    problem(shown, where, 'scripts/install-deps.sh is never copied in');
}

function checkRuntimeStage(shown, build, ins) {
  const where = 'runtime stage';
  const copies = ins.filter((i) => i.op === 'COPY' &&
    new RegExp(`--from=${build.name}\\s+/out/?\\s`).test(i.args));
  if (copies.length === 0)
    problem(shown, where, `want COPY --from=${build.name} /out/ / (the installed tree)`);
  const apt = ins.filter((i) => i.op === 'RUN' && /apt-get install/.test(i.args))
    .map((i) => i.args).join(' ');
  for (const lib of RUNTIME_LIBS)
    if (!new RegExp(`(^|\\s)${lib.replace(/[.+]/g, '\\$&')}(\\s|$)`).test(apt))
      problem(shown, where, `runtime library ${lib} is not installed`);
  if (/\s[a-z0-9.+-]+-dev(\s|$)/.test(apt))
    problem(shown, where, 'installs -dev packages: the runtime stage takes only runtime libraries');
  const users = ins.filter((i) => i.op === 'USER');
  const user = users.length ? users[users.length - 1].args.trim() : 'root';
  if (/^(0|root)(:|$)/.test(user))
    problem(shown, where, 'no non-root USER for the server');
  const entry = ins.filter((i) => i.op === 'ENTRYPOINT').pop();
  let argv = null;
  try {
    argv = entry ? JSON.parse(entry.args) : null;
  } catch (e) {
    argv = null;
  }
  if (!Array.isArray(argv) || !/^(\/usr\/bin\/)?gpupool$/.test(argv[0]))
    problem(shown, where, 'want ENTRYPOINT ["/usr/bin/gpupool"] (exec form)');
}

function checkDockerignore(root) {
  const file = path.join(root, '.dockerignore');
  let lines;
  try {
    lines = fs.readFileSync(file, 'utf8').split('\n').map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#')).map((l) => l.replace(/^(\/|\*\*\/)+/, ''));
  } catch (e) {
    problem('.dockerignore', '-', 'missing at the repository root: docker build would send the ' +
      'build folders, node_modules and .git');
    return;
  }
  for (const want of ['build', 'build-*', 'node_modules', '.git'])
    if (!lines.includes(want))
      problem('.dockerignore', '-', `does not leave out ${want}`);
}

// ---- kustomize, where kubectl is there ------------------------------------
// Builds the kustomization with kubectl's kustomize (v5 and later) and
// checks what it made: namespaces and images as intended.
function checkKustomizeBuild(dir, shownDir, k, count) {
  let version;
  try {
    version = childProcess.execFileSync('kubectl', ['version', '--client'],
      { encoding: 'utf8', timeout: 20000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    return 'kustomize build: skipped (no kubectl on PATH)';
  }
  const m = /Kustomize Version: v(\d+)/.exec(version);
  if (!m || Number(m[1]) < 5)
    return 'kustomize build: skipped (kubectl has no kustomize v5)';
  let out;
  try {
    out = childProcess.execFileSync('kubectl', ['kustomize', dir],
      { encoding: 'utf8', timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    problem(`${shownDir}/kustomization.yaml`, '-', `kubectl kustomize fails: ` +
      `${String(e.stderr || e.message).trim().split('\n')[0]}`);
    return null;
  }
  const built = YAML.parseAllDocuments(out).map((d) => d.toJS()).filter(isObject);
  if (built.length !== count)
    problem(`${shownDir}/kustomization.yaml`, '-', `kustomize made ${built.length} objects ` +
      `from ${count}`);
  for (const obj of built)
    checkBuilt(shownDir, obj, k);
  return `kustomize build: ${built.length} objects, namespaces and images as intended`;
}

function checkBuilt(shownDir, obj, k) {
  const shown = `${shownDir} (kustomized)`;
  const ns = (obj.metadata || {}).namespace;
  if (CLUSTER_SCOPED.includes(obj.kind)) {
    if (ns)
      problem(shown, id(obj), `cluster-scoped, yet namespace ${ns}`);
  } else if (ns !== namespaceOf(obj, k)) {
    problem(shown, id(obj), `lands in namespace ${ns}, want ${namespaceOf(obj, k)}`);
  }
  const pod = podSpecOf(obj);
  for (const c of isObject(pod) ? containersOf(pod) : []) {
    const img = splitImage(String(c.image));
    const pin = k.images.find((i) => (i.newName || i.name) === img.name);
    if (!pin || (pin.newTag && img.tag !== pin.newTag))
      problem(shown, `${id(obj)}: container ${c.name}`, `image ${c.image} is not as pinned`);
  }
}

// ---- main ----------------------------------------------------------------
// One folder: its report, exit 0 or 1. Several (the test's broken copies,
// in one process rather than one each): each report between "== DIR" and
// "== exit N", and the worst status.
async function main(argv) {
  if (argv.some((a) => a.startsWith('-'))) {
    process.stderr.write('usage: validate-manifests.js [DIR...]  (DIR: deploy/kubernetes, the ' +
      'default)\n');
    return 2;
  }
  const dirs = argv.length ? argv : [path.join(__dirname, '..', '..', 'deploy', 'kubernetes')];
  let worst = 0;
  for (const d of dirs) {
    if (dirs.length > 1)
      process.stdout.write(`== ${d}\n`);
    const code = await validateFolder(path.resolve(d));
    if (dirs.length > 1)
      process.stdout.write(`== exit ${code}\n`);
    worst = Math.max(worst, code);
  }
  return worst;
}

async function validateFolder(dir) {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    process.stderr.write(`validate-manifests: no folder ${dir}: give deploy/kubernetes\n`);
    return 2;
  }
  problems.length = 0;
  const root = path.resolve(dir, '..', '..');
  const shownDir = path.relative(root, dir) || '.';
  const k = readKustomization(dir, `${shownDir}/kustomization.yaml`);
  checkFolder(dir, shownDir, k);
  const all = [];
  const names = new Map();
  for (const name of k.resources) {
    const file = path.join(dir, name);
    if (!fs.existsSync(file))
      continue;
    const shown = `${shownDir}/${name}`;
    for (const obj of readDocuments(file, shown)) {
      if (!isObject(obj) || typeof obj.kind !== 'string') {
        problem(shown, '-', 'a document that is not a Kubernetes object (no kind)');
        continue;
      }
      await checkSchema(shown, obj);
      checkMetadata(shown, obj, k, names);
      all.push({ obj, shown });
    }
  }
  checkObjects(all, k);
  checkDockerfile(dir, shownDir);
  checkDockerignore(root);
  const kustomized = problems.length === 0 ?
    checkKustomizeBuild(dir, shownDir, k, all.length) : null;
  return report(shownDir, all, k, kustomized);
}

function checkObjects(all, k) {
  for (const { obj, shown } of all) {
    checkWorkload(shown, obj, k, all);
    if (obj.kind === 'Role' || obj.kind === 'ClusterRole')
      checkRules(shown, obj);
    if (obj.kind === 'RoleBinding' || obj.kind === 'ClusterRoleBinding')
      checkBinding(shown, obj, k, all);
    if (obj.kind === 'Service')
      checkService(shown, obj, all);
  }
  const scheds = findSchedulerConfigs(all);
  if (scheds.length !== 1)
    problem('deploy/kubernetes', '-', `want one ConfigMap holding a KubeSchedulerConfiguration, ` +
      `found ${scheds.length}`);
  for (const sc of scheds)
    checkSchedulerConfig(sc, all);
  checkServer(all, scheds);
  checkNode(all);
}

function report(shownDir, all, k, kustomized) {
  if (problems.length > 0) {
    for (const p of problems)
      process.stdout.write(`${p}\n`);
    process.stdout.write(`${problems.length} problem(s) in ${shownDir}\n`);
    return 1;
  }
  process.stdout.write(`${shownDir}: ${all.length} objects in ${k.resources.length} files valid ` +
    'against the official schemas (kubernetes-models), no unknown fields\n');
  process.stdout.write('KubeSchedulerConfiguration: checked field by field (kubernetes-models ' +
    'has no schema for it)\n');
  process.stdout.write('project rules, Dockerfile and .dockerignore: OK\n');
  if (kustomized)
    process.stdout.write(`${kustomized}\n`);
  return 0;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
}, (e) => {
  process.stderr.write(`validate-manifests: ${e.stack || e}\n`);
  process.exitCode = 2;
});
