/* sacct.c — a month's GPU usage from Slurm's accounting (sacct.h). */
#include "slurm/sacct.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/month.h"
#include "slurm/comment.h"

extern char **environ;

/* ---- adding up ----------------------------------------------------------- */

static int64_t tenant_id(struct gp_slurm_usage *u, const char *account)
{
	struct gp_tenant *more;

	for (int i = 0; i < u->n_tenants; i++)
		if (strcmp(u->tenants[i].name, account) == 0)
			return u->tenants[i].id;
	more = realloc(u->tenants, (size_t)(u->n_tenants + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	u->tenants = more;
	more[u->n_tenants] = (struct gp_tenant){.id = u->n_tenants + 1};
	snprintf(more[u->n_tenants].name, sizeof(more->name), "%s", account);
	return ++u->n_tenants;
}

static struct gp_usage_sum *sum_of(struct gp_slurm_usage *u, int64_t tenant,
				   const char *model)
{
	struct gp_usage_sum *more;

	for (int i = 0; i < u->n; i++)
		if (u->sums[i].tenant == tenant &&
		    strcmp(u->sums[i].device_model, model) == 0)
			return &u->sums[i];
	more = realloc(u->sums, (size_t)(u->n + 1) * sizeof(*more));
	if (!more)
		return NULL;
	u->sums = more;
	more[u->n] = (struct gp_usage_sum){.tenant = tenant};
	snprintf(more[u->n].device_model, sizeof(more->device_model), "%s", model);
	return &more[u->n++];
}

int gp_slurm_usage_add(struct gp_slurm_usage *u, const char *account,
		       const struct gp_slurm_figure *f)
{
	int64_t tenant = tenant_id(u, account);
	struct gp_usage_sum *s = tenant < 0 ? NULL : sum_of(u, tenant, f->model);
	int64_t wall = (int64_t)f->wall_ms;

	if (!s)
		return -ENOMEM;
	s->records++;
	s->duration_ms += wall;
	s->pct_ms += (int64_t)f->compute * wall;
	s->mib_ms += (int64_t)f->mem_mib * wall;
	s->used_ms += (int64_t)f->used_ms;
	return 0;
}

static const char *account_of(const struct gp_slurm_usage *u, int64_t tenant)
{
	return u->tenants[tenant - 1].name;
}

static const struct gp_slurm_usage *sorting; /* qsort has no context */

static int sum_order(const void *a, const void *b)
{
	const struct gp_usage_sum *x = a, *y = b;
	int by_account =
		strcmp(account_of(sorting, x->tenant), account_of(sorting, y->tenant));

	return by_account ? by_account : strcmp(x->device_model, y->device_model);
}

/* ---- sacct's answer ------------------------------------------------------- */

/* One line: "ACCOUNT|START|COMMENT". Every figure counts once: each
 * step on each node of the job (comment.h), however many. */
static int line_add(char *line, int64_t from_ms, int64_t to_ms, struct gp_slurm_usage *u)
{
	struct gp_slurm_figure *f = NULL;
	char *start = strchr(line, '|'), *comment = start ? strchr(start + 1, '|') : NULL;
	int64_t start_ms;
	size_t n = 0;
	int r;

	if (!comment)
		return 0;
	*start++ = '\0';
	*comment++ = '\0';
	start_ms = strtoll(start, NULL, 10) * 1000;
	if (start_ms < from_ms || start_ms >= to_ms)
		return 0;
	r = gp_slurm_figures_read(comment, &f, &n);
	n = r == 0 ? gp_slurm_figures_unique(f, n) : 0;
	for (size_t i = 0; r == 0 && i < n; i++)
		r = gp_slurm_usage_add(u, line, &f[i]);
	free(f);
	return r;
}

int gp_slurm_usage_read(FILE *in, int64_t from_ms, int64_t to_ms,
			struct gp_slurm_usage *u)
{
	char *line = NULL;
	size_t cap = 0;
	int r = 0;

	while (r == 0 && getline(&line, &cap, in) > 0) {
		line[strcspn(line, "\n")] = '\0';
		r = line_add(line, from_ms, to_ms, u);
	}
	free(line);
	sorting = u;
	if (u->n > 1)
		qsort(u->sums, (size_t)u->n, sizeof(*u->sums), sum_order);
	return r;
}

/* ---- running sacct -------------------------------------------------------- */

/* sacct in UTC, times as unix seconds, its stdout into a pipe; its pid,
 * or -1 (errno set). */
static pid_t sacct_start(const char *month, const char *account, int *ret_fd)
{
	char from[32], to[32], next[GP_MONTH_TEXT];
	int64_t from_ms, to_ms;
	char *argv[] = {"sacct",
			"--allusers",
			"--allocations",
			"--noheader",
			"--parsable2",
			"--format=Account,Start,AdminComment",
			"--starttime",
			from,
			"--endtime",
			to,
			account ? "--accounts" : NULL,
			(char *)account,
			NULL};
	posix_spawn_file_actions_t fa;
	int fd[2], rc;
	pid_t pid;

	gp_month_parse(month, &from_ms, &to_ms);
	gp_month_format(to_ms, next);
	snprintf(from, sizeof(from), "%s-01T00:00:00", month);
	snprintf(to, sizeof(to), "%s-01T00:00:00", next);
	setenv("TZ", "UTC", 1);
	setenv("SLURM_TIME_FORMAT", "%s", 1);
	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
	rc = posix_spawnp(&pid, "sacct", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (rc != 0) {
		close(fd[0]);
		errno = rc;
		return -1;
	}
	*ret_fd = fd[0];
	return pid;
}

int gp_slurm_usage_month(const char *month, const char *account, struct gp_slurm_usage *u,
			 char *err, size_t err_len)
{
	int64_t from_ms, to_ms;
	int fd = -1, status = 0, r;
	pid_t pid;
	FILE *in;

	if (gp_month_parse(month, &from_ms, &to_ms) < 0) {
		snprintf(err, err_len, "\"%s\" is not a month (YYYY-MM)", month);
		return -1;
	}
	pid = sacct_start(month, account, &fd);
	if (pid < 0) {
		snprintf(err, err_len,
			 "cannot run sacct (%s): install slurm-client, and run this on a "
			 "host of the Slurm cluster",
			 strerror(errno));
		return -1;
	}
	in = fdopen(fd, "r");
	r = in ? gp_slurm_usage_read(in, from_ms, to_ms, u) : -ENOMEM;
	if (in)
		fclose(in);
	else
		close(fd);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, err_len,
			 "sacct failed (its message is above): the bill reads Slurm's "
			 "accounting database, so slurmdbd must run and slurm.conf must "
			 "have AccountingStorageType=accounting_storage/slurmdbd "
			 "(docs/slurm.md)");
		return -1;
	}
	if (r < 0)
		snprintf(err, err_len, "out of memory reading sacct's answer");
	return r < 0 ? -1 : 0;
}

void gp_slurm_usage_free(struct gp_slurm_usage *u)
{
	free(u->sums);
	free(u->tenants);
	*u = (struct gp_slurm_usage){0};
}
