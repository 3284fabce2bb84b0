/* fields.c — checking request bodies against field tables (see fields.h).
 * Each kind of field has one check and one message; the message names the
 * field and says what a good value is. */
#include "server/fields.h"

#include <stdio.h>
#include <string.h>

#include "server/store.h"
#include "agent/taskenv.h"

#define LIST_MAX 256
#define WHY_MAX	 400

bool gp_field_is_name(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < GP_STORE_NAME_MAX && strspn(s, GP_FIELD_NAME_CHARS) == n &&
	       !strchr("._-", s[0]);
}

static bool is_choice(const char *s, const char *const *choices)
{
	for (; *choices; choices++)
		if (!strcmp(s, *choices))
			return true;
	return false;
}

void gp_field_list(const char *const *choices, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; choices[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
					choices[i]);
}

/* The names of a field table, as gp_field_list writes them. */
static void names_list(const struct gp_field *fields, char *buf, size_t size)
{
	const char *names[32];
	size_t n = 0;

	for (; fields->name && n < sizeof(names) / sizeof(names[0]) - 1; fields++)
		names[n++] = fields->name;
	names[n] = NULL;
	gp_field_list(names, buf, size);
}

static bool command_ok(json_t *v)
{
	size_t total = 0;

	if (json_is_string(v))
		return json_string_length(v) > 0 &&
		       json_string_length(v) < GP_COMMAND_MAX;
	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_string_length(json_array_get(v, 0)) == 0)
		return false;
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *arg = json_array_get(v, i);

		if (!json_is_string(arg))
			return false;
		total += json_string_length(arg) + 1;
	}
	return total < GP_COMMAND_MAX;
}

static bool texts_ok(json_t *v, uint64_t hi)
{
	if (!json_is_array(v) || json_array_size(v) > GP_FIELD_TEXTS_MAX)
		return false;
	for (size_t i = 0; i < json_array_size(v); i++)
		if (!json_is_string(json_array_get(v, i)) ||
		    json_string_length(json_array_get(v, i)) > hi)
			return false;
	return true;
}

/* Is v a good value of f? A kind whose message depends on what is wrong
 * writes it to why (WHY_MAX bytes). */
static bool value_ok(const struct gp_field *f, json_t *v, char *why)
{
	switch (f->kind) {
	case GP_FIELD_NAME:
		return json_is_string(v) && gp_field_is_name(json_string_value(v));
	case GP_FIELD_TEXT: return json_is_string(v) && json_string_length(v) <= f->hi;
	case GP_FIELD_UINT:
		return json_is_integer(v) && json_integer_value(v) >= (json_int_t)f->lo &&
		       json_integer_value(v) <= (json_int_t)f->hi;
	case GP_FIELD_BOOL: return json_is_boolean(v);
	case GP_FIELD_CHOICE:
		return json_is_string(v) && is_choice(json_string_value(v), f->choices);
	case GP_FIELD_COMMAND: return command_ok(v);
	case GP_FIELD_ENV: return gp_task_env_check(v, why, WHY_MAX) == 0;
	case GP_FIELD_TEXTS: return texts_ok(v, f->hi);
	}
	return false;
}

/* Says what a good value of f is (or, with why, what was wrong). */
static void value_wrong(const struct gp_field *f, const char *why,
			struct gp_http_reply *ret)
{
	char list[LIST_MAX];

