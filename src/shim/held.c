/* held.c — memory admission and the allocations that hold it (front.h).
 *
 * Every allocation a front end hooks is admitted first — the bytes are
 * counted against the task in the device's region, atomically across its
 * processes — then asked of the runtime, and the count is given back if
 * the runtime fails. Which allocation holds how much is remembered per
 * process in a small hash table (pointer or handle -> device, bytes),
 * under held_lock. A free takes its entry out before the runtime frees,
 * and gives the bytes back only after: the runtime may hand the same
 * address to another thread's allocation as soon as it is free, and that
 * one's entry must never be taken for this one's; and the bytes counted
 * never fall below what the runtime holds. A free the runtime refuses
 * puts the entry back. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "shim/front.h"

#define BUCKETS 1024

struct gp_shim_held {
	struct gp_shim_held *next;
	uint64_t key;           /* device pointer, handle or array */
	struct gp_shim_device *dev;
	uint64_t bytes;
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gp_shim_held *held[BUCKETS];

static size_t bucket(uint64_t key)
{
	return (size_t)((key >> 4) * 0x9e3779b97f4a7c15ULL >> 54) & (BUCKETS - 1);
}

static void held_put(struct gp_shim_held *h)
{
	pthread_mutex_lock(&held_lock);
	h->next = held[bucket(h->key)];
	held[bucket(h->key)] = h;
	pthread_mutex_unlock(&held_lock);
}

int gp_shim_admit(struct gp_shim_device *d, uint64_t bytes)
{
	int err;

	if (!d->limited)
		return 0;
	err = gp_region_mem_reserve(d->region, d->slot, bytes);
	return err == 0 ? 0 : err == -EPERM ? -EPERM : -ENOMEM;
}

bool gp_shim_settle(bool ok, struct gp_shim_device *d, uint64_t key, uint64_t bytes)
{
	struct gp_shim_held *h;

	if (!d->limited)
		return ok;
	if (!ok) {
		gp_region_mem_release(d->region, d->slot, bytes);
		return ok;
	}
	h = malloc(sizeof(*h));
	if (!h)
		return ok;      /* the memory stays counted: safe side */
	*h = (struct gp_shim_held){ .key = key, .dev = d, .bytes = bytes };
	held_put(h);
	return ok;
}

/* Takes the entries of key out of the table, chained: the first only,
 * or all of them. */
static struct gp_shim_held *take(uint64_t key, bool all)
{
	struct gp_shim_held **link, *taken = NULL, *h;

	pthread_mutex_lock(&held_lock);
	for (link = &held[bucket(key)]; *link;) {
		if ((*link)->key != key) {
			link = &(*link)->next;
			continue;
		}
		h = *link;
		*link = h->next;
		h->next = taken;
		taken = h;
		if (!all)
			break;
	}
	pthread_mutex_unlock(&held_lock);
	return taken;
}

struct gp_shim_held *gp_shim_take(uint64_t key)
{
	return take(key, false);
}

struct gp_shim_held *gp_shim_take_all(uint64_t key)
{
	return take(key, true);
}

void gp_shim_freed(struct gp_shim_held *h, bool ok)
{
	while (h) {
		struct gp_shim_held *next = h->next;

		if (ok) {
			gp_region_mem_release(h->dev->region, h->dev->slot, h->bytes);
			free(h);
		} else {
			held_put(h);
		}
		h = next;
	}
}

void gp_shim_forget(struct gp_shim_device *d)
{
	struct gp_shim_held *gone = NULL;

	pthread_mutex_lock(&held_lock);
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct gp_shim_held **link = &held[b]; *link;) {
			struct gp_shim_held *h = *link;

			if (h->dev != d) {
				link = &h->next;
				continue;
			}
			*link = h->next;
			h->next = gone;
			gone = h;
		}
	pthread_mutex_unlock(&held_lock);
	gp_shim_freed(gone, true);
}

void gp_shim_view(struct gp_shim_device *d, uint64_t *total, uint64_t *free_bytes)
{
	struct gp_task_limits lim;
	uint64_t used, limit, device_total;

	if (!d->limited || !total)
		return;
	device_total = *total;
	gp_region_limits(d->region, d->slot, &lim);
	limit = lim.mem_bytes && lim.mem_bytes < device_total ? lim.mem_bytes : device_total;
	*total = limit;
	if (!free_bytes)
		return;
	used = gp_region_task_used(d->region, d->slot);
	if (used >= limit)
		*free_bytes = 0;
	else if (limit - used < *free_bytes)
		*free_bytes = limit - used;
}
