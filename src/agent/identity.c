/* identity.c — who a task runs as, and the environment it starts with
 * (agent.h, agent-impl.h).
 *
 * A task gets nothing of the agent's environment but the names the
 * configuration passes (GP_AGENT_TASK_ENV by default), so that no secret
 * of the server's (a token, the database's path) reaches it; then what
 * it needs, and what its submitter declared (taskenv.h), which may not
 * take the place of gpupool's own variables. Its user is its tenant's
 * (base/user.h); a user without a home gets one under the run
 * directory, which, where tasks have their own /tmp (launcher.h), is
 * each task's own tmpfs, gone at its end: only its path is kept. */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent-impl.h"
#include "agent/taskenv.h"
#include "base/user.h"
#include "vendor/vendor.h"

#define ENV_MAX 512 /* entries of a task's environment */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

extern char **environ;

/* ---- groups -------------------------------------------------------------- */

static int group_id(const char *name, gid_t *ret)
{
	char buf[4096], *end;
	struct group g, *found = NULL;
	unsigned long v = strtoul(name, &end, 10);

	if (*name && !*end) {
		*ret = (gid_t)v;
		return v > 0 && v < (unsigned long)(gid_t)-1 ? 0 : -EINVAL;
	}
	if (getgrnam_r(name, &g, buf, sizeof(buf), &found) != 0 || !found)
		return -ENOENT;
	*ret = found->gr_gid;
	return 0;
}

int gp_agent_groups_parse(struct gp_agent *a, char *err, size_t err_len)
{
	char list[1024], *save = NULL;

	a->groups[0] = a->task_gid;
	a->groups_n = 1;
	if (!a->o.task_groups || !*a->o.task_groups)
		return 0;
	snprintf(list, sizeof(list), "%s", a->o.task_groups);
	for (char *g = strtok_r(list, ", ", &save); g; g = strtok_r(NULL, ", ", &save)) {
		if (a->groups_n == GP_AGENT_GROUPS_MAX) {
			snprintf(err, err_len, "task groups: at most %d", GP_AGENT_GROUPS_MAX - 1);
			return -E2BIG;
		}
		if (group_id(g, &a->groups[a->groups_n]) < 0) {
			snprintf(err, err_len,
				 "task groups: no group \"%s\" on this machine (name one that "
				 "exists, or its number)",
				 g);
			return -ENOENT;
		}
		a->groups_n++;
	}
	return 0;
}

/* ---- the environment ------------------------------------------------------ */

struct env {
	char *entry[ENV_MAX + 1];
	int n;
	bool full;
};

/* Takes s (malloc'd, "NAME=value"); NULL: out of memory. */
static void env_take(struct env *e, char *s)
{
	if (e->n == ENV_MAX || !s) {
		free(s);
		e->full = true;
		return;
	}
	e->entry[e->n++] = s;
	e->entry[e->n] = NULL;
}

static void env_add(struct env *e, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s=%s", name, value);
	env_take(e, s);
}

static void env_addf(struct env *e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void env_addf(struct env *e, const char *name, const char *fmt, ...)
{
	char value[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	env_add(e, name, value);
}

/* Does NAME (up to '=' in entry) match a pattern of the list ("PATH
 * LC_*")? */
static bool name_passes(const char *list, const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, " ,");
		bool prefix = len > 0 && p[len - 1] == '*';
		size_t want = prefix ? len - 1 : len;

		if (len && (prefix ? n >= want : n == want) && strncmp(entry, p, want) == 0)
			return true;
		p += len;
		p += strspn(p, " ,");
	}
	return false;
}

/* Does entry set one of the names in list? */
static bool name_in(const char *const *list, const char *entry)
{
	for (int i = 0; list[i]; i++)
		if (strncmp(entry, list[i], strlen(list[i])) == 0)
			return true;
	return false;
}

/* What the agent sets itself: neither passed nor declared may take its
 * place (nor may any vendor's visibility variable: visible_set_here). */
