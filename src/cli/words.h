/* words.h — the server's errors in the CLI's words. The API names its
 * fields (`field "mem_mib": ...`) and its requests (`GET /v1/templates
 * lists them`); a user of the gpupool command typed flags and commands
 * (`--mem`, `gpupool template ls`). Every message the server refuses a
 * request with passes through gp_words_cli (cli/client.c) before it is
 * printed, and one table in words.c says which API words become which
 * CLI words, for which commands. */
#ifndef GP_CLI_WORDS_H
#define GP_CLI_WORDS_H

#include <stddef.h>

/* Writes text into out (size bytes, NUL-terminated, cut when too long)
 * with the API's words replaced by those of the command cmd ("submit",
 * "tenant add", ...): a word counts only whole (not the start of a
 * longer one). Returns out. */
const char *gp_words_cli(const char *cmd, const char *text, char *out, size_t size);

#endif
