/* csvfile.c — feeds a file to libcsv one line at a time so that every row
 * can be traced back to the line it came from. */
#include "base/csvfile.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	const char *path;
	unsigned long line;
	char *field[GP_CSV_FIELDS_MAX];
	size_t count;
	gp_csv_row_fn *row;
	void *ctx;
	char *err;
	size_t err_len;
	int status;             /* first error; stops further rows */
};

static void fields_clear(struct reader *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->field[i]);
	r->count = 0;
}

static void on_field(void *data, size_t len, void *ctx)
{
	struct reader *r = ctx;
	char *copy;

	if (r->status < 0)
		return;
	if (r->count == GP_CSV_FIELDS_MAX) {
		snprintf(r->err, r->err_len, "%s:%lu: more than %d fields", r->path,
			 r->line, GP_CSV_FIELDS_MAX);
		r->status = -EINVAL;
		return;
	}
	copy = malloc(len + 1);
	if (!copy) {
		snprintf(r->err, r->err_len, "%s:%lu: out of memory", r->path, r->line);
		r->status = -ENOMEM;
		return;
	}
	memcpy(copy, data, len);
	copy[len] = '\0';
	r->field[r->count++] = copy;
}

static void on_row(int terminator, void *ctx)
{
	struct reader *r = ctx;
	char prefix[GP_ERR_MAX];

	(void)terminator;
	if (r->status == 0) {
		int s = r->row(r->ctx, r->field, r->count, r->line, prefix,
			       sizeof(prefix));

		if (s < 0) {
			snprintf(r->err, r->err_len, "%s:%lu: %s", r->path, r->line,
				 prefix);
			r->status = s;
		}
	}
	fields_clear(r);
}

int gp_csv_read(const char *path, gp_csv_row_fn *row, void *ctx, char *err,
		size_t err_len)
{
	struct reader r = { .path = path, .row = row, .ctx = ctx, .err = err,
			    .err_len = err_len };
	struct csv_parser parser;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(e));
		return -e;
	}
	if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
		fclose(f);
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (r.status == 0 && (len = getline(&line, &cap, f)) >= 0) {
		r.line++;
		if (csv_parse(&parser, line, (size_t)len, on_field, on_row, &r) !=
		    (size_t)len && r.status == 0) {
			snprintf(err, err_len, "%s:%lu: %s", path, r.line,
				 csv_strerror(csv_error(&parser)));
			r.status = -EINVAL;
		}
	}
	if (r.status == 0 && ferror(f)) {
		snprintf(err, err_len, "%s: read error", path);
		r.status = -EIO;
	}
	if (r.status == 0 && csv_fini(&parser, on_field, on_row, &r) != 0 &&
	    r.status == 0) {
		snprintf(err, err_len, "%s:%lu: %s", path, r.line,
			 csv_strerror(csv_error(&parser)));
		r.status = -EINVAL;
	}
	fields_clear(&r);
	csv_free(&parser);
	free(line);
	fclose(f);
	return r.status;
}
