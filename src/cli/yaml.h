/* yaml.h — YAML output of the client commands (`-o yaml`), written with
 * libyaml's emitter, so that quoting and escaping are libyaml's and the
 * output always parses; and the reading back of such a description
 * (`template add -f`), with libyaml's parser.
 *
 * A JSON value from the server (or built by a command) becomes one YAML
 * document: objects are block mappings (keys in the object's order),
 * arrays block sequences, strings scalars (quoted when a plain scalar
 * would read as a number, a boolean or null), numbers, booleans and null
 * as YAML writes them. Nothing is kept: the caller owns the value. */
#ifndef GP_CLI_YAML_H
#define GP_CLI_YAML_H

#include <jansson.h>
#include <stdio.h>

/* Writes v to out as one YAML document. 0, or -EIO when libyaml failed
 * (its message is in err). */
int gp_yaml_print(FILE *out, json_t *v, char *err, size_t err_len);

/* Reads one YAML document from in that is a mapping of scalars and of
 * sequences of scalars, as a description is written: into *ret a JSON
 * object of its keys, each a string (the scalar as written; "" for an
 * empty one) or an array of strings, and into *ret_lines an object of
 * the line (from 1) each key is on; the caller owns both. 0; or -EINVAL
 * with err saying where and what ("line 3: field \"models\": a mapping,
 * where a value or a list was expected"; a key given twice; not YAML). */
int gp_yaml_read_mapping(FILE *in, json_t **ret, json_t **ret_lines, char *err, size_t err_len);

#endif
