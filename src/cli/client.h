/* client.h — what the gpupool commands that talk to the server share:
 * the common flags (--socket, --token, --token-file, -o), parsing a
 * command's flags together with them, one HTTP/JSON request over the
 * server's Unix socket (libcurl), subcommand dispatch and output helpers.
 *
 * Where things come from, first found wins:
 *   socket: --socket, $GPUPOOL_SOCKET, the server's default path
 *           (server/server.h); an "http://..." URL is used as it is;
 *   token:  --token, --token-file, $GPUPOOL_TOKEN, $GPUPOOL_TOKEN_FILE,
 *           the admin token file next to the default database when it
 *           can be read (the user who runs the server is its admin).
 *
 * Functions that return an exit status (cli/commands.h) have printed
 * the one line that says what went wrong. Ownership: a reply's JSON is
 * the caller's (json_decref). */
#ifndef GP_CLI_CLIENT_H
#define GP_CLI_CLIENT_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The flags every client command takes. */
struct gp_client_flags {
	const char *socket;
	const char *token;
	const char *token_file;
	bool json; /* -o json (or --json): print the server's JSON */
	bool csv;  /* -o csv, where the command takes it */
	bool yaml; /* -o yaml, likewise */
};

/* A command's own flags, parsed by gp_client_parse with the common ones. */
struct gp_client_command {
	const char *name;	      /* "task set", for messages */
	void (*usage)(FILE *out);     /* the --help text */
	const struct option *options; /* its own long options ({0}-ended), or NULL */
	const char *short_options;    /* its own short options, or NULL */
	/* Takes one of its own options; 0, or -EINVAL with the message out. */
	int (*option)(void *ctx, int c, const char *value);
	bool args_last; /* options end at the first argument */
	bool csv_ok;	/* -o csv is one of its outputs */
	bool yaml_ok;	/* -o yaml is one of its outputs */
};

/* Parses argv (argv[0] is the subcommand's name). Returns 1 after
 * printing --help, 0 with *ret_first the index of the first argument, or
 * -EINVAL after printing what was wrong. */
/* gp_client_parse for a command that takes no arguments, refusing any
 * left: GP_CLIENT_GO to go on, else the exit status to return (OK after
 * --help, USAGE with the message out). */
#define GP_CLIENT_GO (-1)
int gp_client_parse_bare(const struct gp_client_command *cmd, void *ctx, int argc, char **argv,
			 struct gp_client_flags *f);
int gp_client_parse(const struct gp_client_command *cmd, void *ctx, int argc, char **argv,
		    struct gp_client_flags *f, int *ret_first);

/* Sends METHOD PATH with body (NULL: none). Exit status 0 with *ret_reply
 * the server's JSON answer; 1 when the server refused (its message is
 * printed) or could not be reached. */
int gp_client_request(const struct gp_client_flags *f, const char *cmd,
		      const char *method, const char *path, json_t *body,
		      json_t **ret_reply);
/* gp_client_request, and more: *ret_http (NULL: not wanted) gets the
 * HTTP status of the answer, 0 when there was none (the server could not
 * be reached, the token not read); quiet: nothing is printed when it
 * fails. */
int gp_client_call(const struct gp_client_flags *f, const char *cmd, const char *method,
		   const char *path, json_t *body, bool quiet, long *ret_http,
		   json_t **ret_reply);

/* A text answer (GET /v1/tasks/ID/logs): its bytes, and the value of
 * one header of the reply. */
struct gp_client_text {
	char *data; /* malloc'd and NUL-terminated (NULs may come before); the caller's */
	size_t len;
	char header[64]; /* the value of the header asked for; "" when absent */
};

/* GETs path and gives the answer as it came, when the server said yes;
 * header names the header whose value goes to ret->header (NULL: none).
 * Exit status as gp_client_request. */
int gp_client_get_text(const struct gp_client_flags *f, const char *cmd, const char *path,
		       const char *header, struct gp_client_text *ret);

/* The common flags (not --help) are global: they may come before a
 * command's name too (`gpupool -o json task ls`, `gpupool task --socket S
 * ls`). gp_client_hoist moves those found at argv[1..] before the first
 * word that is not one of them to just after that word, which becomes
 * argv[1], so that the command parses them as its own. Returns how many
 * it moved (0: none), -ENOENT when nothing follows them (argv as it
 * was), or -EINVAL when the last wants a value that is not there (the
 * message out, naming "gpupool NAME"; name "" for the gpupool command). */
int gp_client_hoist(const char *name, int argc, char **argv);

/* A subcommand, and the dispatch of `gpupool NAME SUB ...` to it (after
 * gp_client_hoist; an unknown one is one line, with "did you mean"). */
struct gp_client_sub {
	const char *name;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand */
	const char *summary;
};
int gp_client_dispatch(const char *name, const struct gp_client_sub *subs, size_t n,
		       int argc, char **argv);

/* Values given on the command line: each prints "CMD: --FLAG "VALUE"
 * must be ..." and returns -EINVAL when the value is wrong. */
int gp_client_uint(const char *cmd, const char *flag, const char *text, unsigned lo,
		   unsigned hi, unsigned *ret);
int gp_client_mib(const char *cmd, const char *flag, const char *text, bool zero_ok,
		  uint64_t *ret);
int gp_client_choice(const char *cmd, const char *flag, const char *text,
		     const char *const *choices);
/* --FLAG TEXT as a time limit (base/parse.h: Slurm's forms; 0 or
 * "unlimited" for none) in *ret seconds; -EINVAL, said on stderr with
 * the forms, otherwise. */
int gp_client_time_limit(const char *cmd, const char *flag, const char *text, uint64_t *ret);
/* Appends "?KEY=VALUE" to path, or "&KEY=VALUE" where it has a query
 * already (value: plain characters, as the commands check them). */
void gp_client_query_add(char *path, size_t size, const char *key, const char *value);
/* A task id argument; exit status 2 with the message when it is not. */
int gp_client_id(const char *cmd, const char *text, long long *ret);

/* Output. print_json writes one compact line; print_yaml one YAML
 * document (cli/yaml.h), an exit status (1 with the message out when
 * libyaml failed). mib_text writes "4G" or "1536M". */
void gp_client_print_json(json_t *v);
int gp_client_print_yaml(const char *cmd, json_t *v);
const char *gp_client_mib_text(json_int_t mib, char *buf, size_t size);
/* Calls row for each element of the array reply[key]. */
void gp_client_rows(json_t *reply, const char *key, void (*row)(json_t *item));
json_int_t gp_client_int(json_t *obj, const char *key);
const char *gp_client_str(json_t *obj, const char *key); /* "" when absent */
/* Text to print, escaped (base/text.h): every table and show output
 * prints what tenants wrote (names, commands, variables, reasons, audit
 * details, the server's messages that quote them) through one of these,
 * never raw. gp_client_text is gp_client_str escaped; gp_client_safe any
 * string's escape ("" for NULL). The result is s itself when nothing
 * needed escaping, else a copy that stays valid for the next 63 calls
 * (a table's row takes far fewer); the CLI is one thread. */
const char *gp_client_text(json_t *obj, const char *key);
const char *gp_client_safe(const char *s);
/* A measured amount of MiB, rounded for people: "12.5G", "900M"; "-"
 * when v is not an integer. Written into buf, which it returns. */
const char *gp_client_mib_about(json_t *v, char *buf, size_t size);

#endif
