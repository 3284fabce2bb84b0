/* parse.h — reading numbers that people type into flags and fields, and
 * writing sizes for people to read. The one size parser of the tree: the
 * CLI's flags, the server's options and configuration file, the
 * interposer's GPUPOOL_MEM_LIMIT and the Slurm plugin's options all read
 * sizes with gp_parse_size_in. */
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

#endif
