/* limits-table.h — the limits table of one device: what the server allows each
 * task there, in a file the tasks can read but not write.
 *
 * Internal to src/shim/: region.c reads and writes it, and the agent, the
 * server and `gpupool region` reach it only through region.h. The file is
 * device-UUID.limits beside the device's region; its owner (the agent,
 * root) writes it and keeps it mode 0644, so a task's process opens it
 * O_RDONLY and maps it PROT_READ: nothing a task writes reaches it. A
 * device whose directory holds this file is MANAGED (region.h).
 *
 * The table holds up to GP_REGION_TASKS entries: a task id, a hash of the
 * task's secret (gp_limits_secret_hash: one-way, since every task reads
 * the table), the limits and a generation. Each entry has a sequence word
 * (a seqlock): readers take no lock and never write, and never see half of
 * an update. Writers take the table's robust mutex, which only they can
 * lock (it lives in the file, and only they can write the file).
 *
 * Functions return 0 or a negative errno and print nothing. Ownership:
 * gp_limits_open returns a mapping the caller closes with gp_limits_close;
 * entries are copied out, nothing points into the mapping. */
#ifndef GP_SHIM_LIMITS_H
#define GP_SHIM_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "shim/region.h"

struct gp_limits;

/* One entry, as one consistent read found it. */
struct gp_limits_entry {
	char id[GP_TASK_ID_MAX];
	uint64_t key;                   /* gp_limits_key(id) */
	uint64_t secret;                /* gp_limits_secret_hash of its secret */
	struct gp_task_limits limits;
	uint64_t generation;            /* 1 when admitted, bumped by every change */
};

/* Maps the table of device uuid in dir (a directory already resolved)
 * read-only: -ENOENT when there is none (the device is not managed),
 * -EPROTO when it is of another version or device, -EPERM when others
 * than its owner may write it. */
int gp_limits_open(const char *dir, const char *uuid, struct gp_limits **ret);
void gp_limits_close(struct gp_limits *l);

/* Makes the table (mode 0644, owned by the caller), or keeps one that is
 * the caller's own, of this version and safe (a plain file with one link,
 * writable by nobody else), or replaces one that is not. A new table is
 * made complete under another name and then renamed into place, so
 * readers never find one half made. */
int gp_limits_prepare(const char *dir, const char *uuid, uint64_t total_bytes);

/* The device's memory, as the table's maker recorded it. */
uint64_t gp_limits_total(const struct gp_limits *l);

/* Entry `index` (0..GP_REGION_TASKS-1): -ENOENT when it is free, -EAGAIN
 * when no consistent read was possible (a writer died or stalled in the
 * middle of an update for 50 ms). */
int gp_limits_get(const struct gp_limits *l, int index, struct gp_limits_entry *ret);

/* The entry of task id and its index; -ENOENT when it has none. */
int gp_limits_find(const struct gp_limits *l, const char *id, int *ret_index,
		   struct gp_limits_entry *ret);

/* Writes the entry of task id: with a secret hash, adds it or replaces it
 * (a new entry has generation 1; -ENOSPC when the table is full); without
 * (secret NULL), changes the limits of an entry that exists (-ENOENT
 * otherwise). -EACCES when the caller cannot write the table, -ESTALE
 * when the file was replaced since it was opened. The caller checks the
 * limits against the device. */
int gp_limits_put(struct gp_limits *l, const char *id, const uint64_t *secret,
		  const struct gp_task_limits *limits);

/* Frees the entry of task id: -ENOENT, -EACCES, -ESTALE as above. */
int gp_limits_forget(struct gp_limits *l, const char *id);

/* The key of a task id (never 0, the mark of a free entry). */
uint64_t gp_limits_key(const char *id);

/* The hash of a task's secret (GP_TASK_SECRET_MIN..MAX hexadecimal
 * digits), salted with the device and the task: -EINVAL for a secret of
 * another form. Never 0. */
int gp_limits_secret_hash(const char *uuid, const char *id, const char *secret,
			  uint64_t *ret_hash);

#endif
