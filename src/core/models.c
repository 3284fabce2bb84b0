/* models.c — what a device model's name says: its vendor (resources.h),
 * for clusters read from traces and reports per vendor. */
#include "core/models.h"

#include <ctype.h>
#include <stddef.h>
#include <strings.h>
#include <string.h>

/* Words of model names, by vendor; the first match counts, NVIDIA when
 * none does. Matched case-insensitively anywhere in the name. */
static const struct {
	const char *word;
	enum gp_vendor vendor;
} words[] = {
	{ "ascend", GP_VENDOR_ASCEND }, { "910b", GP_VENDOR_ASCEND },
	{ "910a", GP_VENDOR_ASCEND },   { "310p", GP_VENDOR_ASCEND },
	{ "dcu", GP_VENDOR_HYGON },     { "k100", GP_VENDOR_HYGON },
	{ "z100", GP_VENDOR_HYGON },    { "mlu", GP_VENDOR_CAMBRICON },
	{ "mi300", GP_VENDOR_AMD },     { "mi250", GP_VENDOR_AMD },
	{ "mi210", GP_VENDOR_AMD },     { "instinct", GP_VENDOR_AMD },
	{ "max1550", GP_VENDOR_INTEL }, { "max 1550", GP_VENDOR_INTEL },
	{ "flex", GP_VENDOR_INTEL },    { "intel", GP_VENDOR_INTEL },
};

static bool contains(const char *name, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = name; *p; p++)
		if (strncasecmp(p, word, n) == 0)
			return true;
	return false;
}

enum gp_vendor gp_model_vendor(const char *name)
{
	for (size_t i = 0; name && i < sizeof(words) / sizeof(words[0]); i++)
		if (contains(name, words[i].word))
			return words[i].vendor;
	return GP_VENDOR_NVIDIA;
}

const char *gp_vendor_name(enum gp_vendor v)
{
	static const char *const names[] = {
		[GP_VENDOR_NVIDIA] = "nvidia",       [GP_VENDOR_ASCEND] = "ascend",
		[GP_VENDOR_HYGON] = "hygon",         [GP_VENDOR_CAMBRICON] = "cambricon",
		[GP_VENDOR_AMD] = "amd",             [GP_VENDOR_INTEL] = "intel",
		[GP_VENDOR_OTHER] = "other",
	};

	return v <= GP_VENDOR_OTHER ? names[v] : "other";
}

/* Short names a model answers to that are not words of its name: a name
 * that holds `in_name` where a word starts ("Ascend910B2" holds
 * "Ascend910B") answers to `alias` ("910B"). */
static const struct {
	const char *alias, *in_name;
} aliases[] = {
	{ "910B", "Ascend910B" }, { "910A", "Ascend910A" }, { "310P", "Ascend310P" },
	{ "MAX1550", "Max 1550" },
};

static bool is_alnum(char c)
{
	return isalnum((unsigned char)c);
}

/* Does `name` hold the `len` bytes of `text` (case-insensitively) as
 * whole words: no letter or digit just before them, nor just after them
 * unless `open_end`? "A100" in "NVIDIA A100-SXM4-80GB", not "A10". */
static bool holds_words(const char *name, const char *text, size_t len, bool open_end)
{
	for (const char *p = name; *p; p++) {
		if (strncasecmp(p, text, len) != 0)
			continue;
		if ((p == name || !is_alnum(p[-1]) || !is_alnum(text[0])) &&
		    (open_end || !is_alnum(p[len]) || !is_alnum(text[len - 1])))
			return true;
	}
	return false;
}

/* Does a device named `name` of `vendor` answer to one term (len bytes)? */
static bool term_answers(const char *name, const char *vendor, const char *term, size_t len)
{
	if (holds_words(name, term, len, false) ||
	    (vendor && strlen(vendor) == len && strncasecmp(vendor, term, len) == 0))
		return true;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strlen(aliases[i].alias) == len && strncasecmp(aliases[i].alias, term, len) == 0 &&
		    holds_words(name, aliases[i].in_name, strlen(aliases[i].in_name), true))
			return true;
	return false;
}

bool gp_model_answers(const char *name, const char *vendor, const char *model)
{
	for (const char *p = model; *p;) {
		size_t len = strcspn(p, "|,"), next = len + (p[len] != '\0');

		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
			next--;
		}
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (len && term_answers(name, vendor, p, len))
			return true;
		p += next;
	}
	return false;
}

/* Is key a vendor's name ("nvidia")? */
static bool vendor_term(const char *key)
{
	for (int v = GP_VENDOR_NVIDIA; v <= GP_VENDOR_OTHER; v++)
		if (!strcasecmp(key, gp_vendor_name((enum gp_vendor)v)))
			return true;
	return false;
}

size_t gp_model_rank(const char *name, const char *vendor, const char *key)
{
	if (!key[0] || !gp_model_answers(name, vendor, key))
		return 0;
	return vendor_term(key) ? 1 : strlen(key) + 1;
}

int gp_model_best(const char *name, const char *vendor, const void *items, size_t size,
		  size_t offset, int n)
{
	size_t best_rank = 0;
	int best = -1;

	for (int i = 0; i < n; i++) {
		size_t rank = gp_model_rank(name, vendor,
					    (const char *)items + (size_t)i * size + offset);

		if (rank > best_rank) {
			best_rank = rank;
			best = i;
		}
	}
	return best;
}
