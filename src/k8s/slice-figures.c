/* slice-figures.c — a pod's figures per device on /metrics, written and
 * read back (slice-figures.h). */
#include "k8s/slice-figures.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define USED "gpupool_slice_used_seconds_total"
#define MEM_USED "gpupool_slice_memory_used_bytes"
#define MEM_LIMIT "gpupool_slice_memory_limit_bytes"
#define COMPUTE "gpupool_slice_compute_percent"
#define VIOLATIONS "gpupool_slice_violations_total"

void gp_slice_figures_head(FILE *f)
{
	fprintf(f, "# HELP " USED " Device time a pod's processes used on a device since "
		   "its container was allocated.\n"
		   "# TYPE " USED " counter\n"
		   "# HELP " MEM_LIMIT " A pod's memory slice on a device.\n"
		   "# TYPE " MEM_LIMIT " gauge\n"
		   "# HELP " MEM_USED " What a pod's processes hold of it.\n"
		   "# TYPE " MEM_USED " gauge\n"
		   "# HELP " COMPUTE " A pod's compute share of a device.\n"
		   "# TYPE " COMPUTE " gauge\n"
		   "# HELP " VIOLATIONS " A pod's processes the node's verifier found breaking "
		   "its slice on a device.\n"
		   "# TYPE " VIOLATIONS " counter\n");
}

void gp_slice_figure_write(FILE *f, const struct gp_slice_figure *s)
{
	char labels[1600];

	snprintf(labels, sizeof(labels),
		 "namespace=\"%s\",pod=\"%s\",uid=\"%s\",container=\"%s\",UUID=\"%s\",Hostname=\"%s\"",
		 s->ns, s->pod, s->uid, s->container, s->uuid, s->node);
	fprintf(f, USED "{%s} %" PRIu64 ".%06" PRIu64 "\n", labels, s->used_us / 1000000,
		s->used_us % 1000000);
	fprintf(f, MEM_LIMIT "{%s} %" PRIu64 "\n", labels, s->mem_limit_bytes);
	fprintf(f, MEM_USED "{%s} %" PRIu64 "\n", labels, s->mem_used_bytes);
	fprintf(f, COMPUTE "{%s} %u\n", labels, s->compute_pct);
	fprintf(f, VIOLATIONS "{%s} %" PRIu64 "\n", labels, s->violations);
}

/* ---- reading -------------------------------------------------------------------------- */

struct figures {
	struct gp_slice_figure *all;
	size_t n, cap;
};

/* Label `key`'s value in a label set `{k="v",...}` (at the brace) into
 * buf; false when absent or malformed. Values are read with Prometheus'
 * escapes (\\, \", \n). */
static bool label_of(const char *set, const char *end, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	for (const char *p = set + 1; p < end;) {
		const char *eq = memchr(p, '=', (size_t)(end - p));
		bool match;
		size_t out = 0;

		if (!eq || eq + 1 >= end || eq[1] != '"')
			return false;
		match = (size_t)(eq - p) == klen && !memcmp(p, key, klen);
		for (p = eq + 2; p < end && *p != '"'; p++) {
			char c = *p;

			if (c == '\\' && p + 1 < end)
				c = *++p == 'n' ? '\n' : *p;
			if (match && out + 1 < len)
				buf[out++] = c;
		}
		if (p >= end)
			return false;
		if (match) {
			buf[out] = 0;
			return true;
		}
		p++;                    /* the closing quote */
		if (p < end && *p == ',')
			p++;
	}
	return false;
}

static struct gp_slice_figure *figure_of(struct figures *fs, const char *uid, const char *uuid)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->all[i].uid, uid) && !strcmp(fs->all[i].uuid, uuid))
			return &fs->all[i];
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? 2 * fs->cap : 16;
		struct gp_slice_figure *more = realloc(fs->all, cap * sizeof(*more));

		if (!more)
			return NULL;
		fs->all = more;
		fs->cap = cap;
	}
	memset(&fs->all[fs->n], 0, sizeof(fs->all[0]));
	snprintf(fs->all[fs->n].uid, sizeof(fs->all[0].uid), "%s", uid);
	snprintf(fs->all[fs->n].uuid, sizeof(fs->all[0].uuid), "%s", uuid);
	return &fs->all[fs->n++];
}

/* One line: 0 (taken or skipped), -ENOMEM. */
static int line_read(struct figures *fs, const char *line, const char *eol)
{
	bool used = !strncmp(line, USED "{", sizeof(USED));
	bool mem = !strncmp(line, MEM_USED "{", sizeof(MEM_USED));
	bool violations = !strncmp(line, VIOLATIONS "{", sizeof(VIOLATIONS));
	const char *set = strchr(line, '{'), *close;
	char uid[GP_KUBE_UID_MAX], uuid[GP_KUBE_UUID_MAX], *end;
	struct gp_slice_figure *s;
	double value;

	if ((!used && !mem && !violations) || !set || set > eol || !(close = memchr(set, '}', (size_t)(eol - set))))
		return 0;
	if (!label_of(set, close, "uid", uid, sizeof(uid)) || !uid[0] ||
	    !label_of(set, close, "UUID", uuid, sizeof(uuid)) || !uuid[0])
		return 0;
	value = strtod(close + 1, &end);
	if (end == close + 1 || value < 0 || value > 1e15)
		return 0;
	if (!(s = figure_of(fs, uid, uuid)))
		return -ENOMEM;
	if (used)
		s->used_us = (uint64_t)(value * 1e6 + 0.5);
	else if (mem)
		s->mem_used_bytes = (uint64_t)value;
	else
		s->violations = (uint64_t)value;
	label_of(set, close, "namespace", s->ns, sizeof(s->ns));
	label_of(set, close, "pod", s->pod, sizeof(s->pod));
	return 0;
}

int gp_slice_figures_read(const char *text, struct gp_slice_figure **ret, size_t *ret_n)
{
	struct figures fs = { 0 };

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');

		if (!eol)
			eol = line + strlen(line);
		if (line_read(&fs, line, eol) < 0) {
			free(fs.all);
			return -ENOMEM;
		}
		line = *eol ? eol + 1 : eol;
	}
	*ret = fs.all;
	*ret_n = fs.n;
	return 0;
}

#define NO_POD_METRIC "gpupool_node_violations_no_pod_total"

void gp_node_violations_write(FILE *f, uint64_t no_pod)
{
	fprintf(f, "# HELP " NO_POD_METRIC " Device processes of no pod the node's verifier "
		   "found.\n# TYPE " NO_POD_METRIC " counter\n" NO_POD_METRIC " %" PRIu64 "\n",
		no_pod);
}

bool gp_node_violations_read(const char *text, uint64_t *ret)
{
	for (const char *at = text; at && (at = strstr(at, NO_POD_METRIC " ")); at++) {
		char *end;
		unsigned long long v;

		if (at != text && at[-1] != '\n')
			continue;       /* inside a HELP or TYPE line */
		v = strtoull(at + strlen(NO_POD_METRIC " "), &end, 10);
		if (end != at + strlen(NO_POD_METRIC " ") && (*end == '\n' || !*end)) {
			*ret = v;
			return true;
		}
	}
	return false;
}
