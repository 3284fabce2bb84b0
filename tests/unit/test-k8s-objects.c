/* test-k8s-objects.c — reading Kubernetes objects for gpupool
 * (src/k8s/objects.c) and kube-scheduler's ExtenderArgs (src/k8s/args.c):
 * quantities as the API server writes them, a pod's units, annotations
 * and containers, a node's published devices, and the fast scanner of
 * node names against escapes, both forms and malformed bodies. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "k8s/args.h"
#include "k8s/objects.h"
#include "k8s/reply.h"

static void quantities_read_as_the_api_writes_them(void **state)
{
	static const struct {
		const char *text;
		int64_t milli;
	} good[] = {
		{ "500m", 500 }, { "2", 2000 }, { "1.5", 1500 }, { "4Gi", 4294967296000 },
		{ "4096Mi", 4294967296000 }, { "1G", 1000000000000 }, { "1e3", 1000000 },
		{ "0", 0 }, { "0.1", 100 }, { "15500m", 15500 },
	};
	static const char *const bad[] = { "", "-1", "4GB", "Gi", "1.5.2", "x", "4 Gi", NULL };
	int64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(gp_kube_quantity_milli(good[i].text, &v), 0);
		assert_int_equal(v, good[i].milli);
	}
	for (size_t i = 0; bad[i]; i++)
		assert_int_equal(gp_kube_quantity_milli(bad[i], &v), -EINVAL);
	assert_int_equal(gp_kube_quantity_milli("9Ei", &v), -ERANGE);
}

static json_t *pod(const char *annotations, const char *containers)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "{\"metadata\": {\"name\": \"p\", \"namespace\": \"ns\", \"uid\": \"u1\","
		 " \"annotations\": %s}, \"spec\": {\"schedulerName\": \"gpupool-scheduler\","
		 " \"priority\": 7, \"containers\": %s}}", annotations, containers);
	return json_loads(text, 0, NULL);
}

static void a_pod_asks_for_units_on_devices(void **state)
{
	json_t *j = pod("{\"gpupool.io/gpu-count\": \"2\", \"gpupool.io/gpu-memory\": \"6Gi\","
			" \"gpupool.io/gpu-model\": \"A100,H100\", \"gpupool.io/isolation\": \"shared\"}",
			"[{\"name\": \"side\", \"resources\": {\"requests\": {\"cpu\": \"250m\"}}},"
			" {\"name\": \"main\", \"resources\": {\"requests\": {\"cpu\": \"2\", \"memory\":"
			" \"8Gi\"}, \"limits\": {\"gpupool.io/gpu\": \"6\"}}}]");
	struct gp_kube_pod p;
	char err[256];

	(void)state;
	assert_int_equal(gp_kube_pod_read(j, &p, err, sizeof(err)), 0);
	assert_int_equal(p.units, 6);
	assert_int_equal(p.count, 2);
	assert_int_equal(p.memory_mib, 6144);
	assert_int_equal(p.cpu_milli, 2250);
	assert_int_equal(p.mem_mib, 8192);
	assert_int_equal(p.priority, 7);                /* the PriorityClass's value */
	assert_int_equal(p.isolation, GP_KUBE_SHARED);
	assert_string_equal(p.container, "main");
	assert_string_equal(p.scheduler, "gpupool-scheduler");
	assert_false(p.placed);
	assert_true(gp_kube_model_matches(p.models, "NVIDIA A100-SXM4-80GB"));
	assert_true(gp_kube_model_matches(p.models, "NVIDIA H100 80GB HBM3"));
	assert_false(gp_kube_model_matches(p.models, "Tesla T4"));
	json_decref(j);
}

/* gpupool.io/gpu-model names models as names (core/models.c, the rule of
 * `gpupool submit --model`): "A10" is the A10 alone, not a part of
 * "A100"; full names and the short ones work. */
