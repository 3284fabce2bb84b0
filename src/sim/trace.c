/* trace.c — loading openb node and pod lists into core structures. */
#include "sim/trace.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/csvfile.h"
#include "core/models.h"
#include "core/partition.h"

/* Column positions, found from the header row. */
enum { COL_CPU, COL_MEM, COL_GPUS, COL_MILLI, COL_SPEC, COL_MODEL, COLS };

static const char *const column_name[COLS] = {
	"cpu_milli", "memory_mib", NULL, "gpu_milli", "gpu_spec", "model",
};

struct loader {
	struct gp_trace *t;
	int col[COLS];
	bool header_done;
	bool pods;              /* loading pods (else nodes) */
	size_t cap;
};

static int parse_uint(const char *text, const char *what, uint32_t max,
		      uint32_t *ret, char *err, size_t err_len)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (*text == '\0' || *text == '-' || *end != '\0' || errno || v > max) {
		snprintf(err, err_len, "%s must be a whole number from 0 to %u, not \"%s\"",
			 what, max, text);
		return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

static int model_id(struct gp_trace *t, const char *name, char *err,
		    size_t err_len)
{
	for (int i = 0; i < t->models; i++)
		if (strcmp(t->model[i], name) == 0)
			return i;
	if (t->models == GP_MODELS_MAX || strlen(name) >= GP_NAME_MAX ||
	    *name == '\0') {
		snprintf(err, err_len, "bad or too many GPU models (\"%s\"; at most %d)",
			 name, GP_MODELS_MAX);
		return -EINVAL;
	}
	strcpy(t->model[t->models], name);
	return t->models++;
}

static int read_header(struct loader *l, char **field, size_t count, char *err,
		       size_t err_len)
{
	const char *gpus = l->pods ? "num_gpu" : "gpu";

	for (int c = 0; c < COLS; c++)
		l->col[c] = -1;
	for (size_t i = 0; i < count; i++) {
		for (int c = 0; c < COLS; c++)
			if (strcmp(field[i], c == COL_GPUS ? gpus : column_name[c]) == 0)
				l->col[c] = (int)i;
	}
	const int need[] = { COL_CPU, COL_MEM, COL_GPUS,
			     l->pods ? COL_MILLI : COL_MODEL };
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (l->col[need[i]] < 0) {
			snprintf(err, err_len, "header lacks the column \"%s\"",
				 need[i] == COL_GPUS ? gpus : column_name[need[i]]);
			return -EINVAL;
		}
	l->header_done = true;
	return 0;
}

/* Field c of this row, or "" for an optional column that is absent. */
static const char *cell(const struct loader *l, char **field, size_t count, int c)
{
	return l->col[c] >= 0 && (size_t)l->col[c] < count ? field[l->col[c]] : "";
}

static int grow(void **array, size_t *cap, size_t used, size_t size)
{
	if (used < *cap)
		return 0;
	size_t n = *cap ? 2 * *cap : 1024;
	void *p = realloc(*array, n * size);

	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

static int check_width(const struct loader *l, size_t count, char *err,
		       size_t err_len)
{
	for (int c = 0; c < COLS; c++)
		if (l->col[c] >= (int)count && c != COL_SPEC) {
			snprintf(err, err_len, "row has %zu fields, the header promised more",
				 count);
			return -EINVAL;
		}
	return 0;
}

static int node_row(void *ctx, char **field, size_t count, unsigned long line,
		    char *err, size_t err_len)
{
	struct loader *l = ctx;
	struct gp_trace *t = l->t;
	struct gp_node_spec spec = { 0 };
	uint32_t gpus;
	int model;

	(void)line;
	if (!l->header_done)
		return read_header(l, field, count, err, err_len);
	if (check_width(l, count, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_CPU), "cpu_milli", UINT32_MAX,
		       &spec.cpu_milli, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_MEM), "memory_mib", UINT32_MAX,
		       &spec.mem_mib, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_GPUS), "gpu", GP_NODE_DEVICES_MAX,
		       &gpus, err, err_len) < 0)
		return -EINVAL;
	spec.devices = (uint8_t)gpus;
	if (gpus) {
		model = model_id(t, cell(l, field, count, COL_MODEL), err, err_len);
		if (model < 0)
			return model;
		for (uint32_t i = 0; i < gpus; i++)
			spec.device[i] = (struct gp_device_spec){
				.model = (uint8_t)model, .healthy = true,
				.overcommit = GP_COMPUTE_WHOLE,
				.vendor = (uint8_t)gp_model_vendor(t->model[model]),
				.partitions = (uint8_t)gp_part_set_of_model(t->model[model]),
			};
	}
	if (grow((void **)&t->node, &l->cap, t->nodes, sizeof(*t->node)) < 0) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	t->node[t->nodes++] = spec;
	t->gpus += gpus;
	return 0;
}

