/* api-ui.c — the web console's files (docs/console.md): GET /ui/ is its
 * page, /ui/NAME its scripts, styles and pictures, from the console's
 * folder (--ui-dir), and /ui/lib/chart.js the charting library, Debian's
 * libjs-chart.js (--ui-chart-js). Files only: every figure the pages show
 * they ask of the REST API with the user's own token, as any client
 * would, so the console can show nothing the API would not.
 *
 * The names served are one path segment of letters, digits, '.', '_'
 * and '-', not starting with '.', of a known type, a regular file and
 * not a symbolic link; anything else is 404.
 * Every answer forbids scripts from elsewhere and framing (CSP), and
 * tells the browser to ask again rather than keep a stale copy. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/http.h"
#include "server/api-impl.h"

#define UI_FILE_MAX   (8u << 20) /* bytes; Chart.js is about 200 KiB */
#define UI_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

static const struct {
	const char *suffix, *type;
} types[] = {
	{".html", "text/html; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".ico", "image/x-icon"},
};

/* The Content-Type of a name the console may serve; NULL for any other. */
static const char *type_of(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > 64 || name[0] == '.' || strspn(name, UI_NAME_CHARS) != len)
		return NULL;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t n = strlen(types[i].suffix);

		if (len > n && strcmp(name + len - n, types[i].suffix) == 0)
			return types[i].type;
	}
	return NULL;
}

/* The whole of a regular file into *ret (malloc'd); its size, or -errno.
 * flags: O_NOFOLLOW, or 0. */
static ssize_t file_read(const char *path, int flags, char **ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	struct stat st;
	ssize_t got = 0;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > UI_FILE_MAX) {
		close(fd);
		return -ENOENT;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)(st.st_size - got));

		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	if (!buf || got != st.st_size) {
		free(buf);
		return buf ? -EIO : -ENOMEM;
	}
	*ret = buf;
	return got;
}

static void headers_add(struct gp_http_reply *ret)
{
	ret->header[0].name = "Content-Security-Policy";
	snprintf(ret->header[0].value, sizeof(ret->header[0].value),
		 "default-src 'self'; frame-ancestors 'none'");
	ret->header[1].name = "Cache-Control";
	snprintf(ret->header[1].value, sizeof(ret->header[1].value), "no-cache");
}

static void file_send(struct gp_http_reply *ret, const char *path, int flags,
		      const char *type, const char *missing)
{
	char *text = NULL;
	ssize_t n = file_read(path, flags, &text);

	if (n < 0) {
		gp_http_error(ret, 404, "%s", missing);
		return;
	}
	gp_http_bytes(ret, 200, text, (size_t)n, type);
	headers_add(ret);
}

void gp_api_ui(void *ctx, const struct gp_http_request *req, struct gp_http_reply *ret)
{
	struct gp_api *api = ctx;
	const char *name = strrchr(req->path, '/') + 1, *type;
	char path[PATH_MAX + 80], missing[PATH_MAX + 160];

	if (strcmp(req->path, "/ui") == 0) {
		ret->status = 301;
		snprintf(ret->location, sizeof(ret->location), "/ui/");
		return;
	}
	if (strncmp(req->path, "/ui/lib/", 8) == 0) {
		if (strcmp(name, "chart.js") != 0) {
			gp_http_error(ret, 404, "the console's library is lib/chart.js");
			return;
		}
		snprintf(missing, sizeof(missing),
			 "the charting library is not at %s: install Debian's "
			 "libjs-chart.js "
			 "(scripts/install-deps.sh demo does), or give gpupool server "
			 "--ui-chart-js",
			 api->ui_chart_js[0] ? api->ui_chart_js : "(none given)");
		file_send(ret, api->ui_chart_js, 0, "text/javascript; charset=utf-8",
			  missing);
		return;
	}
	if (!*name)
		name = "index.html";
	type = type_of(name);
	if (!type || !api->ui_dir[0]) {
		gp_http_error(ret, 404, "%s",
			      type ? "the console's files were not found: give gpupool "
				     "server --ui-dir DIR (the checkout's ui/)"
				   : "no such file of the console");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", api->ui_dir, name);
	snprintf(missing, sizeof(missing), "the console has no file %s", name);
	file_send(ret, path, O_NOFOLLOW, type, missing);
}
