/* parse.h — reading numbers that people type into flags and fields, and
 * writing sizes for people to read. */
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

/* A size in a message: "12 GiB", "1.5 GiB", "512 MiB", "300 KiB",
 * "12 bytes" (rounded down). */
void gp_size_text(uint64_t bytes, char *buf, size_t len);

#endif
