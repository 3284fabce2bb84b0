/* yaml.c — JSON values as YAML documents, through libyaml's emitter
 * (yaml.h): one event per mapping, sequence and scalar, from a walk of
 * the value. */
#include "cli/yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* Words a plain scalar would be read as (YAML 1.1 booleans and null). */
static const char *const special_words[] = {
	"y", "n", "yes", "no", "true", "false", "on", "off", "null", NULL,
};

/* May s be written plain and still be read back as a string? Yes when it
 * starts with a letter and is not one of the special words (so it is no
 * number either); libyaml quotes it anyway if its characters need it. */
static bool plain_is_string(const char *s)
{
	if (!isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 0; special_words[i]; i++)
		if (!strcasecmp(s, special_words[i]))
			return false;
	return true;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev, int made)
{
	if (!made || !yaml_emitter_emit(e, ev))
		return -EIO;
	return 0;
}

/* A scalar: text, read back as a string when `string` (else as YAML
 * resolves it: a number, a boolean, null). */
static int emit_scalar(yaml_emitter_t *e, const char *text, bool string)
{
	yaml_event_t ev;
	bool plain = !string || plain_is_string(text);

	return emit(e, &ev,
		    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text,
						 (int)strlen(text), plain, 1,
						 YAML_ANY_SCALAR_STYLE));
}

static int emit_value(yaml_emitter_t *e, json_t *v);

static int emit_object(yaml_emitter_t *e, json_t *v)
{
	yaml_event_t ev;
	const char *key;
	json_t *member;
	int r = emit(e, &ev,
		     yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_MAPPING_STYLE));

	json_object_foreach(v, key, member) {
		if (r == 0)
			r = emit_scalar(e, key, true);
		if (r == 0)
			r = emit_value(e, member);
	}
	return r ? r : emit(e, &ev, yaml_mapping_end_event_initialize(&ev));
}

static int emit_array(yaml_emitter_t *e, json_t *v)
{
	yaml_event_t ev;
	size_t i;
	json_t *item;
	int r = emit(e, &ev,
		     yaml_sequence_start_event_initialize(
			     &ev, NULL, NULL, 1,
			     json_array_size(v) ? YAML_BLOCK_SEQUENCE_STYLE
						: YAML_FLOW_SEQUENCE_STYLE));

	json_array_foreach(v, i, item) {
		if (r == 0)
			r = emit_value(e, item);
	}
	return r ? r : emit(e, &ev, yaml_sequence_end_event_initialize(&ev));
}

/* A number, boolean or null, as JSON writes it (which YAML reads alike). */
static int emit_atom(yaml_emitter_t *e, json_t *v)
{
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	int r;

	if (!text)
		return -ENOMEM;
	r = emit_scalar(e, text, false);
	free(text);
	return r;
}

static int emit_value(yaml_emitter_t *e, json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return emit_object(e, v);
	case JSON_ARRAY: return emit_array(e, v);
	case JSON_STRING: return emit_scalar(e, json_string_value(v), true);
	default: return emit_atom(e, v);
	}
}

/* The stream and document around the value. */
static int emit_document(yaml_emitter_t *e, json_t *v)
{
	yaml_event_t ev;
	int r = emit(e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));

	if (r == 0)
		r = emit(e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	if (r == 0)
		r = emit_value(e, v);
	if (r == 0)
		r = emit(e, &ev, yaml_document_end_event_initialize(&ev, 1));
	if (r == 0)
		r = emit(e, &ev, yaml_stream_end_event_initialize(&ev));
	return r;
}

int gp_yaml_print(FILE *out, json_t *v, char *err, size_t err_len)
{
	yaml_emitter_t e;
	int r;

	if (!yaml_emitter_initialize(&e)) {
		snprintf(err, err_len, "libyaml: cannot make an emitter");
		return -EIO;
	}
	yaml_emitter_set_output_file(&e, out);
	yaml_emitter_set_unicode(&e, 1);
	r = emit_document(&e, v);
	if (r == 0 && !yaml_emitter_flush(&e))
		r = -EIO;
	if (r < 0)
		snprintf(err, err_len, "libyaml: %s",
			 e.problem ? e.problem : "cannot write the output");
	yaml_emitter_delete(&e);
	return r;
}

