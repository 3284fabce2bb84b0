/* proc-table.c — choosing a cuGetProcAddress variant (see proc-table.h). */
#include "base/proc-table.h"

#include <string.h>

const struct proc_entry *gp_proc_find(const struct proc_entry *table, size_t n,
				      const char *name, int version, bool per_thread,
				      bool *ret_known)
{
	const struct proc_entry *best = NULL;
	bool known = false, any_per_thread = false;

	for (size_t i = 0; i < n; i++)
		if (strcmp(table[i].name, name) == 0) {
			known = true;
			any_per_thread |= table[i].per_thread;
		}
	if (ret_known)
		*ret_known = known;
	if (!known)
		return NULL;
	per_thread = per_thread && any_per_thread;
	for (size_t i = 0; i < n; i++) {
		const struct proc_entry *e = &table[i];

		if (strcmp(e->name, name) == 0 && e->per_thread == per_thread &&
		    e->version <= version && (!best || e->version > best->version))
			best = e;
	}
	return best;
}