static const char *const set_here[] = { "HOME=", "USER=", "LOGNAME=", "LD_PRELOAD=",
					"GPUPOOL_TASK_ID=", "GPUPOOL_TASK_SECRET=",
					"GPUPOOL_RUN_DIR=", "GPUPOOL_ARRAY_ID=",
					"GPUPOOL_ARRAY_INDEX=", NULL };

/* Is entry ("NAME=value") one of the vendors' visibility variables? */
static bool visible_set_here(const char *entry)
{
	size_t len = strcspn(entry, "=");

	for (size_t i = 0; gp_vendors[i]; i++)
		for (const char *const *v = gp_vendors[i]->visible_env; *v; v++)
			if (strlen(*v) == len && strncmp(entry, *v, len) == 0)
				return true;
	return false;
}

static void env_passed(struct gp_agent *a, struct env *e)
{
	const char *list = a->o.task_env ? a->o.task_env : GP_AGENT_TASK_ENV;
	bool path = false;

	for (char **v = environ; *v; v++) {
		if (!name_passes(list, *v) || name_in(set_here, *v) || visible_set_here(*v))
			continue;
		env_take(e, strdup(*v));
		path |= strncmp(*v, "PATH=", 5) == 0;
	}
	if (!path)
		env_add(e, "PATH", DEFAULT_PATH);
}

/* Each vendor's visibility variables, for the vendors this node has
 * devices of (NVIDIA's always): the task's devices of that vendor, by
 * UUID where its runtime takes them (CUDA), else by the vendor's own
 * indices; empty for a vendor none of whose devices the task has. */
static void env_devices(struct gp_agent *a, const struct gp_agent_task *t, struct env *e)
{
	for (size_t v = 0; gp_vendors[v]; v++) {
		const struct gp_vendor_ops *ops = gp_vendors[v];
		char list[GP_AGENT_DEVICES_MAX * (GP_DEVICE_TEXT_MAX + 1)] = "";
		bool here = strcmp(ops->name, "nvidia") == 0;
		size_t used = 0;

		for (unsigned i = 0; i < a->node.devices; i++)
			here |= a->node.device[i].vendor == ops;
		for (unsigned i = 0; i < t->devices && used < sizeof(list); i++) {
			const struct gp_agent_device *d = &a->node.device[t->device[i]];
			const struct gp_part *part = gp_agent_part_of(a, t->id, t->device[i]);

			if (d->vendor != ops)
				continue;
			if (ops->visible_by_uuid)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 used ? "," : "",
							 part ? part->uuid : d->uuid);
			else
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%u",
							 used ? "," : "", d->local);
		}
		for (const char *const *name = ops->visible_env; here && *name; name++)
			env_add(e, *name, list);
	}
}

static void env_build(struct gp_agent *a, const struct gp_agent_task *t, const char *home,
		      const char *user, const char *secret, struct env *e)
{
	env_passed(a, e);
	env_add(e, "HOME", home);
	env_add(e, "USER", user);
	env_add(e, "LOGNAME", user);
	env_devices(a, t, e);
	env_addf(e, "GPUPOOL_TASK_ID", "task-%" PRId64, t->id);
	env_add(e, "GPUPOOL_TASK_SECRET", secret);
	env_add(e, "GPUPOOL_RUN_DIR", a->run_dir);
	if (t->array_id) { /* as Slurm's SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID */
		env_addf(e, "GPUPOOL_ARRAY_ID", "%" PRId64, t->array_id);
		env_addf(e, "GPUPOOL_ARRAY_INDEX", "%u", t->array_index);
	}
	if (a->o.shim_path)
		env_add(e, "LD_PRELOAD", a->o.shim_path);
}

/* ---- who ------------------------------------------------------------------ */

/* A home of the task's user's own, under the run directory, for a user
 * without one: made 0700 and given to the user. */
