/* test-taskenv.c — the variables a submitter declares for a task
 * (src/server/taskenv.c): names good and bad, every reserved name
 * refused with its reason, LD_LIBRARY_PATH allowed; the object's bounds
 * (64 variables, 4096-byte values, strings without NUL); the execve
 * array from the stored JSON, refusing text that did not pass the
 * checks; and the merge with the agent's own entries: replacing PATH,
 * appending LD_LIBRARY_PATH after the driver's, keeping the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/taskenv.h"

#define ERR_MAX 512

static void test_names(void **state)
{
	static const char *const good[] = {
		"A",	       "_",	  "a_b",	  "PATH",
		"LANG",	       "LC_ALL",  "x9",		  "LD_LIBRARY_PATH",
		"LD_BIND_NOW", "GPUPOOL", "MY_GPUPOOL_X", "CUDA_VISIBLE_DEVICES_X",
		"home"};
	static const char *const bad[] = {"",	 "1A", "A-B", "A B",
					  "A=B", "é",  "A.B", "$A"};
	char err[ERR_MAX], longest[GP_TASK_ENV_NAME_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (gp_task_env_name_check(good[i], err, sizeof(err)) != 0)
			fail_msg("\"%s\" refused: %s", good[i], err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(gp_task_env_name_check(bad[i], err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "a name is 1 to 128 letters, digits or '_'"));
	}
	assert_int_equal(gp_task_env_name_check(NULL, err, sizeof(err)), -EINVAL);
	memset(longest, 'N', GP_TASK_ENV_NAME_MAX);
	longest[GP_TASK_ENV_NAME_MAX] = '\0';
	assert_int_equal(gp_task_env_name_check(longest, err, sizeof(err)), 0);
	strcat(longest, "N");
	assert_int_equal(gp_task_env_name_check(longest, err, sizeof(err)), -EINVAL);
}

static void test_reserved(void **state)
{
	static const struct {
		const char *name, *why;
	} reserved[] = {
		{"GPUPOOL_TASK_ID", "GPUPOOL_*"},
		{"GPUPOOL_", "GPUPOOL_*"},
		{"GPUPOOL_MEM_LIMIT", "GPUPOOL_*"},
		{"LD_PRELOAD", "interposer"},
		{"LD_AUDIT", "interposer"},
		{"CUDA_VISIBLE_DEVICES", "devices"},
		{"NVIDIA_VISIBLE_DEVICES", "devices"},
		{"ASCEND_RT_VISIBLE_DEVICES", "devices"},
		{"HIP_VISIBLE_DEVICES", "devices"},
		{"ROCR_VISIBLE_DEVICES", "devices"},
		{"MLU_VISIBLE_DEVICES", "devices"},
		{"ASCEND_VISIBLE_DEVICES", "devices"},
		{"ZE_AFFINITY_MASK", "devices"},
		{"GPU_DEVICE_ORDINAL", "devices"},
		{"HOME", "Unix user"},
		{"USER", "Unix user"},
		{"LOGNAME", "Unix user"},
	};
	char err[ERR_MAX], want[128];

	(void)state;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		err[0] = '\0';
		if (gp_task_env_name_check(reserved[i].name, err, sizeof(err)) != -EINVAL)
			fail_msg("\"%s\" was not refused", reserved[i].name);
		snprintf(want, sizeof(want), "variable \"%s\" is gpupool's own (",
			 reserved[i].name);
		assert_non_null(strstr(err, want));
		assert_non_null(strstr(err, reserved[i].why));
		assert_non_null(strstr(err, "leave it out"));
	}
}

static json_t *parse(const char *text)
{
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	assert_non_null(v);
	return v;
}

/* The message gp_task_env_check gives for text, which it must refuse. */
static const char *refusal(const char *text, char *err)
{
	json_t *v = parse(text);

	err[0] = '\0';
	assert_int_equal(gp_task_env_check(v, err, ERR_MAX), -EINVAL);
	json_decref(v);
	return err;
}

static void test_object(void **state)
{
	char err[ERR_MAX], *big = malloc(GP_TASK_ENV_VALUE_MAX + 64);
	json_t *env = json_object();

	(void)state;
	assert_int_equal(gp_task_env_check(env, err, sizeof(err)), 0);
	for (int i = 0; i < GP_TASK_ENV_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "V%d", i);
		json_object_set_new(env, name, json_string("x"));
	}
	assert_int_equal(gp_task_env_check(env, err, sizeof(err)), 0);
	json_object_set_new(env, "ONE_MORE", json_string("x"));
	assert_int_equal(gp_task_env_check(env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "65 variables, over 64"));
	json_decref(env);

	assert_non_null(strstr(refusal("[]", err), "must be an object"));
	assert_non_null(strstr(refusal("\"A=1\"", err), "must be an object"));
	assert_non_null(strstr(refusal("{\"A\": 1}", err),
			       "variable \"A\": the value must be a string"));
	assert_non_null(strstr(refusal("{\"A\": null}", err), "must be a string"));
	assert_non_null(strstr(refusal("{\"A\": \"a\\u0000b\"}", err), "NUL byte"));
	assert_non_null(strstr(refusal("{\"OK\": \"1\", \"LD_PRELOAD\": \"/x.so\"}", err),
			       "\"LD_PRELOAD\" is gpupool's own"));
	assert_non_null(strstr(refusal("{\"1A\": \"1\"}", err), "variable \"1A\""));

	memset(big, 'v', GP_TASK_ENV_VALUE_MAX);
	big[GP_TASK_ENV_VALUE_MAX] = '\0';
	env = json_pack("{s:s}", "BIG", big);
	assert_int_equal(gp_task_env_check(env, err, sizeof(err)), 0);
	json_decref(env);
	strcat(big, "v");
	env = json_pack("{s:s}", "BIG", big);
	assert_int_equal(gp_task_env_check(env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "4097 bytes, over 4096"));
	json_decref(env);
	free(big);
}

