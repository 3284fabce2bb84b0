/* vandal.c — a hostile tenant program for the tests of the card's shared
 * files: for SECONDS it writes over every file in DIR (and in the folders
 * in it) it can open for writing, zeros and random bytes by turns, as fast
 * as every 10 ms.
 *
 *   vandal DIR SECONDS
 *
 * At the end it prints "wrote N files (M times), refused K" (N: the files
 * it could write, K: those it could not open for writing), then "wrote
 * NAME" for each it wrote (NAME: its path below DIR). Exit 2 for bad
 * usage, 1 when DIR cannot be read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAMES_MAX 512
#define SIZE_MAX_WRITTEN (1 << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fills buf with zeros (even rounds) or random bytes (odd ones). */
static void junk_fill(unsigned char *buf, size_t len, int round, uint64_t *x)
{
	for (size_t i = 0; i < len; i++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		buf[i] = round % 2 ? (unsigned char)*x : 0;
	}
}

/* Writes over dir/name; 1 when written, 0 when refused. */
static int spoil(const char *dir, const char *name, unsigned char *buf, int round, uint64_t *x)
{
	char path[4096];
	struct stat st;
	size_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 4096;
	if (len > SIZE_MAX_WRITTEN)
		len = SIZE_MAX_WRITTEN;
	junk_fill(buf, len, round, x);
	if (pwrite(fd, buf, len, 0) < 0)
		len = 0;
	close(fd);
	return len > 0;
}

/* The files written, and those refused, by name below DIR. */
struct seen {
	char written[NAMES_MAX][256], refused[NAMES_MAX][256];
	int n_written, n_refused;
	long times;
};

static void note(struct seen *v, const char *name, bool wrote)
{
	char (*list)[256] = wrote ? v->written : v->refused;
	int *count = wrote ? &v->n_written : &v->n_refused;

	for (int i = 0; i < *count; i++)
		if (strcmp(list[i], name) == 0)
			return;
	if (*count < NAMES_MAX)
		snprintf(list[(*count)++], sizeof(list[0]), "%s", name);
}

/* One round over dir/sub (sub "" for dir itself), and the folders in it
 * one level down. -1 when dir cannot be read. */
static int round_over(const char *dir, const char *sub, struct seen *v, unsigned char *buf,
		      int round, uint64_t *x)
{
	char here[4096], name[512];
	struct dirent *e;
	DIR *d;

	snprintf(here, sizeof(here), "%s%s%s", dir, *sub ? "/" : "", sub);
	d = opendir(here);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sub, *sub ? "/" : "", e->d_name);
		if (e->d_type == DT_DIR) {
			if (!*sub)
				round_over(dir, e->d_name, v, buf, round, x);
			continue;
		}
		if (spoil(dir, name, buf, round, x)) {
			v->times++;
			note(v, name, true);
		} else {
			note(v, name, false);
		}
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE_MAX_WRITTEN];
	static struct seen v;
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	double end;

	if (argc != 3 || atof(argv[2]) <= 0) {
		fprintf(stderr, "usage: vandal DIR SECONDS\n");
		return 2;
	}
	end = now_s() + atof(argv[2]);
	for (int round = 0; now_s() < end; round++) {
		if (round_over(argv[1], "", &v, buf, round, &x) < 0) {
			fprintf(stderr, "vandal: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		usleep(10000);
	}
	printf("wrote %d files (%ld times), refused %d\n", v.n_written, v.times, v.n_refused);
	for (int i = 0; i < v.n_written; i++)
		printf("wrote %s\n", v.written[i]);
	return 0;
}
