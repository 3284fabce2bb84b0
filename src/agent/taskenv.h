/* taskenv.h — the environment variables a submitter declares for a task
 * (the "env" object of POST /v1/tasks, docs/api.md): what may be
 * declared, and the arrays of "NAME=value" strings that execve takes.
 *
 * A task runs with a clean environment: only what the agent sets (its
 * devices, its task id, the preload, PATH, HOME, the locale, ...) and
 * what its submitter declared. Declared variables are checked the same
 * way by the API, the CLI and here (one implementation):
 *   - at most GP_TASK_ENV_MAX of them;
 *   - names match [A-Za-z_][A-Za-z0-9_]*, at most GP_TASK_ENV_NAME_MAX bytes;
 *   - values are strings of at most GP_TASK_ENV_VALUE_MAX bytes, without NUL;
 *   - names gpupool sets itself are reserved (gp_task_env_name_check says
 *     which and why): GPUPOOL_*, LD_PRELOAD, LD_AUDIT, the device
 *     visibility variables of every vendor (CUDA_VISIBLE_DEVICES,
 *     NVIDIA_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES,
 *     ROCR_VISIBLE_DEVICES, MLU_VISIBLE_DEVICES, any other *_VISIBLE_DEVICES,
 *     GPU_DEVICE_ORDINAL, ZE_AFFINITY_MASK), HOME, USER and LOGNAME.
 * LD_LIBRARY_PATH may be declared: gp_task_env_merge appends it after the
 * agent's own value (the driver's path stays first). Other declared
 * variables (PATH, LANG, ...) replace the agent's defaults of that name.
 *
 * Build the arrays before fork: they are malloc'd.
 *
 * Ownership: the arrays returned are malloc'd, NULL-terminated, each
 * string malloc'd too; the caller frees them with gp_task_env_free. JSON
 * given in is borrowed. Functions return 0 or a negative errno (-EINVAL
 * with the reason in err, where there is one; -ENOMEM); outputs are
 * written only on success. err is always terminated when err_len > 0. */
#ifndef GP_AGENT_TASKENV_H
#define GP_AGENT_TASKENV_H

#include <jansson.h>
#include <stddef.h>

#define GP_TASK_ENV_MAX	      64
#define GP_TASK_ENV_NAME_MAX  128  /* bytes, without the NUL */
#define GP_TASK_ENV_VALUE_MAX 4096 /* bytes, without the NUL */

/* May a submitter declare a variable of this name? -EINVAL with the reason
 * (malformed, or reserved and why) when not. */
int gp_task_env_name_check(const char *name, char *err, size_t err_len);

/* The whole "env" object: an object of at most GP_TASK_ENV_MAX members,
 * each a good name with a good value. -EINVAL with the reason, which
 * names the variable, when not. */
int gp_task_env_check(json_t *env, char *err, size_t err_len);

/* The declared variables of json (the text of an "env" object, as the
 * store keeps it: gp_store_task_env_get) as "NAME=value" strings, in
 * the object's order. "{}" gives an array of only the NULL. -EINVAL when
 * the text is not JSON or is not a good "env" (it is checked again here:
 * a value that did not come through the API must not reach a task). */
int gp_task_env_array(const char *json, char ***ret_array);

/* What execve takes for a task: base (the agent's own "NAME=value"
 * entries, NULL-terminated; NULL: none), then the declared variables of
 * json: one whose name base has replaces it, but LD_LIBRARY_PATH, whose
 * value becomes base's, ':', the declared one; the others follow base,
 * in json's order. Base entries without '=' are kept as they are. */
int gp_task_env_merge(const char *const *base, const char *json, char ***ret_array);

/* Frees an array of gp_task_env_array or _merge. Accepts NULL; returns NULL. */
char **gp_task_env_free(char **array);

#endif
