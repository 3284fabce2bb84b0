/* vandal.c — a hostile tenant program for the tests of the card's shared
 * files: for SECONDS it writes over every file in DIR it can open for
 * writing, zeros and random bytes by turns, as fast as every 10 ms.
 *
 *   vandal DIR SECONDS
 *
 * At the end it prints "wrote N files (M times), refused K" (N: the files
 * it could write, K: those it could not open for writing). Exit 2 for bad
 * usage, 1 when DIR cannot be read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

int main(int argc, char **argv)
{
	static unsigned char buf[SIZE_MAX_WRITTEN];
	static char written[NAMES_MAX][256], refused[NAMES_MAX][256];
	int n_written = 0, n_refused = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	double end;
	long times = 0;

	if (argc != 3 || atof(argv[2]) <= 0) {
		fprintf(stderr, "usage: vandal DIR SECONDS\n");
		return 2;
	}
	end = now_s() + atof(argv[2]);
	for (int round = 0; now_s() < end; round++) {
		DIR *d = opendir(argv[1]);
		struct dirent *e;

		if (!d) {
			fprintf(stderr, "vandal: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		while ((e = readdir(d))) {
			char (*list)[256] = written;
			int *count = &n_written, known = 0;

			if (e->d_name[0] == '.')
				continue;
			if (spoil(argv[1], e->d_name, buf, round, &x))
				times++;
			else
				list = refused, count = &n_refused;
			for (int i = 0; i < *count && !known; i++)
				known = strcmp(list[i], e->d_name) == 0;
			if (!known && *count < NAMES_MAX)
				snprintf(list[(*count)++], sizeof(list[0]), "%s", e->d_name);
		}
		closedir(d);
		usleep(10000);
	}
	printf("wrote %d files (%ld times), refused %d\n", n_written, times, n_refused);
	for (int i = 0; i < n_written; i++)
		printf("wrote %s\n", written[i]);
	return 0;
}
