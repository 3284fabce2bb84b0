/* proc-table.h — the rows cuGetProcAddress chooses from.
 *
 * simdev's driver and the interposer both answer cuGetProcAddress from a
 * table that src/simdev/gen-procs.awk generates out of
 * src/include/cuda-abi-map.txt: one row per (name, cudaVersion,
 * per-thread) variant of a driver function. gp_proc_find makes the
 * driver's choice among them, so that both pick the same variant. */
#ifndef GP_BASE_PROC_TABLE_H
#define GP_BASE_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>

struct proc_entry {
	const char *name;
	int version;	    /* the lowest cudaVersion this variant serves */
	int per_thread;	    /* a _ptsz/_ptds variant */
	const char *symbol; /* its exported name */
	void (*fn)(void);   /* NULL: answered with CUDA_ERROR_NOT_SUPPORTED */
};

/* The variant of `name` for the ABI of `version`: among the rows of that
 * name, the per-thread ones when asked for (and there are any), then the
 * one with the highest version not above `version`. NULL when there is
 * none; *ret_known (when not NULL) says whether the name is in the table
 * at all. */
const struct proc_entry *gp_proc_find(const struct proc_entry *table, size_t n,
				      const char *name, int version, bool per_thread,
				      bool *ret_known);

#endif
