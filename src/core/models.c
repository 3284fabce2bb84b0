/* models.c — what a device model's name says: its vendor (resources.h),
 * for clusters read from traces and reports per vendor. */
#include "core/models.h"

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

bool gp_model_answers(const char *name, const char *vendor, const char *model)
{
	for (const char *p = model; *p;) {
		size_t len = strcspn(p, "|,");
		char term[64];

		if (len && len < sizeof(term)) {
			memcpy(term, p, len);
			term[len] = '\0';
			if (strcasestr(name, term) || (vendor && !strcasecmp(vendor, term)))
				return true;
		}
		p += len + (p[len] != '\0');
	}
	return false;
}
