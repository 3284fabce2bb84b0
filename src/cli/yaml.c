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