static int home_make(struct gp_agent *a, uid_t uid, gid_t gid, char *home, size_t len)
{
	char dir[PATH_MAX];
	struct stat st;
	int n = snprintf(dir, sizeof(dir), "%s/home", a->run_dir);

	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0711) < 0 && errno != EEXIST)
		return -errno;
	n = snprintf(home, len, "%s/%u", dir, (unsigned)uid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(home, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(home, &st) < 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if ((st.st_uid != uid || st.st_gid != gid) && lchown(home, uid, gid) < 0)
		return -errno;
	return 0;
}

/* The task's user: its tenant's, or the tenant's automatic one. */
static int user_of(struct gp_agent *a, const struct gp_agent_task *t, struct gp_user *u,
		   char *err, size_t err_len)
{
	if (t->user && *t->user)
		return gp_user_resolve(t->user, u, err, err_len);
	return gp_user_auto(a->o.uid_base, t->tenant, u, err, err_len);
}

/* As root: the task's user, groups and home (a home of its own under the
 * run directory when its passwd entry gives none). */
static int identity_user(struct gp_agent *a, const struct gp_agent_task *t,
			 struct gp_task_identity *ret, char *name, size_t name_len, char *home,
			 size_t home_len, char *err, size_t err_len)
{
	struct gp_user u;
	int r = user_of(a, t, &u, err, err_len);

	if (r < 0)
		return r;
	ret->switch_user = true;
	ret->user = (struct gp_launch_user){ .uid = u.uid, .gid = u.gid, .groups = a->groups,
					     .groups_n = a->groups_n };
	if (u.name[0])
		snprintf(name, name_len, "%s", u.name);
	else
		snprintf(name, name_len, "gpupool-tenant-%" PRId64, t->tenant);
	if (u.home[0]) {
		snprintf(home, home_len, "%s", u.home);
		return 0;
	}
	ret->home_ours = true;
	r = home_make(a, u.uid, u.gid, home, home_len);
	if (r < 0)
		snprintf(err, err_len, "cannot make a home for uid %u under %s/home: %s",
			 (unsigned)u.uid, a->run_dir, strerror(-r));
	return r;
}

/* The agent's entries, then the submitter's merged in (taskenv.h). */
static int identity_env(struct gp_agent *a, const struct gp_agent_task *t, const char *home,
			const char *name, struct gp_task_identity *ret, char *err,
			size_t err_len)
{
	struct env *e = calloc(1, sizeof(*e));
	int r = e ? 0 : -ENOMEM;

	if (e)
		env_build(a, t, home, name, ret->secret, e);
	if (e && e->full) {
		r = -E2BIG;
		snprintf(err, err_len, "the task's environment is over %d entries", ENV_MAX);
	}
	if (r == 0) {
		r = gp_task_env_merge((const char *const *)e->entry, t->env ? t->env : "{}",
				      &ret->env);
		if (r < 0)
			snprintf(err, err_len, "its declared variables are not valid");
	}
	for (int i = 0; e && i < e->n; i++)
		free(e->entry[i]);
	free(e);
	return r;
}

int gp_task_identity_make(struct gp_agent *a, const struct gp_agent_task *t,
			  struct gp_task_identity *ret, char *err, size_t err_len)
{
	char home[PATH_MAX], name[GP_USER_NAME_MAX + 32];
	const char *env_home = getenv("HOME"), *env_user = getenv("USER");
	int r;

	*ret = (struct gp_task_identity){ 0 };
	r = gp_task_secret_new(ret->secret);
	if (r < 0) {
		snprintf(err, err_len, "cannot make its secret: %s", strerror(-r));
		return r;
	}
	if (a->privileged) {
		r = identity_user(a, t, ret, name, sizeof(name), home, sizeof(home), err,
				  err_len);
	} else {
		snprintf(home, sizeof(home), "%s", env_home ? env_home : "/");
		snprintf(name, sizeof(name), "%s", env_user ? env_user : "");
	}
	snprintf(ret->home, sizeof(ret->home), "%s", home);
	if (r == 0)
		r = identity_env(a, t, home, name, ret, err, err_len);
	if (r < 0)
		gp_task_identity_release(ret);
	return r;
}

void gp_task_identity_release(struct gp_task_identity *id)
{
	id->env = gp_task_env_free(id->env);
}
