#!/usr/bin/env node
// podresources.js — asks a kubelet's pod-resources API (v1, List) what
// devices it gave each container, with grpc-js, for test-kubelet.sh:
//
//   podresources.js SOCKET
//
// SOCKET is the kubelet's pod-resources socket (ROOT_DIR/pod-resources/
// kubelet.sock). Prints the answer as one JSON object (the proto's field
// names: pod_resources[].name, .namespace, .containers[].devices[]
// .resource_name, .device_ids) and exits 0; exits 1 with a line on stderr
// when the call fails, 2 on bad usage.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

if (process.argv.length !== 3) {
  process.stderr.write('usage: podresources.js SOCKET\n');
  process.exit(2);
}
const def = protoLoader.loadSync(path.join(__dirname, 'podresources.proto'),
  { keepCase: true, longs: String, defaults: true, arrays: true });
const Lister = grpc.loadPackageDefinition(def).v1.PodResourcesLister;
const client = new Lister(`unix://${path.resolve(process.argv[2])}`, grpc.credentials.createInsecure());
client.List({}, { deadline: Date.now() + 10000 }, (err, answer) => {
  client.close();
  if (err) {
    process.stderr.write(`podresources: List: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