	switch (f->kind) {
	case GP_FIELD_NAME:
		gp_http_error(
			ret, 400,
			"field \"%s\" must be 1 to %d letters, digits, '.', '_' or '-', "
			"starting with a letter or digit",
			f->name, GP_STORE_NAME_MAX - 1);
		return;
	case GP_FIELD_TEXT:
		gp_http_error(ret, 400,
			      "field \"%s\" must be a string of at most %llu bytes",
			      f->name, (unsigned long long)f->hi);
		return;
	case GP_FIELD_UINT:
		gp_http_error(
			ret, 400, "field \"%s\" must be a whole number from %llu to %llu",
			f->name, (unsigned long long)f->lo, (unsigned long long)f->hi);
		return;
	case GP_FIELD_BOOL:
		gp_http_error(ret, 400, "field \"%s\" must be true or false", f->name);
		return;
	case GP_FIELD_CHOICE:
		gp_field_list(f->choices, list, sizeof(list));
		gp_http_error(ret, 400, "field \"%s\" must be one of: %s", f->name, list);
		return;
	case GP_FIELD_COMMAND:
		gp_http_error(
			ret, 400,
			"field \"%s\" must be a non-empty string or array of strings, "
			"under %d bytes in all",
			f->name, GP_COMMAND_MAX);
		return;
	case GP_FIELD_ENV:
		gp_http_error(ret, 400, "field \"%s\": %s", f->name, why);
		return;
	case GP_FIELD_TEXTS:
		gp_http_error(ret, 400,
			      "field \"%s\" must be an array of at most %d strings of at most "
			      "%llu bytes",
			      f->name, GP_FIELD_TEXTS_MAX, (unsigned long long)f->hi);
		return;
	}
}

static const struct gp_field *field_find(const struct gp_field *fields, const char *name)
{
	for (; fields->name; fields++)
		if (!strcmp(fields->name, name))
			return fields;
	return NULL;
}

/* One member of the body: a known field with a good value. */
static bool member_ok(const struct gp_field *fields, const char *key, json_t *v,
		      struct gp_http_reply *ret)
{
	const struct gp_field *f = field_find(fields, key);
	char names[LIST_MAX], why[WHY_MAX] = "";

	if (!f) {
		names_list(fields, names, sizeof(names));
		gp_http_error(ret, 400, "unknown field \"%s\"; the fields are: %s", key,
			      names);
		return false;
	}
	if (value_ok(f, v, why))
		return true;
	value_wrong(f, why, ret);
	return false;
}

static bool fields_ok(json_t *body, const struct gp_field *fields,
		      struct gp_http_reply *ret)
{
	for (void *it = json_object_iter(body); it; it = json_object_iter_next(body, it))
		if (!member_ok(fields, json_object_iter_key(it),
			       json_object_iter_value(it), ret))
			return false;
	for (; fields->name; fields++) {
		if (fields->required && !json_object_get(body, fields->name)) {
			gp_http_error(ret, 400, "field \"%s\" is required", fields->name);
			return false;
		}
	}
	return true;
}

bool gp_fields_parse(const struct gp_http_request *req, const struct gp_field *fields,
		     struct gp_http_reply *ret, json_t **ret_body)
{
	json_error_t error;
	json_t *body;

	if (!req->body_len) {
		gp_http_error(ret, 400, "the request needs a JSON object as its body");
		return false;
	}
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &error);
	if (!body) {
		gp_http_error(ret, 400, "malformed JSON at line %d, column %d: %s",
			      error.line, error.column, error.text);
		return false;
	}
	if (!json_is_object(body)) {
		gp_http_error(ret, 400, "the body must be a JSON object, not %s",
			      json_is_array(body) ? "an array" : "a single value");
		json_decref(body);
		return false;
	}
	if (!fields_ok(body, fields, ret)) {
		json_decref(body);
		return false;
	}
	*ret_body = body;
	return true;
}

uint64_t gp_field_uint(json_t *body, const char *key, uint64_t absent)
{
	json_t *v = json_object_get(body, key);

	return v ? (uint64_t)json_integer_value(v) : absent;
}

bool gp_field_bool(json_t *body, const char *key)
{
	return json_is_true(json_object_get(body, key));
}

const char *gp_field_string(json_t *body, const char *key, const char *absent)
{
	json_t *v = json_object_get(body, key);

	return v ? json_string_value(v) : absent;
}

bool gp_field_has(json_t *body, const char *key)
{
	return json_object_get(body, key) != NULL;
}