static void test_array(void **state)
{
	char **a = NULL, **untouched = (char **)&a;

	(void)state;
	assert_int_equal(gp_task_env_array("{}", &a), 0);
	assert_non_null(a);
	assert_null(a[0]);
	a = gp_task_env_free(a);
	assert_null(a);

	assert_int_equal(
		gp_task_env_array("{\"A\": \"1\", \"B\": \"x=y\", \"C\": \"\"}", &a), 0);
	assert_string_equal(a[0], "A=1");
	assert_string_equal(a[1], "B=x=y");
	assert_string_equal(a[2], "C=");
	assert_null(a[3]);
	a = gp_task_env_free(a);

	/* What did not pass the checks never becomes an environment. */
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"{\"A\": 1}",
		"{\"LD_PRELOAD\": \"/evil.so\"}",
		"{\"A\": \"1\", \"A\": \"2\"}",
		"{\"HOME\": \"/\"}",
		"null",
		"{\"A\": \"a\\u0000b\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = untouched;
		if (gp_task_env_array(bad[i], &a) != -EINVAL)
			fail_msg("%s was taken", bad[i]);
		assert_ptr_equal(a, untouched);
	}
	assert_int_equal(gp_task_env_array(NULL, &a), -EINVAL);
	assert_int_equal(gp_task_env_array("{}", NULL), -EINVAL);
	assert_null(gp_task_env_free(NULL));
}

static void test_merge(void **state)
{
	const char *const base[] = {"PATH=/usr/bin:/bin",
				    "LD_LIBRARY_PATH=/usr/lib/driver",
				    "CUDA_VISIBLE_DEVICES=GPU-1",
				    "GPUPOOL_TASK_ID=task-7",
				    "ODD",
				    NULL};
	const char *const no_path[] = {"PATH=/bin", NULL};
	const char *const empty_path[] = {"LD_LIBRARY_PATH=", NULL};
	char **a = NULL;

	(void)state;
	assert_int_equal(
		gp_task_env_merge(base,
				  "{\"LD_LIBRARY_PATH\": \"/home/u/lib\", \"FOO\": "
				  "\"bar\", \"PATH\": \"/venv/bin:/usr/bin\"}",
				  &a),
		0);
	assert_string_equal(a[0], "PATH=/venv/bin:/usr/bin");
	assert_string_equal(a[1], "LD_LIBRARY_PATH=/usr/lib/driver:/home/u/lib");
	assert_string_equal(a[2], "CUDA_VISIBLE_DEVICES=GPU-1");
	assert_string_equal(a[3], "GPUPOOL_TASK_ID=task-7");
	assert_string_equal(a[4], "ODD");
	assert_string_equal(a[5], "FOO=bar");
	assert_null(a[6]);
	a = gp_task_env_free(a);

	/* Without the agent's own, the declared path alone; an empty one adds nothing. */
	assert_int_equal(
		gp_task_env_merge(no_path, "{\"LD_LIBRARY_PATH\": \"/mine\"}", &a), 0);
	assert_string_equal(a[0], "PATH=/bin");
	assert_string_equal(a[1], "LD_LIBRARY_PATH=/mine");
	assert_null(a[2]);
	a = gp_task_env_free(a);
	assert_int_equal(gp_task_env_merge(base, "{\"LD_LIBRARY_PATH\": \"\"}", &a), 0);
	assert_string_equal(a[1], "LD_LIBRARY_PATH=/usr/lib/driver");
	a = gp_task_env_free(a);
	assert_int_equal(
		gp_task_env_merge(empty_path, "{\"LD_LIBRARY_PATH\": \"/m\"}", &a), 0);
	assert_string_equal(a[0], "LD_LIBRARY_PATH=/m");
	a = gp_task_env_free(a);

	/* Nothing declared: the base as it is; a reserved name: refused. */
	assert_int_equal(gp_task_env_merge(base, "{}", &a), 0);
	for (int i = 0; base[i]; i++)
		assert_string_equal(a[i], base[i]);
	a = gp_task_env_free(a);
	assert_int_equal(
		gp_task_env_merge(base, "{\"CUDA_VISIBLE_DEVICES\": \"0,1\"}", &a),
		-EINVAL);
	assert_null(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),  cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_object), cmocka_unit_test(test_array),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