/* gpu_spec: models separated by '|'; empty means any. */
static int parse_spec(struct gp_trace *t, const char *text, uint64_t *ret,
		      char *err, size_t err_len)
{
	char buf[1024], *save = NULL;
	uint64_t mask = 0;

	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, err_len, "gpu_spec is too long");
		return -EINVAL;
	}
	strcpy(buf, text);
	for (char *name = strtok_r(buf, "|", &save); name;
	     name = strtok_r(NULL, "|", &save)) {
		int id = model_id(t, name, err, err_len);

		if (id < 0)
			return id;
		mask |= 1ull << id;
	}
	*ret = mask;
	return 0;
}

static int pod_request(uint32_t gpus, uint32_t milli,
		       struct gp_request *req, char *err, size_t err_len)
{
	if (gpus == 0 && milli != 0) {
		snprintf(err, err_len, "gpu_milli is %u but num_gpu is 0", milli);
		return -EINVAL;
	}
	if (gpus > 0 && milli == 0) {
		snprintf(err, err_len, "num_gpu is %u but gpu_milli is 0", gpus);
		return -EINVAL;
	}
	if (gpus > 1 && milli < GP_COMPUTE_WHOLE) {
		snprintf(err, err_len,
			 "a share below 1000 gpu_milli needs num_gpu 1, not %u", gpus);
		return -EINVAL;
	}
	req->devices = (uint8_t)gpus;
	req->whole = gpus > 0 && milli == GP_COMPUTE_WHOLE;
	req->dev_compute = req->whole ? 0 : milli;
	return 0;
}

static int pod_row(void *ctx, char **field, size_t count, unsigned long line,
		   char *err, size_t err_len)
{
	struct loader *l = ctx;
	struct gp_trace *t = l->t;
	struct gp_request req = { 0 };
	uint32_t gpus, milli;

	(void)line;
	if (!l->header_done)
		return read_header(l, field, count, err, err_len);
	if (check_width(l, count, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_CPU), "cpu_milli", UINT32_MAX,
		       &req.cpu_milli, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_MEM), "memory_mib", UINT32_MAX,
		       &req.mem_mib, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_GPUS), "num_gpu", GP_NODE_DEVICES_MAX,
		       &gpus, err, err_len) < 0 ||
	    parse_uint(cell(l, field, count, COL_MILLI), "gpu_milli", GP_COMPUTE_WHOLE,
		       &milli, err, err_len) < 0 ||
	    pod_request(gpus, milli, &req, err, err_len) < 0 ||
	    parse_spec(t, cell(l, field, count, COL_SPEC), &req.models, err,
		       err_len) < 0)
		return -EINVAL;
	if (grow((void **)&t->pod, &l->cap, t->pods, sizeof(*t->pod)) < 0) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	t->pod[t->pods++] = req;
	return 0;
}

static int load(struct gp_trace *t, const char *path, bool pods, char *err,
		size_t err_len)
{
	struct loader l = { .t = t, .pods = pods };
	size_t before = pods ? t->pods : t->nodes;
	int r;

	l.cap = before;
	r = gp_csv_read(path, pods ? pod_row : node_row, &l, err, err_len);
	if (r < 0)
		return r;
	if ((pods ? t->pods : t->nodes) == before) {
		snprintf(err, err_len, "%s: no %s in the file", path,
			 pods ? "pods" : "nodes");
		return -EINVAL;
	}
	return 0;
}

int gp_trace_load_nodes(struct gp_trace *t, const char *path, char *err,
			size_t err_len)
{
	return load(t, path, false, err, err_len);
}

int gp_trace_load_pods(struct gp_trace *t, const char *path, char *err,
		       size_t err_len)
{
	return load(t, path, true, err, err_len);
}

void gp_trace_release(struct gp_trace *t)
{
	free(t->node);
	free(t->pod);
	memset(t, 0, sizeof(*t));
}

int gp_trace_cluster(const struct gp_trace *t, uint64_t tie_seed,
		     struct gp_cluster **ret_cluster)
{
	struct gp_cluster *c;
	int r = gp_cluster_new(tie_seed, &c);

	if (r < 0)
		return r;
	for (int i = 0; i < t->models && r >= 0; i++)
		r = gp_cluster_model_id(c, t->model[i], true);
	for (size_t i = 0; i < t->nodes && r >= 0; i++)
		r = gp_cluster_add_node(c, &t->node[i], NULL);
	if (r < 0) {
		gp_cluster_free(c);
		return r;
	}
	*ret_cluster = c;
	return 0;
}