static void gpu_model_names_match_as_names(void **state)
{
	(void)state;
	assert_true(gp_kube_model_matches("A10", "NVIDIA A10"));
	assert_false(gp_kube_model_matches("A10", "NVIDIA A100-SXM4-80GB"));
	assert_true(gp_kube_model_matches("A100", "NVIDIA A100-SXM4-80GB"));
	assert_true(gp_kube_model_matches("A100", "NVIDIA A100-SXM4-40GB"));
	assert_true(gp_kube_model_matches("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"));
	assert_false(gp_kube_model_matches("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB"));
	assert_true(gp_kube_model_matches("t4 | L4", "NVIDIA L4"));
	assert_false(gp_kube_model_matches("L4", "NVIDIA L40S"));
	assert_true(gp_kube_model_matches("", "NVIDIA L40S"));
}

static void bad_annotations_say_what_is_wrong(void **state)
{
	static const struct {
		const char *annotations, *units, *says;
	} cases[] = {
		{ "{\"gpupool.io/gpu-memory\": \"lots\"}", "3", "gpupool.io/gpu-memory" },
		{ "{\"gpupool.io/gpu-count\": \"0\"}", "3", "gpupool.io/gpu-count" },
		{ "{\"gpupool.io/gpu-count\": \"2\"}", "3", "split evenly" },
		{ "{\"gpupool.io/priority\": \"10\"}", "3", "gpupool.io/priority" },
		{ "{\"gpupool.io/compute\": \"0\"}", "3", "gpupool.io/compute" },
		{ "{\"gpupool.io/isolation\": \"soft\"}", "3", "gpupool.io/isolation" },
		{ "{\"gpupool.io/placement\": \"{}\"}", "3", "gpupool.io/placement" },
		{ "{}", "\"1.5\"", "whole number" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char containers[256], err[256] = "";
		struct gp_kube_pod p;
		json_t *j;

		snprintf(containers, sizeof(containers),
			 "[{\"name\": \"m\", \"resources\": {\"limits\": {\"gpupool.io/gpu\": %s%s%s}}}]",
			 cases[i].units[0] == '"' ? "" : "\"", cases[i].units,
			 cases[i].units[0] == '"' ? "" : "\"");
		j = pod(cases[i].annotations, containers);
		assert_int_equal(gp_kube_pod_read(j, &p, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, cases[i].says));
		json_decref(j);
	}
}

/* A pod is finished when its containers are gone, not when its deletion
 * starts: while they run their grace period, its devices are theirs. */
/* The pod whose JSON text the format makes, read; it must read. */
static __attribute__((format(printf, 2, 3))) void pod_read_of(struct gp_kube_pod *ret,
							      const char *fmt, ...)
{
	char text[1024], err[256];
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	j = json_loads(text, 0, NULL);
	assert_non_null(j);
	assert_int_equal(gp_kube_pod_read(j, ret, err, sizeof(err)), 0);
	json_decref(j);
}

static void a_pod_being_deleted_finishes_when_its_containers_do(void **state)
{
	static const struct {
		const char *meta, *status;
		bool finished, deleting;
	} cases[] = {
		{ "", "{\"phase\": \"Running\"}", false, false },
		{ "", "{\"phase\": \"Succeeded\"}", true, false },
		{ "", "{\"phase\": \"Failed\"}", true, false },
		{ ", \"deletionTimestamp\": \"2026-12-07T10:00:00Z\"",
		  "{\"phase\": \"Running\", \"containerStatuses\": [{\"name\": \"m\", \"state\":"
		  " {\"running\": {\"startedAt\": \"2026-12-07T09:00:00Z\"}}}]}", false, true },
		{ ", \"deletionTimestamp\": \"2026-12-07T10:00:00Z\"",
		  "{\"phase\": \"Running\", \"containerStatuses\": [{\"name\": \"m\", \"state\":"
		  " {\"terminated\": {\"exitCode\": 0}}}, {\"name\": \"s\", \"state\":"
		  " {\"waiting\": {\"reason\": \"CrashLoopBackOff\"}}}]}", true, true },
		{ ", \"deletionTimestamp\": \"2026-12-07T10:00:00Z\"",
		  "{\"phase\": \"Running\", \"containerStatuses\": [{\"name\": \"m\", \"state\":"
		  " {\"terminated\": {\"exitCode\": 0}}}, {\"name\": \"s\", \"state\":"
		  " {\"running\": {}}}]}", false, true },
		{ ", \"deletionTimestamp\": \"2026-12-07T10:00:00Z\"", "{\"phase\": \"Pending\"}", true,
		  true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gp_kube_pod p;

		pod_read_of(&p, "{\"metadata\": {\"name\": \"p\", \"uid\": \"u\"%s}, \"spec\": "
			    "{\"containers\": [{\"name\": \"m\", \"resources\": {\"limits\": "
			    "{\"gpupool.io/gpu\": \"3\"}}}]}, \"status\": %s}", cases[i].meta,
			    cases[i].status);
		if (p.finished != cases[i].finished || p.deleting != cases[i].deleting)
			fail_msg("case %zu: finished %d deleting %d, want %d %d", i, p.finished,
				 p.deleting, cases[i].finished, cases[i].deleting);
	}
}

/* A pod's GPU containers, in order, with their units: their sum is the
 * pod's; each must split evenly over the pod's devices. */
static void gpu_containers_in_order(void **state)
{
	struct gp_kube_pod p;
	char err[256];
	json_t *j;

	(void)state;
	pod_read_of(&p, "{\"metadata\": {\"name\": \"p\", \"uid\": \"u\"}, \"spec\": "
		    "{\"containers\": [{\"name\": \"a\", \"resources\": {\"limits\": "
		    "{\"gpupool.io/gpu\": \"3\"}}}, {\"name\": \"b\"}, {\"name\": \"c\", "
		    "\"resources\": {\"limits\": {\"gpupool.io/gpu\": \"2\"}}}]}}");
	assert_int_equal(p.units, 5);
	assert_int_equal(p.gpu_containers, 2);
	assert_int_equal(p.container_units[0], 3);
	assert_int_equal(p.container_units[1], 2);
	assert_string_equal(p.container, "a");
	j = json_loads("{\"metadata\": {\"name\": \"p\", \"uid\": \"u\", \"annotations\": "
		       "{\"gpupool.io/gpu-count\": \"2\"}}, \"spec\": {\"containers\": "
		       "[{\"name\": \"a\", \"resources\": {\"limits\": {\"gpupool.io/gpu\": \"3\"}}}, "
		       "{\"name\": \"c\", \"resources\": {\"limits\": {\"gpupool.io/gpu\": \"3\"}}}]}}",
		       0, NULL);
	assert_non_null(j);
	assert_int_equal(gp_kube_pod_read(j, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "in each container"));
	json_decref(j);
}

/* A Deployment's pod: its controller a ReplicaSet named DEPLOYMENT-HASH,
 * HASH its pod-template-hash label; anything else is no Deployment's. */
static void a_pod_knows_its_deployment(void **state)
{
	static const struct {
		const char *meta, *deployment;
	} cases[] = {
		{ "\"labels\": {\"pod-template-hash\": \"5d8f7\"}, \"ownerReferences\": [{\"kind\":"
		  " \"ReplicaSet\", \"name\": \"web-v2-5d8f7\", \"controller\": true}]", "web-v2" },
		{ "\"labels\": {\"pod-template-hash\": \"5d8f7\"}, \"ownerReferences\": [{\"kind\":"
		  " \"ReplicaSet\", \"name\": \"web-v2-5d8f7\"}]", "" },          /* no controller */
		{ "\"labels\": {\"pod-template-hash\": \"5d8f7\"}, \"ownerReferences\": [{\"kind\":"
		  " \"ReplicaSet\", \"name\": \"web-v2-aaaaa\", \"controller\": true}]", "" },
		{ "\"ownerReferences\": [{\"kind\": \"ReplicaSet\", \"name\": \"web-5d8f7\","
		  " \"controller\": true}]", "" },                                  /* no hash label */
		{ "\"labels\": {\"pod-template-hash\": \"5d8f7\"}, \"ownerReferences\": [{\"kind\":"
		  " \"Job\", \"name\": \"web-5d8f7\", \"controller\": true}]", "" },
		{ "\"labels\": {\"pod-template-hash\": \"5d8f7\"}, \"ownerReferences\": [{\"kind\":"
		  " \"ReplicaSet\", \"name\": \"-5d8f7\", \"controller\": true}]", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gp_kube_pod p;

		pod_read_of(&p, "{\"metadata\": {\"name\": \"p\", \"uid\": \"u\", %s}, \"spec\": "
			    "{\"containers\": [{\"name\": \"m\"}]}}", cases[i].meta);
		if (strcmp(p.deployment, cases[i].deployment))
			fail_msg("case %zu: deployment \"%s\", want \"%s\"", i, p.deployment,
				 cases[i].deployment);
	}
}

static void a_node_publishes_its_devices(void **state)
{
	struct gp_kube_device d[2] = {
		{ "GPU-1", "Tesla T4", 15360, 0, 0, 10, true, true, "" },
		{ "GPU-2", "Tesla T4", 15360, 1, 0, 4, false, false, "driver 418 is too old" },
	};
	char *text = gp_kube_devices_text(d, 2, "550.54.15", 12040);
	json_t *node = json_pack("{s:{s:s, s:{s:s}}, s:{s:{s:s, s:s}, s:[{s:s, s:s}]}}", "metadata",
				 "name", "n1", "annotations", "gpupool.io/devices", text, "status",
				 "allocatable", "cpu", "15500m", "memory", "64Gi", "conditions",
				 "type", "Ready", "status", "True");
	struct gp_kube_node n;
	char err[256];

	(void)state;
	assert_int_equal(gp_kube_node_read(node, &n, err, sizeof(err)), 0);
	assert_int_equal(n.devices, 2);
	assert_int_equal(n.cpu_milli, 15500);
	assert_int_equal(n.mem_mib, 65536);
	assert_true(n.schedulable);
	assert_string_equal(n.device[1].uuid, "GPU-2");
	assert_int_equal(n.device[1].split, 4);
	assert_int_equal(n.device[1].numa, 1);
	assert_false(n.device[1].healthy);
	assert_false(n.device[1].compatible);
	assert_string_equal(n.device[1].reason, "driver 418 is too old");
	json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
			    "gpupool.io/devices", json_string("{\"devices\": [{\"uuid\": 1}]}"));
	assert_int_equal(gp_kube_node_read(node, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gpupool.io/devices"));
	json_decref(node);
	free(text);
}

/* A card in MIG mode: its partition set and held units go out and come
 * back; a set gpupool does not know, or held units without a set, are
 * refused, saying which device and field. */
static void a_node_publishes_its_mig_cards(void **state)
{
	struct gp_kube_device d[2] = {
		{ "GPU-1", "NVIDIA A100-SXM4-80GB", 81920, 0, 0, 10, true, true, "", "A100-MIG", 0x0f },
		{ "GPU-2", "Tesla T4", 15360, 0, 0, 10, true, true, "", "", 0 },
	};
	static const char *const bad[] = {
		"[{\"uuid\": \"GPU-9\", \"model\": \"m\", \"memoryMiB\": 1, "
		"\"partitionSet\": \"Z100-MIG\"}]",
		"[{\"uuid\": \"GPU-9\", \"model\": \"m\", \"memoryMiB\": 1, \"partitionHeld\": 3}]",
		"[{\"uuid\": \"GPU-9\", \"model\": \"m\", \"memoryMiB\": 1, "
		"\"partitionSet\": \"A100-MIG\", \"partitionHeld\": 256}]",
	};
	char *text = gp_kube_devices_text(d, 2, "580.65.06", 12080), err[256], doc[512];
	json_t *node = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "n1", "annotations",
				 "gpupool.io/devices", text);
	struct gp_kube_node n;

	(void)state;
	assert_non_null(strstr(text, "\"partitionSet\":\"A100-MIG\""));
	assert_int_equal(gp_kube_node_read(node, &n, err, sizeof(err)), 0);
	assert_string_equal(n.device[0].partition_set, "A100-MIG");
	assert_int_equal(n.device[0].partition_held, 0x0f);
	assert_string_equal(n.device[1].partition_set, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(doc, sizeof(doc), "{\"devices\": %s}", bad[i]);
		json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
				    "gpupool.io/devices", json_string(doc));
		assert_int_equal(gp_kube_node_read(node, &n, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "GPU-9"));
		assert_non_null(strstr(err, "partition"));
	}
	json_decref(node);
	free(text);
}

/* The pod whose placement annotation is this text, read: 0 or the error. */
static int pod_placed(const char *placement, struct gp_kube_pod *ret, char *err, size_t len)
{
	json_t *ann = json_pack("{s:s}", "gpupool.io/placement", placement), *j;
	char *text = json_dumps(ann, 0);
	int r;

	j = pod(text, "[{\"name\": \"m\"}]");
	r = gp_kube_pod_read(j, ret, err, len);
	json_decref(j);
	json_decref(ann);
	free(text);
	return r;
}

/* A placement on a card in MIG mode names its partition's start,
 * "UUID@START", written and read back; a start past the card is refused. */
static void a_placement_names_a_partition_start(void **state)
{
	static const char *const bad[] = { "GPU-1@8", "GPU-1@", "@4", "GPU-1@44" };
	struct gp_kube_placement pl = { .node = "n1", .devices = 2,
					.device = { "GPU-1", "GPU-2" }, .part_start = { 5, 0 },
					.memory_mib = 24576, .compute = 30 };
	char *text = gp_kube_placement_text(&pl), err[256];
	struct gp_kube_pod p;

	(void)state;
	assert_non_null(strstr(text, "[\"GPU-1@4\",\"GPU-2\"]"));
	assert_int_equal(pod_placed(text, &p, err, sizeof(err)), 0);
	free(text);
	assert_int_equal(p.placement.devices, 2);
	assert_string_equal(p.placement.device[0], "GPU-1");
	assert_int_equal(p.placement.part_start[0], 5);
	assert_int_equal(p.placement.part_start[1], 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *one = json_pack("{s:s, s:[s]}", "node", "n1", "devices", bad[i]);

		text = json_dumps(one, 0);
		err[0] = 0;
		assert_int_equal(pod_placed(text, &p, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "UUID@START"));
		free(text);
		json_decref(one);
	}
}

static void extender_args_in_both_forms(void **state)
{
	static const char names[] =
		"{\"Pod\": {\"metadata\": {\"name\": \"p\"}}, \"Extra\": [1, {\"x\": \"]\"}],"
		" \"NodeNames\": [\"a\", \"b\\\"c\", \"d\\u00e9\\ud83d\\ude00\", \"e\\\\f\"]}";
	static const char nodes[] =
		"{\"Nodes\": {\"items\": [{\"metadata\": {\"name\": \"n1\"}}, {\"metadata\":"
		" {\"name\": \"n2\"}}]}, \"Pod\": {\"metadata\": {\"name\": \"p\"}}, \"NodeNames\": null}";
	/* What kube-scheduler sends with nodeCacheCapable: ExtenderArgs.Nodes
	 * has no omitempty, so a nil list is the key with null. */
	static const char cached[] =
		"{\"Pod\": {\"metadata\": {\"name\": \"p\"}}, \"Nodes\": null, \"NodeNames\": [\"a\"]}";
	struct gp_extender_args a;
	char err[256];

	(void)state;
	assert_int_equal(gp_extender_args_parse(names, strlen(names), &a, err, sizeof(err)), 0);
	assert_int_equal(a.names, 4);
	assert_string_equal(a.name[1], "b\"c");
	assert_string_equal(a.name[2], "d\xc3\xa9\xf0\x9f\x98\x80");
	assert_string_equal(a.name[3], "e\\f");
	assert_null(a.nodes);
	assert_string_equal(json_string_value(json_object_get(json_object_get(a.pod, "metadata"),
							      "name")), "p");
	gp_extender_args_release(&a);
	assert_int_equal(gp_extender_args_parse(nodes, strlen(nodes), &a, err, sizeof(err)), 0);
	assert_int_equal(a.names, 2);
	assert_string_equal(a.name[1], "n2");
	assert_non_null(a.nodes);
	gp_extender_args_release(&a);
	assert_int_equal(gp_extender_args_parse(cached, strlen(cached), &a, err, sizeof(err)), 0);
	assert_int_equal(a.names, 1);
	assert_null(a.nodes);
	gp_extender_args_release(&a);
}

/* kubelet's cgroup names for a pod, with the cgroupfs and the systemd
 * drivers, on cgroup v2 and v1 lines; and texts that name no pod. */
static void a_pod_is_found_by_its_cgroup(void **state)
{
	static const char uid[] = "8c3f2b1e-0d4a-4b6e-9f7a-1c2d3e4f5a6b";
	static const char *const named[] = {
		"0::/kubepods/burstable/pod8c3f2b1e-0d4a-4b6e-9f7a-1c2d3e4f5a6b/0123abcd\n",
		"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
		"pod8c3f2b1e_0d4a_4b6e_9f7a_1c2d3e4f5a6b.slice/cri-containerd-99.scope\n",
		"12:pids:/kubepods/pod8c3f2b1e-0d4a-4b6e-9f7a-1c2d3e4f5a6b/c1\n"
		"0::/system.slice/containerd.service\n",
		"0::/podcast/pod8c3f2b1e-0d4a-4b6e-9f7a-1c2d3e4f5a6b\n",
	};
	static const char *const none[] = {
		"0::/user.slice/user-0.slice/session-1.scope\n",
		"0::/kubepods/burstable/pod8c3f2b1e-0d4a-4b6e-9f7a\n",
		"0::/kubepods/pod8c3f2b1e-0d4a-4b6e-9f7a-1c2d3e4f5a6g/x\n",
		"0::/kubepods/pod8c3f2b1e+0d4a-4b6e-9f7a-1c2d3e4f5a6b/x\n",
		"",
	};
	char got[64];

	(void)state;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		assert_int_equal(gp_kube_pod_uid_of_cgroup(named[i], got, sizeof(got)), 0);
		assert_string_equal(got, uid);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_int_equal(gp_kube_pod_uid_of_cgroup(none[i], got, sizeof(got)), -ENOENT);
}

static void malformed_args_are_refused(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{", "{\"Pod\": {}}", "{\"NodeNames\": [\"a\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"a\" \"b\"]}", "{\"Pod\": {}, \"NodeNames\": [\"a\\q\"]}",
		"{\"Pod\": {}, \"NodeNames\": [\"\\ud83d\"]}", "{\"Pod\": {}, \"NodeNames\": [\"a]",
		"{\"Pod\": \"x\", \"NodeNames\": []}", "{\"Pod\": {}, \"NodeNames\": [\"\\u0000\"]}",
		NULL,
	};
	struct gp_extender_args a;
	char err[256];

	(void)state;
	for (size_t i = 0; bad[i]; i++) {
		int r = gp_extender_args_parse(bad[i], strlen(bad[i]), &a, err, sizeof(err));

		assert_int_equal(r, -EINVAL);
		assert_non_null(strstr(err, "not ExtenderArgs"));
	}
}

static void replies_escape_what_json_must(void **state)
{
	struct gp_reply r = { 0 };
	char *text;

	(void)state;
	gp_reply_raw(&r, "[", 1);
	gp_reply_string(&r, "node-1", 6);
	gp_reply_put(&r, ",");
	gp_reply_string(&r, "a\"b\\c\x01\xc3\xa9", 8);
	gp_reply_put(&r, ",");
	gp_reply_int(&r, -42);
	gp_reply_raw(&r, "]", 1);
	text = gp_reply_take(&r);
	assert_string_equal(text, "[\"node-1\",\"a\\\"b\\\\c\\u0001\xc3\xa9\",-42]");
	free(text);
	assert_null(r.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantities_read_as_the_api_writes_them),
		cmocka_unit_test(a_pod_asks_for_units_on_devices),
		cmocka_unit_test(gpu_model_names_match_as_names),
		cmocka_unit_test(bad_annotations_say_what_is_wrong),
		cmocka_unit_test(a_pod_being_deleted_finishes_when_its_containers_do),
		cmocka_unit_test(a_pod_knows_its_deployment),
		cmocka_unit_test(gpu_containers_in_order),
		cmocka_unit_test(a_node_publishes_its_devices),
		cmocka_unit_test(a_node_publishes_its_mig_cards),
		cmocka_unit_test(a_placement_names_a_partition_start),
		cmocka_unit_test(extender_args_in_both_forms),
		cmocka_unit_test(malformed_args_are_refused),
		cmocka_unit_test(a_pod_is_found_by_its_cgroup),
		cmocka_unit_test(replies_escape_what_json_must),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
