/* taskenv.c — the variables a submitter declares for a task: their checks
 * and the arrays execve takes (see taskenv.h). The names gpupool keeps
 * for itself are one table below, each with the reason its message
 * gives; the API (through fields.c), the CLI and the agent all check
 * with the functions here. */
#include "agent/taskenv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fail.h"

#define NAME_FIRST   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
#define NAME_CHARS   NAME_FIRST "0123456789"
#define NAME_SHOWN   64 /* bytes of a bad name a message shows */
#define LIBRARY_PATH "LD_LIBRARY_PATH"

#define WHY_DEVICES "the agent sets the devices a task may see to those it was given"
#define WHY_USER    "the agent sets it for the tenant's Unix user the task runs as"

enum match { EXACT, PREFIX, SUFFIX };

/* The names gpupool sets itself. */
static const struct {
	const char *name;
	enum match match;
	const char *why;
} reserved[] = {
	{"GPUPOOL_", PREFIX,
	 "gpupool sets the GPUPOOL_* variables itself: the task's id and limits"},
	{"LD_PRELOAD", EXACT,
	 "it preloads gpupool's interposer, which enforces the task's slice"},
	{"LD_AUDIT", EXACT, "it would load code ahead of gpupool's interposer"},
	{"_VISIBLE_DEVICES", SUFFIX, WHY_DEVICES},
	{"GPU_DEVICE_ORDINAL", EXACT, WHY_DEVICES},
	{"ZE_AFFINITY_MASK", EXACT, WHY_DEVICES},
	{"HOME", EXACT, WHY_USER},
	{"USER", EXACT, WHY_USER},
	{"LOGNAME", EXACT, WHY_USER},
};


/* ---- checks ------------------------------------------------------------- */

static bool is_match(const char *name, const char *pattern, enum match m)
{
	size_t n = strlen(name), p = strlen(pattern);

	switch (m) {
	case EXACT: return !strcmp(name, pattern);
	case PREFIX: return !strncmp(name, pattern, p);
	case SUFFIX: return n >= p && !strcmp(name + n - p, pattern);
	}
	return false;
}

int gp_task_env_name_check(const char *name, char *err, size_t err_len)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > GP_TASK_ENV_NAME_MAX || !strchr(NAME_FIRST, name[0]) ||
	    strspn(name, NAME_CHARS) != n)
		return gp_fail(
			err, err_len, -EINVAL,
			"variable \"%.*s%s\": a name is 1 to %d letters, digits or '_', "
			"not starting with a digit",
			NAME_SHOWN, name ? name : "", n > NAME_SHOWN ? "..." : "",
			GP_TASK_ENV_NAME_MAX);
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (is_match(name, reserved[i].name, reserved[i].match))
			return gp_fail(err, err_len, -EINVAL,
				    "variable \"%s\" is gpupool's own (%s); leave it out",
				    name, reserved[i].why);
	return 0;
}

static int value_check(const char *name, json_t *v, char *err, size_t len)
{
	size_t n = json_string_length(v);

	if (!json_is_string(v))
		return gp_fail(err, len, -EINVAL,
			    "variable \"%s\": the value must be a string (quote numbers: "
			    "\"1\")",
			    name);
	if (n > GP_TASK_ENV_VALUE_MAX)
		return gp_fail(err, len, -EINVAL,
			    "variable \"%s\": the value is %zu bytes, over %d", name, n,
			    GP_TASK_ENV_VALUE_MAX);
	if (memchr(json_string_value(v), '\0', n))
		return gp_fail(err, len, -EINVAL,
			    "variable \"%s\": the value holds a NUL byte, which no "
			    "environment "
			    "can",
			    name);
	return 0;
}

int gp_task_env_check(json_t *env, char *err, size_t err_len)
{
	const char *name;
	size_t name_len;
	json_t *v;
	int r;

	if (!json_is_object(env))
		return gp_fail(
			err, err_len, -EINVAL,
			"it must be an object of variables: {\"NAME\": \"value\", ...}");
	if (json_object_size(env) > GP_TASK_ENV_MAX)
		return gp_fail(err, err_len, -EINVAL, "%zu variables, over %d",
			    json_object_size(env), GP_TASK_ENV_MAX);
	json_object_keylen_foreach(env, name, name_len, v)
	{
		if (name_len != strlen(name))
			return gp_fail(err, err_len, -EINVAL,
				    "variable \"%s...\": a name holds a NUL byte", name);
		r = gp_task_env_name_check(name, err, err_len);
		if (r == 0)
			r = value_check(name, v, err, err_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- arrays ------------------------------------------------------------- */

char **gp_task_env_free(char **array)
{
	if (array)
		for (char **e = array; *e; e++)
			free(*e);
	free(array);
	return NULL;
}

/* The declared variables of json, checked; the caller's (json_decref). */
static int env_load(const char *json, json_t **ret)
{
	json_t *env = json ? json_loads(json, JSON_REJECT_DUPLICATES, NULL) : NULL;

	if (!env)
		return -EINVAL;
	if (gp_task_env_check(env, NULL, 0) < 0) {
		json_decref(env);
		return -EINVAL;
	}
	*ret = env;
	return 0;
}

/* "NAME=a:b", leaving out an empty part (an empty element of a search
 * path would mean the current directory). */
static char *path_join(const char *name, const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s=%s%s%s", name, a, *a && *b ? ":" : "", b) < 0)
		return NULL;
	return s;
}

/* The entry of base that comes out: as it is, or replaced or extended by
 * the declared variable of its name. */
static char *base_entry(const char *entry, json_t *env)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : 0;
	json_t *v = eq ? json_object_getn(env, entry, n) : NULL;
	char *s;

	if (!v)
		return strdup(entry);
	if (n == strlen(LIBRARY_PATH) && !strncmp(entry, LIBRARY_PATH, n))
		return path_join(LIBRARY_PATH, eq + 1, json_string_value(v));
	if (asprintf(&s, "%.*s=%s", (int)n, entry, json_string_value(v)) < 0)
		return NULL;
	return s;
}

/* Does base have an entry "name=..."? */
static bool base_has(const char *const *base, const char *name)
{
	size_t n = strlen(name);

	for (; base && *base; base++)
		if (!strncmp(*base, name, n) && (*base)[n] == '=')
			return true;
	return false;
}

static int array_fill(const char *const *base, size_t n_base, json_t *env, char **array)
{
	size_t n = 0;
	const char *name;
	json_t *v;

	for (; n < n_base; n++)
		if (!(array[n] = base_entry(base[n], env)))
			return -ENOMEM;
	json_object_foreach(env, name, v)
	{
		if (base_has(base, name))
			continue;
		if (asprintf(&array[n], "%s=%s", name, json_string_value(v)) < 0) {
			array[n] = NULL;
			return -ENOMEM;
		}
		n++;
	}
	return 0;
}

int gp_task_env_merge(const char *const *base, const char *json, char ***ret_array)
{
	size_t n_base = 0;
	json_t *env = NULL;
	char **array;
	int r;

	if (!ret_array || env_load(json, &env) < 0)
		return -EINVAL;
	while (base && base[n_base])
		n_base++;
	array = calloc(n_base + json_object_size(env) + 1, sizeof(*array));
	r = array ? array_fill(base, n_base, env, array) : -ENOMEM;
	json_decref(env);
	if (r < 0) {
		gp_task_env_free(array);
		return r;
	}
	*ret_array = array;
	return 0;
}

int gp_task_env_array(const char *json, char ***ret_array)
{
	return gp_task_env_merge(NULL, json, ret_array);
}
