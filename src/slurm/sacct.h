/* sacct.h — a month's GPU usage on a Slurm cluster, from Slurm's own
 * accounting: the figures the SPANK plugin left in each job's
 * AdminComment (figures.h), as `sacct` gives them from slurmdbd. No
 * second database: Slurm's is the record.
 *
 * The result has the shape of the server's usage sums (server/store.h),
 * so that `gpupool bill --slurm` prints its bill with the server's own
 * arithmetic (server/bill.h): a tenant is a Slurm account, a record is
 * one step on one GPU of one node (a step across nodes has a record for
 * each node's GPUs, each counted once), and a job's usage counts in the
 * month (UTC) it started.
 *
 * Ownership: gp_slurm_usage_free releases what the functions filled in. */
#ifndef GP_SLURM_SACCT_H
#define GP_SLURM_SACCT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "server/store.h"
#include "slurm/figures.h"

struct gp_slurm_usage {
	struct gp_usage_sum *sums; /* sorted by tenant, then model */
	int n;
	struct gp_tenant *tenants; /* the accounts; tenant ids are indices + 1 */
	int n_tenants;
};

/* Adds one figure of a job of `account` to u; 0 or -ENOMEM. */
int gp_slurm_usage_add(struct gp_slurm_usage *u, const char *account,
		       const struct gp_slurm_figure *f);

/* Reads sacct's lines ("ACCOUNT|START|ADMINCOMMENT", START in unix
 * seconds) and adds the figures of the jobs that started in [from_ms,
 * to_ms); sorts the result. 0 or -ENOMEM. */
int gp_slurm_usage_read(FILE *in, int64_t from_ms, int64_t to_ms,
			struct gp_slurm_usage *u);

/* Runs sacct for `month` ("2026-11"), all accounts or only `account`
 * (NULL: all the caller may see), and reads its answer into u. 0, or
 * -1 with the reason and what to do in err. */
int gp_slurm_usage_month(const char *month, const char *account, struct gp_slurm_usage *u,
			 char *err, size_t err_len);

void gp_slurm_usage_free(struct gp_slurm_usage *u);

#endif
