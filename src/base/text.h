/* text.h — text that tenants wrote, made safe to show on a terminal.
 *
 * A task's name, command, variables and reasons, a template's or a
 * service's name: tenants choose them, and an admin reads them in
 * `gpupool task show`, `task ls` and the other tables. Raw, an escape
 * sequence in a command would reach the admin's terminal (move the
 * cursor, rewrite lines already printed, set the window's title). So
 * every table and show output of the CLI passes such text through
 * gp_text_escape first (cli/client.h: gp_client_text), once, here.
 *
 * What is escaped: the C0 controls (bytes 0x00-0x1f) and DEL (0x7f) —
 * newline, tab and carriage return as \n, \t and \r, the others as \xHH
 * (ESC is \x1b); the C1 controls U+0080-U+009F and Unicode's
 * bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069,
 * which reorder what a reader sees) as \uHHHH; and each byte that is not
 * part of well-formed UTF-8 as \xHH. Everything else, a backslash
 * included, is copied as it is: the escapes are for a reader, not to be
 * parsed back.
 *
 * Pure functions: no allocation, thread-safe. */
#ifndef GP_BASE_TEXT_H
#define GP_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Does s (NUL-terminated) hold nothing to escape? */
bool gp_text_is_plain(const char *s);

/* Writes s, escaped, into out (size bytes, always NUL-terminated when
 * size > 0; an escape is never cut in half) and returns the length the
 * whole escaped text has, without its NUL, as snprintf does: the output
 * was cut when the result is >= size. At most 4 bytes per byte of s. */
size_t gp_text_escape(const char *s, char *out, size_t size);

/* The same for len bytes of s, which may hold NULs (a log's bytes). */
size_t gp_text_escape_n(const char *s, size_t len, char *out, size_t size);

#endif
