/* yaml.h — YAML output of the client commands (`-o yaml`), written with
 * libyaml's emitter, so that quoting and escaping are libyaml's and the
 * output always parses.
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

#endif
