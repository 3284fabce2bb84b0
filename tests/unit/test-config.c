/* test-config.c — the server's configuration file (src/server/config.c):
 * docs/gpupool.example.yaml read whole, every key landing in its option
 * (sizes too: log_max),
 * an empty file changing nothing, prices and overcommits replacing the
 * same model's, and bad files refused with FILE:LINE:COLUMN, the key and
 * what to do (syntax, unknown key, wrong type, bad value, repeated key). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config.h"

/* Writes text to a temporary file; its path in path (the caller unlinks). */
static void write_file(char *path, size_t size, const char *text)
{
	FILE *f;

	snprintf(path, size, "/tmp/test-config-XXXXXX");
	f = fdopen(mkstemp(path), "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads text; returns the result, err filled. */
static int load_text(const char *text, struct gp_server_options *o, char *err,
		     size_t err_len)
{
	char path[64];
	int r;

	write_file(path, sizeof(path), text);
	r = gp_config_load(path, o, err, err_len);
	unlink(path);
	return r;
}

static void test_example(void **state)
{
	struct gp_server_options *o = calloc(1, sizeof(*o));
	char err[1024] = "";

	(void)state;
	assert_non_null(o);
	/* The tests run from tests/ (meson's workdir). */
	assert_int_equal(gp_config_load("../docs/gpupool.example.yaml", o, err, sizeof(err)), 0);
	assert_string_equal(o->db, "/var/lib/gpupool/gpupool.db");
	assert_string_equal(o->socket, "/run/gpupool/server.sock");
	assert_string_equal(o->run_dir, "/run/gpupool");
	assert_string_equal(o->log_dir, "/var/log/gpupool");
	assert_int_equal(o->log_max, 64 << 20);
	assert_int_equal(o->log_total_max, 4ULL << 30);
	assert_int_equal(o->log_free_min, 256 << 20);
	assert_int_equal(o->tcp_port, 0);
	assert_int_equal(o->queue_max, 10000);
	assert_int_equal(o->tenant_queue_max, 1000);
	assert_int_equal(o->header_timeout_ms, 10000);
	assert_int_equal(o->body_timeout_ms, 30000);
	assert_int_equal(o->max_connections, 512);
	assert_int_equal(o->max_client_connections, 64);
	assert_string_equal(o->allowed_hosts, "");
	assert_int_equal(o->db_check, GP_CONFIG_DB_CHECK_QUICK);
	assert_int_equal(o->backup_interval_s, 3600);
	assert_int_equal(o->backup_keep, 8);
	assert_string_equal(o->backup_dir, "");
	assert_string_equal(o->metrics_token_file, "");
	assert_true(o->with_agent);
	assert_int_equal(o->grace_ms, 5000);
	assert_string_equal(o->cgroup, "auto");
	assert_int_equal(o->task_uid_base, 1879048192u);
	assert_true(o->task_memory_max > 0 && o->task_memory_max <= gp_config_machine_memory() / 2);
	assert_int_equal(o->task_pids_max, 2048);
	assert_int_equal(o->task_tmp_max, 1ULL << 30);
	assert_int_equal(o->task_proc, 0);
	assert_string_equal(o->task_env, "PATH LANG LANGUAGE LC_* TZ LD_LIBRARY_PATH GPUPOOL_SIM_*");
	assert_int_equal(o->verify, 0);
	assert_int_equal(o->verify_ms, 200);
	assert_int_equal(o->verify_slack_mib, 512);
	assert_int_equal(o->loop.sample_ms, 10000);
	assert_int_equal(o->loop.util_window_s, 86400);
	assert_int_equal(o->loop.grow_samples, 10);
	assert_int_equal(o->prices, 2);
	assert_string_equal(o->price[0].model, "A100");
	assert_true(o->price[0].per_hour == 2.5);
	assert_string_equal(o->price[1].model, "T4");
	assert_true(o->price[1].per_hour == 0.35);
	assert_int_equal(o->loop.overcommits, 2);
	assert_string_equal(o->loop.overcommit[0].model, "");
	assert_int_equal(o->loop.overcommit[0].permille, 1000);
	assert_string_equal(o->loop.overcommit[1].model, "T4");
	assert_int_equal(o->loop.overcommit[1].permille, 1500);
	free(o);
}

static void test_every_key(void **state)
{
	struct gp_server_options *o = calloc(1, sizeof(*o));
	char err[1024] = "";

	(void)state;
	assert_non_null(o);
	o->with_agent = true;
	assert_int_equal(load_text("db: a.db\nsocket: 's p'\ntcp: 8470\nadmin_token_file: t\n"
				   "queue_max: 7\nwith_agent: no\nshim: lib.so\nrun_dir: r\n"
				   "log_dir: l\nlog_max: 1G\nlog_total_max: 0\nlog_free_min: 6M\n"
				   "grace_ms: 0\nsample_ms: 100\nutil_window: 60\n"
				   "grow_samples: 3\novercommit: {all: 1.25}\n"
				   "tenant_queue_max: 6\nheader_timeout_ms: 100\n"
				   "body_timeout_ms: 3600000\nmax_connections: 65536\n"
				   "max_client_connections: 1\nmetrics_token_file: m.token\n"
				   "cgroup: off\ntask_uid_base: 700000\ntask_groups: video,render\n"
				   "task_env: PATH LC_*\ntask_memory_max: 8G\ntask_pids_max: 4096\n"
				   "task_tmp_max: 2G\ntask_proc: shared\nverify: alert\nverify_ms: 1000\n"
				   "verify_slack_mib: 0\npolicy: fgd\nworkload_window: 3600\n"
				   "workload_refresh: 60\nmetrics_listen: 0.0.0.0:9464\n"
				   "ui_dir: /srv/ui\nui_chart_js: /srv/chart.js\n"
				   "allowed_hosts: gpu1.example.com,gpu1,[fd00::7]\ndb_check: full\n"
				   "backup_dir: /srv/b\nbackup_interval: 0\nbackup_keep: 1000\n",
				   o, err, sizeof(err)),
			 0);
	assert_string_equal(o->db, "a.db");
	assert_string_equal(o->socket, "s p");
	assert_int_equal(o->tcp_port, 8470);
	assert_string_equal(o->token_file, "t");
	assert_int_equal(o->queue_max, 7);
	assert_int_equal(o->tenant_queue_max, 6);
	assert_int_equal(o->header_timeout_ms, 100);
	assert_int_equal(o->body_timeout_ms, 3600000);
	assert_int_equal(o->max_connections, 65536);
	assert_int_equal(o->max_client_connections, 1);
	assert_string_equal(o->metrics_token_file, "m.token");
	assert_int_equal(o->metrics_port, 9464);
	assert_true(o->metrics_any);
	assert_string_equal(o->ui_dir, "/srv/ui");
	assert_string_equal(o->ui_chart_js, "/srv/chart.js");
	assert_string_equal(o->cgroup, "off");
	assert_int_equal(o->task_uid_base, 700000);
	assert_string_equal(o->task_groups, "video,render");
	assert_string_equal(o->task_env, "PATH LC_*");
	assert_int_equal(o->task_memory_max, 8ULL << 30);
	assert_int_equal(o->task_pids_max, 4096);
	assert_int_equal(o->task_tmp_max, 2ULL << 30);
	assert_int_equal(o->task_proc, 1);
	assert_int_equal(o->verify, 1);
	assert_int_equal(o->verify_ms, 1000);
	assert_int_equal(o->verify_slack_mib, 0);
	assert_false(o->with_agent);
	assert_string_equal(o->shim, "lib.so");
	assert_string_equal(o->run_dir, "r");
	assert_string_equal(o->log_dir, "l");
	assert_int_equal(o->log_max, 1ULL << 30);
	assert_int_equal(o->log_total_max, 0);
	assert_int_equal(o->log_free_min, 6 << 20);
	assert_int_equal(o->grace_ms, 0);
	assert_int_equal(o->loop.sample_ms, 100);
	assert_int_equal(o->loop.util_window_s, 60);
	assert_int_equal(o->loop.grow_samples, 3);
	assert_int_equal(o->loop.overcommits, 1);
	assert_string_equal(o->loop.overcommit[0].model, "");
	assert_int_equal(o->loop.overcommit[0].permille, 1250);
	assert_string_equal(o->loop.policy, "fgd");
	assert_int_equal(o->loop.workload_window_s, 3600);
	assert_int_equal(o->loop.workload_refresh_s, 60);
	assert_string_equal(o->allowed_hosts, "gpu1.example.com,gpu1,[fd00::7]");
	assert_int_equal(o->db_check, GP_CONFIG_DB_CHECK_FULL);
	assert_string_equal(o->backup_dir, "/srv/b");
	assert_int_equal(o->backup_interval_s, 0);
	assert_int_equal(o->backup_keep, 1000);
	free(o);
}

static void test_empty_and_missing(void **state)
{
	struct gp_server_options *o = calloc(1, sizeof(*o));
	char err[1024] = "";

	(void)state;
	assert_non_null(o);
	o->queue_max = 5;
	assert_int_equal(load_text("", o, err, sizeof(err)), 0);
	assert_int_equal(load_text("# only a comment\n---\n", o, err, sizeof(err)), 0);
	assert_int_equal(o->queue_max, 5);
	assert_int_equal(load_text("task_uid_base: auto\n", o, err, sizeof(err)), 0);
	assert_int_equal(o->task_uid_base, GP_CONFIG_UID_BASE_AUTO);
	/* None: "max" and "off"; a share of this machine's memory, in whole MiB. */
	assert_int_equal(load_text("task_memory_max: max\ntask_pids_max: max\ntask_tmp_max: off\n",
				   o, err, sizeof(err)),
			 0);
	assert_true(o->task_memory_max == GP_CONFIG_NONE);
	assert_int_equal(o->task_pids_max, GP_CONFIG_PIDS_NONE);
	assert_true(o->task_tmp_max == GP_CONFIG_NONE);
	assert_int_equal(load_text("task_memory_max: 50%\n", o, err, sizeof(err)), 0);
	assert_true(o->task_memory_max > 0 && o->task_memory_max <= gp_config_machine_memory() / 2);
	assert_int_equal(o->task_memory_max % (1 << 20), 0);
	assert_int_equal(gp_config_load("/nonexistent/gpupool.yaml", o, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/gpupool.yaml: cannot read"));
	free(o);
}

/* A later price or overcommit of the same model (any case) replaces it. */
static void test_replace(void **state)
{
	struct gp_server_options *o = calloc(1, sizeof(*o));
	struct gp_price p = {"t4", 0.5};
	char err[1024] = "";

	(void)state;
	assert_non_null(o);
	assert_int_equal(load_text("prices: {T4: 0.35, A100: 2}\novercommit: {T4: 1.5}\n", o,
				   err, sizeof(err)),
			 0);
	assert_int_equal(gp_config_price_set(o, &p), 0);
	assert_int_equal(o->prices, 2);
	assert_string_equal(o->price[0].model, "t4");
	assert_true(o->price[0].per_hour == 0.5);
	assert_int_equal(gp_config_overcommit_set(o, "T4", 1100), 0);
	assert_int_equal(gp_config_overcommit_set(o, "", 1200), 0);
	assert_int_equal(o->loop.overcommits, 2);
	assert_int_equal(o->loop.overcommit[0].permille, 1100);
	for (int i = 2; i < GP_PRICES_MAX; i++) {
		snprintf(p.model, sizeof(p.model), "M%d", i);
		assert_int_equal(gp_config_price_set(o, &p), 0);
	}
	snprintf(p.model, sizeof(p.model), "one too many");
	assert_int_equal(gp_config_price_set(o, &p), -ENOSPC);
	free(o);
}

static void test_ratio(void **state)
{
	unsigned v = 7;

	(void)state;
	assert_true(gp_config_ratio_parse("1", &v));
	assert_int_equal(v, 1000);
	assert_true(gp_config_ratio_parse("1.5", &v));
	assert_int_equal(v, 1500);
	v = 7;
	assert_false(gp_config_ratio_parse("1.51", &v));
	assert_false(gp_config_ratio_parse("0.9", &v));
	assert_false(gp_config_ratio_parse("nan", &v));
	assert_false(gp_config_ratio_parse("1.2x", &v));
	assert_false(gp_config_ratio_parse("0x1.4p0", &v));     /* hexadecimal 1.25 */
	assert_false(gp_config_ratio_parse(" 1.2", &v));
	assert_false(gp_config_ratio_parse("+1.2", &v));
	assert_false(gp_config_ratio_parse("", &v));
	assert_int_equal(v, 7);
}

/* Each bad file: the message after the file's path (":LINE:COLUMN: ..."). */
static void test_bad(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"db: x\nqueue_mx: 5\n", ":2:1: key \"queue_mx\": unknown; the keys are db, "},
		{"db: [a, b]\n", ":1:5: key \"db\": is a list; give a path"},
		{"db:\n", ":1:4: key \"db\": is empty; give a path"},
		{"queue_max: 0\n", ":1:12: key \"queue_max\": \"0\" is not a whole number "
				   "from 1 to 10000000"},
		{"tcp: 70000\n", ":1:6: key \"tcp\": \"70000\" is not a whole number from 1 to 65535"},
		{"with_agent: maybe\n", ":1:13: key \"with_agent\": \"maybe\" is not a boolean; "
					"write true or false"},
		{"sample_ms: 99\n", ":1:12: key \"sample_ms\": \"99\" is not a whole number from 100"},
		{"header_timeout_ms: 99\n", ":1:20: key \"header_timeout_ms\": \"99\" is not a "
					     "whole number from 100 to 3600000"},
		{"max_connections: 65537\n", ":1:18: key \"max_connections\": \"65537\" is not "
					      "a whole number from 1 to 65536"},
		{"tenant_queue_max: 0\n", ":1:19: key \"tenant_queue_max\": \"0\" is not a "
					   "whole number from 1 to 10000000"},
		{"verify: maybe\n", ":1:9: key \"verify\": \"maybe\" is not one of: kill, alert, off"},
		{"db_check: slow\n", ":1:11: key \"db_check\": \"slow\" is not one of: quick, full"},
		{"backup_keep: 0\n", ":1:14: key \"backup_keep\": \"0\" is not a whole number from "
				       "1 to 1000"},
		{"allowed_hosts: gpu1:8470\n", ":1:16: key \"allowed_hosts\": \"gpu1:8470\" is not a "
						"host name; give names without ports"},
		{"allowed_hosts: a,,b\n", ":1:16: key \"allowed_hosts\": \"\" is not a host name"},
		{"allowed_hosts: \"[zz::1]\"\n", ":1:16: key \"allowed_hosts\": \"[zz::1]\" is not a "
						   "host name"},
		{"verify: [kill]\n", ":1:9: key \"verify\": is a list; give one of its words"},
		{"task_uid_base: 1000\n", ":1:16: key \"task_uid_base\": \"1000\" is neither auto "
					   "nor a whole number from 65536 to 2130706432"},
		{"task_uid_base: any\n", ":1:16: key \"task_uid_base\": \"any\" is neither auto"},
		{"task_memory_max: 8M\n", ":1:18: key \"task_memory_max\": \"8M\" is not max, a share "
					    "of this machine's memory like 50%, or a size from 16M to 1T"},
		{"task_memory_max: 0%\n", ":1:18: key \"task_memory_max\": \"0%\" is not max"},
		{"task_memory_max: 101%\n", ":1:18: key \"task_memory_max\": \"101%\" is not max"},
		{"task_pids_max: 15\n", ":1:16: key \"task_pids_max\": \"15\" is not max or a whole "
					 "number from 16 to 4194304"},
		{"task_tmp_max: 512K\n", ":1:15: key \"task_tmp_max\": \"512K\" is not off or a size "
					  "from 1M to 1T"},
		{"task_proc: hidden\n", ":1:12: key \"task_proc\": \"hidden\" is not one of: private, "
					 "shared"},
		{"verify_ms: 50\n", ":1:12: key \"verify_ms\": \"50\" is not a whole number from "
				     "100 to 60000"},
		{"log_max: 512K\n", ":1:10: key \"log_max\": \"512K\" is not a size from 1M to 1T; "
				    "give one like 64M or 1G"},
		{"log_max: 2T\n", ":1:10: key \"log_max\": \"2T\" is not a size from 1M to 1T"},
		{"log_max: -64M\n", ":1:10: key \"log_max\": \"-64M\" is not a size"},
		{"log_max: [64M]\n", ":1:10: key \"log_max\": is a list; give a size, like 64M"},
		{"log_total_max: 512K\n", ":1:16: key \"log_total_max\": \"512K\" is not 0 (none) or "
					 "a size from 1M to 1024T; give one like 256M or 4G"},
		{"log_free_min: lots\n", ":1:15: key \"log_free_min\": \"lots\" is not 0 (none) or a "
					"size"},
		{"prices: 0.35\n", ":1:9: key \"prices\": is a single value; give a mapping of "
				   "device models, e.g. prices: {A100: 2.50, T4: 0.35}"},
		{"prices:\n  T4: cheap\n", ":2:7: key \"prices\": T4: \"cheap\" is not a price; "
					   "give a number from 0 to 1000000000 per hour"},
		{"prices: {A=B: 1}\n", ":1:10: key \"prices\": model \"A=B\": give a part of"},
		{"prices: {T4: [1]}\n", ":1:14: key \"prices\": is a list; give a price per hour"},
		{"overcommit: {T4: 2}\n", ":1:18: key \"overcommit\": T4: \"2\" is not a ratio "
					  "from 1.0 to 1.5"},
		{"overcommit: 1.5\n", ":1:13: key \"overcommit\": is a single value; give a mapping"},
		{"policy: best\n",
		 ":1:9: key \"policy\": \"best\" is not a policy; give one of: random, dotprod, "
		 "gpuclustering, gpupacking, bestfit, fgd, binpack, spread, default (gpupool "
		 "policies says what each does)"},
		{"policy: [fgd]\n", ":1:9: key \"policy\": is a list; give a policy's name"},
		{"workload_window: 59\n", ":1:18: key \"workload_window\": \"59\" is not a whole "
					   "number from 60 to 2678400"},
		{"workload_refresh: 0\n", ":1:19: key \"workload_refresh\": \"0\" is not a whole "
					   "number from 1 to 86400"},
		{"db: a\ndb: b\n", ":2:1: key \"db\": given twice; keep one"},
		{"metrics_listen: 10.0.0.1:9464\n",
		 ":1:17: key \"metrics_listen\": \"10.0.0.1:9464\" must be 0.0.0.0:PORT or "
		 "127.0.0.1:PORT"},
		{"\"db\\0junk\": /x.db\n", ":1:1: a key with a NUL byte"},
		{"prices: {\"T4\\0x\": 1}\n", ":1:10: key \"prices\": a model with a NUL byte"},
		{"db: &p a\nsocket: *p\n", ":2:9: key \"socket\": is an alias"},
		{"- db: a\n", ":1:1: the file is a list; it must be a mapping of options"},
		{"db: \"a\n", ": not valid YAML: found unexpected end of stream"},
		{"db: a\n  b: c\n", ":2:4: not valid YAML: mapping values are not allowed"},
		{"db: a\n---\ndb: b\n", ":2:1: one document only"},
	};
	struct gp_server_options *o = calloc(1, sizeof(*o));
	char err[1024], path[64];

	(void)state;
	assert_non_null(o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(path, sizeof(path), bad[i].text);
		err[0] = '\0';
		assert_int_equal(gp_config_load(path, o, err, sizeof(err)), -EINVAL);
		unlink(path);
		if (strncmp(err, path, strlen(path)) != 0 ||
		    !strstr(err + strlen(path), bad[i].want) || strchr(err, '\n'))
			fail_msg("%s: got \"%s\", want \"%s\"", bad[i].text, err, bad[i].want);
	}
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_empty_and_missing),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
