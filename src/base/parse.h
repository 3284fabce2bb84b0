/* parse.h — reading numbers that people type into flags and fields, and
 * writing sizes for people to read. The one size parser of the tree: the
 * CLI's flags, the server's options and configuration file, the
 * interposer's GPUPOOL_MEM_LIMIT and the Slurm plugin's options all read
 * sizes with gp_parse_size_in. So too the job options a Slurm user types
 * (`gpupool submit --time`, `--after`, `--array`), read here once for the
 * CLI, the API and the templates alike. */
#ifndef GP_BASE_PARSE_H
#define GP_BASE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A whole number from lo to hi written in decimal digits with nothing
 * after it but, when suffix is not NULL, that suffix ("%": "30%" and "30"
 * are both 30). No sign, no spaces. True and *ret set when it is one. */
bool gp_parse_uint(const char *text, unsigned lo, unsigned hi, const char *suffix,
		   unsigned *ret);

/* A size written for people: a whole number in decimal digits, then a
 * unit or none. The units are powers of 1024, as Slurm, nvidia-smi and
 * most GPU tools count them (a G is a GiB, 2^30 bytes): K, M, G or T,
 * alone or followed by B or iB, the case of none of it mattering ("4G",
 * "4g", "4GB", "4GiB" and "4gib" are all 4 × 2^30 bytes). A number
 * without a unit counts `unit` bytes each: 1 where sizes have always been
 * bytes (configuration, environment), GP_MiB where a memory flag takes
 * MiB, as Slurm's --mem does ("4096" is 4 GiB). 0 with *ret_bytes set, or
 * -EINVAL (nothing set) for anything else: empty, a sign, spaces, a
 * fraction, another unit, a unit of 0, a result past 2^64 - 1. */
#define GP_MiB (1024ULL * 1024)
int gp_parse_size_in(const char *text, uint64_t unit, uint64_t *ret_bytes);

/* gp_parse_size_in(text, 1, ret_bytes): a number without a unit is bytes. */
int gp_parse_size(const char *text, uint64_t *ret_bytes);

/* A size in a message: "12 GiB", "1.5 GiB", "512 MiB", "300 KiB",
 * "12 bytes" (rounded down). */
void gp_size_text(uint64_t bytes, char *buf, size_t len);

/* A time limit as Slurm's --time writes one: MINUTES, MINUTES:SECONDS,
 * HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES or
 * DAYS-HOURS:MINUTES:SECONDS, each part whole decimal digits; the first
 * part may be any size ("90" is 90 minutes), the ones after it stay under
 * their next unit (seconds and minutes under 60, hours after days under
 * 24). "0", "unlimited" and "infinite" (any case) are no limit: 0. At most
 * GP_TIME_LIMIT_MAX_S. 0 with *ret_seconds set, or -EINVAL (nothing set)
 * for anything else: empty, a sign, spaces, a fraction, a part missing or
 * too large. */
#define GP_TIME_LIMIT_MAX_S (366ULL * 24 * 3600)
int gp_parse_time_limit(const char *text, uint64_t *ret_seconds);

/* A time limit written back: "H:MM:SS", with "D-" before it from a day on
 * ("0:10:00", "1-02:00:00"); "unlimited" for 0. */
void gp_time_limit_text(uint64_t seconds, char *buf, size_t len);

/* The tasks a task waits for (`submit --after`): "ID[:ok|:any][,ID...]".
 * `ok` (the default, Slurm's afterok) waits for the task to succeed;
 * `any` (afterany) for it to end however it ends. At most GP_AFTER_MAX,
 * ids 1 to 2^53, none twice. 0 with ret[0..*ret_n) set, or -EINVAL
 * (nothing set). */
#define GP_AFTER_MAX  16
#define GP_AFTER_TEXT (GP_AFTER_MAX * 24) /* the longest text, with its NUL */
struct gp_after {
	int64_t id;
	bool any; /* afterany; else afterok */
};
int gp_parse_after(const char *text, struct gp_after *ret, int *ret_n);
/* The list written in the canonical form the parser reads: "3:ok,5:any"
 * ("" for none). */
void gp_after_text(const struct gp_after *after, int n, char *buf, size_t len);

/* The indexes of a task array (`submit --array`): "N" is N tasks, 0 to
 * N - 1; "A-B" the tasks A to B, as Slurm writes a range. At most
 * GP_ARRAY_MAX tasks, indexes up to GP_ARRAY_INDEX_MAX. 0 with
 * *ret_first and *ret_last set, or -EINVAL (nothing set). */
#define GP_ARRAY_MAX	   1000
#define GP_ARRAY_INDEX_MAX 999999
int gp_parse_array(const char *text, unsigned *ret_first, unsigned *ret_last);

#endif
