/* figures.c — a step's GPU figures on one node as text and back
 * (figures.h). */
#include "slurm/figures.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define STEP_MARK "gpupool slurm-"

/* "gpupool slurm-42.0 on node7 (node 2 of 4):", or without a node
 * "gpupool slurm-42.0:". */
static size_t header_format(const struct gp_slurm_figure *f, char *buf, size_t len)
{
	if (!f)
		return (size_t)snprintf(buf, len, "gpupool :");
	if (!f->node[0])
		return (size_t)snprintf(buf, len, "gpupool %s:", f->step);
	return (size_t)snprintf(buf, len, "gpupool %s on %s (node %u of %u):", f->step,
				f->node, f->node_index + 1, f->nodes);
}

size_t gp_slurm_figures_format(const struct gp_slurm_figure *f, unsigned n, char *buf,
			       size_t len)
{
	size_t used = header_format(n ? f : NULL, buf, len);

	for (unsigned i = 0; i < n; i++)
		used += (size_t)snprintf(
			buf + (used < len ? used : len), used < len ? len - used : 0,
			" %s (%s) %.3f s at %u %%, allocated %.3f GPU-s, used %.3f "
			"GPU-s, "
			"memory %llu MiB%s",
			f[i].uuid, f[i].model, (double)f[i].wall_ms / 1e3, f[i].compute,
			(double)f[i].wall_ms * f[i].compute / 1e5,
			(double)f[i].used_ms / 1e3, (unsigned long long)f[i].mem_mib,
			i + 1 < n ? ";" : "");
	return used;
}

static uint64_t ms_of(double seconds)
{
	return seconds > 0 ? (uint64_t)llround(seconds * 1e3) : 0;
}

/* One device's figures at *at ("GPU-… (model) … MiB"), moving *at past
 * them; 0, or -1 where the text is not ours. */
static int device_parse(const char **at, struct gp_slurm_figure *f)
{
	double wall, allocated, used;
	unsigned long long mib;
	int end = -1;

	if (sscanf(*at,
		   " %95s (%95[^)]) %lf s at %u %%, allocated %lf GPU-s, used %lf GPU-s, "
		   "memory %llu MiB%n",
		   f->uuid, f->model, &wall, &f->compute, &allocated, &used, &mib,
		   &end) < 7 ||
	    end < 0)
		return -1;
	*at += end;
	f->wall_ms = ms_of(wall);
	f->used_ms = ms_of(used);
	f->mem_mib = mib;
	return 0;
}

/* An entry's header at *at (past "gpupool "): its step and node into
 * head, moving *at past the colon; 0, or -1 where it is not ours. */
static int header_parse(const char **at, struct gp_slurm_figure *head)
{
	unsigned place = 0, nodes = 0;
	int end = -1;

	if (sscanf(*at, "%95[^: ]%n", head->step, &end) < 1 || end < 0)
		return -1;
	*at += end;
	if (**at == ':') {
		(*at)++;
		return 0;
	}
	end = -1;
	if (sscanf(*at, " on %95[^ (:] (node %u of %u):%n", head->node, &place, &nodes,
		   &end) < 3 ||
	    end < 0 || place == 0 || place > nodes)
		return -1;
	*at += end;
	head->node_index = place - 1;
	head->nodes = nodes;
	return 0;
}

int gp_slurm_figures_parse(const char *text, struct gp_slurm_figure *out, int max)
{
	int n = 0;

	for (const char *at = strstr(text, STEP_MARK); at; at = strstr(at, STEP_MARK)) {
		struct gp_slurm_figure head = {0};

		at += strlen("gpupool ");
		if (header_parse(&at, &head) < 0)
			continue;
		for (;;) {
			struct gp_slurm_figure f = head;

			if (device_parse(&at, &f) < 0)
				break;
			if (n < max)
				out[n] = f;
			n++;
			if (*at != ';')
				break;
			at++;
		}
	}
	return n;
}
