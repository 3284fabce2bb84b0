/* models.h — what a device model's name says about it: its vendor. The
 * agent knows each device's vendor from its backend (src/vendor/); a
 * trace names models only, and this reads them (models.c). */
#ifndef GP_CORE_MODELS_H
#define GP_CORE_MODELS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/resources.h"

/* The vendor of a model name ("Ascend910B2", "MI300X", "A100"): by words
 * of the name; NVIDIA when none is known. */
enum gp_vendor gp_model_vendor(const char *name);

/* "nvidia", "ascend", "hygon", "cambricon", "amd", "intel", "other". */
const char *gp_vendor_name(enum gp_vendor v);

/* Does a device named `name`, of the vendor named `vendor` ("nvidia";
 * NULL: unknown), answer to one of the terms of a task's `model`
 * ("A100", "T4|L4", "A100, T4", "nvidia")? A term is matched without
 * case, as a name: the device's whole name, whole words of it ("A100" or
 * "A100-SXM4" of "NVIDIA A100-SXM4-80GB", but "A10" is not "A100", nor
 * "L4" "L40S"), a short name a vendor writes inside a word ("910B" of
 * "Ascend910B2", models.c's table), or its vendor. The one rule of the
 * server's loop, of `gpupool sim --history` and of the pod annotation
 * gpupool.io/gpu-model. */
bool gp_model_answers(const char *name, const char *vendor, const char *model);

/* Of n things each named for a model (a price, a model quota, an
 * --overcommit or --split option: the name at byte `offset` of each of
 * the n items of `size` bytes from `items`), the one whose name a device
 * named `name` (of the vendor named `vendor`; NULL: unknown) answers to,
 * by gp_model_answers's rule, the longest name when several do (a
 * vendor's name, "nvidia", below any model's): its index, or -1 for none.
 * An empty name is nobody's. */
int gp_model_best(const char *name, const char *vendor, const void *items, size_t size,
		  size_t offset, int n);
/* gp_model_best's measure of one name `key`: 0 when the device does not
 * answer to it, else the larger the better. */
size_t gp_model_rank(const char *name, const char *vendor, const char *key);

#endif
