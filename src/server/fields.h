/* fields.h — checks a request's JSON body against the table of fields an
 * endpoint takes, so that a wrong request is told which field is wrong
 * and why (400, through http.h's error reply), and a handler reads only
 * values that were checked.
 *
 * A body is good when it is a JSON object without duplicate keys, every
 * member is a field of the table with a value of that field's kind, and
 * every required field is there. Ownership: gp_fields_parse gives the
 * caller the body (json_decref); the getters return values borrowed from
 * it. */
#ifndef GP_SERVER_FIELDS_H
#define GP_SERVER_FIELDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/http.h"

/* What a name may be made of: tenants, templates, tasks. */
#define GP_FIELD_NAME_CHARS                                                              \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

enum gp_field_kind {
	GP_FIELD_NAME, /* 1 to GP_STORE_NAME_MAX - 1 name characters, first alphanumeric
			*/
	GP_FIELD_TEXT, /* a string of at most `hi` bytes */
	GP_FIELD_UINT, /* a whole number from lo to hi */
	GP_FIELD_BOOL,
	GP_FIELD_CHOICE,  /* one of `choices` (NULL-terminated) */
	GP_FIELD_COMMAND, /* a string, or a non-empty array of strings */
	GP_FIELD_ENV,	  /* a task's declared variables (agent/taskenv.h) */
	GP_FIELD_TEXTS,	  /* an array of at most GP_FIELD_TEXTS_MAX strings of at most `hi` bytes */
};

#define GP_FIELD_TEXTS_MAX 64

/* One field; a table ends with { NULL }. */
struct gp_field {
	const char *name;
	enum gp_field_kind kind;
	bool required;
	uint64_t lo, hi;
	const char *const *choices;
};

/* Parses and checks the body. False when it is not good, with ret set to
 * 400 and the reason. */
bool gp_fields_parse(const struct gp_http_request *req, const struct gp_field *fields,
		     struct gp_http_reply *ret, json_t **ret_body);

/* A checked body's members, or `absent` when not given. */
uint64_t gp_field_uint(json_t *body, const char *key, uint64_t absent);
bool gp_field_bool(json_t *body, const char *key);
const char *gp_field_string(json_t *body, const char *key, const char *absent);
bool gp_field_has(json_t *body, const char *key);

bool gp_field_is_name(const char *s);

/* "a, b, c": the NULL-terminated choices, into buf. */
void gp_field_list(const char *const *choices, char *buf, size_t size);

#endif
