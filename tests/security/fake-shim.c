/* fake-shim.c — a hostile tenant's preload library for the verifier's
 * tests: it does nothing but map the file named by $GPUPOOL_FAKE_SHIM
 * (the real interposer), so that the process's /proc/PID/maps shows it,
 * while nothing of the interposer runs. A verifier that believed a
 * mapping would let the process use the whole device. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((constructor)) static void fake_shim_map(void)
{
	const char *path = getenv("GPUPOOL_FAKE_SHIM");
	struct stat st;
	int fd;

	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &st) == 0)
		mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
}
