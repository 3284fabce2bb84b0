/* csvfile.h — reading a CSV file row by row (with libcsv), for the trace
 * loaders and anything else that takes tables from users.
 *
 * The callback gets each row's fields as NUL-terminated strings and the
 * line number the row ends on; it returns 0 to go on or a negative errno to
 * stop, after writing a reason into `err`. gp_csv_read then returns that
 * value. Errors of its own (cannot open, malformed CSV) are described in
 * `err` as well, always as "FILE:LINE: reason". The fields belong to the
 * reader and are valid only during the call. */
#ifndef GP_BASE_CSVFILE_H
#define GP_BASE_CSVFILE_H

#include <stddef.h>

#define GP_CSV_FIELDS_MAX 32
#define GP_ERR_MAX 512

typedef int gp_csv_row_fn(void *ctx, char **field, size_t count,
			  unsigned long line, char *err, size_t err_len);

int gp_csv_read(const char *path, gp_csv_row_fn *row, void *ctx, char *err,
		size_t err_len);

#endif