/* ---- reading a description --------------------------------------------- */

/* The text of scalar node n (NULL: it is not one). */
static json_t *scalar_of(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE)
		return NULL;
	return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
}

/* Value node n as JSON: a scalar's text, or a sequence of scalars; NULL
 * (why in err) for anything else. */
static json_t *value_of(yaml_document_t *doc, const yaml_node_t *n, const char *key,
			char *err, size_t err_len)
{
	json_t *list, *item;

	if (n->type == YAML_SCALAR_NODE)
		return scalar_of(n);
	if (n->type != YAML_SEQUENCE_NODE) {
		snprintf(err, err_len, "line %zu: field \"%s\": a mapping, where a value or a list "
				       "was expected", n->start_mark.line + 1, key);
		return NULL;
	}
	list = json_array();
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
	     i++) {
		const yaml_node_t *e = yaml_document_get_node(doc, *i);

		if (!(item = scalar_of(e))) {
			snprintf(err, err_len, "line %zu: field \"%s\": a list of lists or mappings, "
					       "where a list of values was expected",
				 e->start_mark.line + 1, key);
			json_decref(list);
			return NULL;
		}
		json_array_append_new(list, item);
	}
	return list;
}

/* One key and value of the document's mapping into out and lines. */
static int pair_read(yaml_document_t *doc, const yaml_node_pair_t *p, json_t *out,
		     json_t *lines, char *err, size_t err_len)
{
	const yaml_node_t *k = yaml_document_get_node(doc, p->key);
	json_t *key = scalar_of(k), *v;
	const char *name = json_string_value(key);

	if (!key) {
		snprintf(err, err_len, "line %zu: a key that is not a name", k->start_mark.line + 1);
		return -EINVAL;
	}
	if (json_object_get(out, name)) {
		snprintf(err, err_len, "line %zu: field \"%s\" is given twice (first on line %lld)",
			 k->start_mark.line + 1, name,
			 (long long)json_integer_value(json_object_get(lines, name)));
		json_decref(key);
		return -EINVAL;
	}
	v = value_of(doc, yaml_document_get_node(doc, p->value), name, err, err_len);
	if (v) {
		json_object_set_new(out, name, v);
		json_object_set_new(lines, name, json_integer((json_int_t)k->start_mark.line + 1));
	}
	json_decref(key);
	return v ? 0 : -EINVAL;
}

/* The document's root, a mapping, into out and lines. */
static int document_read(yaml_document_t *doc, json_t *out, json_t *lines, char *err,
			 size_t err_len)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc);
	int r = 0;

	if (!root || root->type != YAML_MAPPING_NODE) {
		snprintf(err, err_len, "line %zu: not a mapping of fields (name: ..., models: ...)",
			 root ? root->start_mark.line + 1 : 1);
		return -EINVAL;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     r == 0 && p < root->data.mapping.pairs.top; p++)
		r = pair_read(doc, p, out, lines, err, err_len);
	return r;
}

/* What the parser found wrong, and where: "line 4: not YAML: did not find
 * expected ',' or ']' (while parsing a flow sequence from line 3)". */
static void not_yaml(const yaml_parser_t *p, char *err, size_t err_len)
{
	int n = snprintf(err, err_len, "line %zu: not YAML: %s", p->problem_mark.line + 1,
			 p->problem ? p->problem : "cannot be read");

	if (p->context && n >= 0 && (size_t)n < err_len)
		snprintf(err + n, err_len - (size_t)n, " (%s from line %zu)", p->context,
			 p->context_mark.line + 1);
}

int gp_yaml_read_mapping(FILE *in, json_t **ret, json_t **ret_lines, char *err, size_t err_len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	json_t *out = json_object(), *lines = json_object();
	int r = -EINVAL;

	if (!yaml_parser_initialize(&parser)) {
		snprintf(err, err_len, "libyaml: cannot make a parser");
		return -EIO;
	}
	yaml_parser_set_input_file(&parser, in);
	if (!yaml_parser_load(&parser, &doc)) {
		not_yaml(&parser, err, err_len);
	} else {
		r = document_read(&doc, out, lines, err, err_len);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
	if (r < 0) {
		json_decref(out);
		json_decref(lines);
		return r;
	}
	*ret = out;
	*ret_lines = lines;
	return 0;
}
