/* test-fuzz.c — seeded mutation fuzzing of the parsers that take outside
 * input: the server's YAML configuration (gp_config_load), request bodies
 * checked against a field table (gp_fields_parse, a task's declared
 * variables among them), the stored variables turned into an environment
 * (gp_task_env_array), tenants' user specs (gp_user_resolve), sizes,
 * whole numbers and prices (gp_parse_size, gp_parse_uint, gp_price_parse)
 * and libgpushare's environment (gp_shim_config_load).
 *
 * Each test starts from a corpus of good and nearly good inputs and, a
 * few thousand times, applies a handful of random mutations (bit flips,
 * interesting bytes and tokens, long runs, huge numbers, UTF-8 fragments,
 * cuts, copies, splices of two inputs) drawn from base/rng.h. It checks
 * invariants only: no crash or sanitizer report, and either success with
 * every value in range or a failure with a NUL-terminated message that
 * stays inside the buffer it was given. Inputs that once found a bug stay
 * below as fixed regression cases.
 *
 * Every run is the same (a fixed seed). GPUPOOL_FUZZ_SEED=N changes the
 * seed, GPUPOOL_FUZZ_ITERS=N the iterations per test, and
 * GPUPOOL_FUZZ_ITER=N runs only iteration N (each iteration is seeded on
 * its own); a failure prints the seed, the iteration and the input.
 *
 * simdev's GPUPOOL_SIM_DEVICES parser is not here: it is static and
 * reached only through sim_open, which maps state files and claims a
 * process slot that nothing releases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/rng.h"
#include "base/user.h"
#include "server/bill.h"
#include "server/config.h"
#include "server/fields.h"
#include "server/meter.h"
#include "agent/taskenv.h"
#include "shim/config.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#define DEFAULT_SEED 0x67707570ULL /* "gpup" */
#define INPUT_MAX    16384
#define RUN_MAX      5000          /* longest run of one byte or token */
#define ERR_MAX      1024
#define CANARY       0x5a

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* One input: len bytes (NULs allowed) and a NUL after them. */
struct input {
	size_t len;
	char b[INPUT_MAX + 1];
};

struct fuzz {
	const char *parser;
	const char *detail;        /* which variable, for the reports */
	uint64_t seed;
	unsigned iter;
	struct gp_rng rng;
	const char *const *corpus; /* NUL-terminated texts */
	size_t n_corpus;
	const char *const *tokens; /* the parser's own */
	size_t n_tokens;
	const struct input *in;	   /* being checked, for the reports */
	const char *fixed;	   /* a regression case: this input, unmutated */
};

static struct fuzz *current;

/* ---- reports ---------------------------------------------------------- */

static void print_input(const struct input *in)
{
	size_t show = MIN(in->len, 2000);

	fprintf(stderr, "input (%zu bytes%s): \"", in->len, show < in->len ? ", the first 2000" : "");
	for (size_t i = 0; i < show; i++) {
		unsigned char c = (unsigned char)in->b[i];

		if (c == '"' || c == '\\')
			fprintf(stderr, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x\"\"", c);
	}
	fprintf(stderr, "\"\n");
}

static void report(void)
{
	if (!current)
		return;
	fprintf(stderr, "fuzz %s: seed %llu (GPUPOOL_FUZZ_SEED), iteration %u (GPUPOOL_FUZZ_ITER)\n",
		current->parser, (unsigned long long)current->seed, current->iter);
	if (current->detail)
		fprintf(stderr, "%s\n", current->detail);
	if (current->in)
		print_input(current->in);
}

/* An invariant: on failure, says how to replay it, then fails the test. */
#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			report();                                                        \
			fail_msg("invariant failed: %s", #cond);                         \
		}                                                                        \
	} while (0)

/* err[0..len) holds a NUL; err[len..ERR_MAX) is untouched. */
static void check_err(const char *err, size_t len, bool want_text)
{
	CHECK(memchr(err, '\0', len) != NULL);
	if (want_text && len > 1)
		CHECK(err[0] != '\0');
	for (size_t i = len; i < ERR_MAX; i++)
		CHECK(err[i] == (char)CANARY);
}

/* ---- mutations ---------------------------------------------------------- */

static const char interesting_bytes[] = "\0\n\r\t :-,=\"'{}[]#&*!%|>.~\\/0159+";

static const char *const common_tokens[] = {
	"0", "00", "-0", "-1", "+1", "1.5", ".", "..", "1e308", "1e-308", "1e999",
	"0x10", "0x1p3", "nan", "NaN", "inf", "-inf", "infinity",
	"4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
	"18446744073709551615", "18446744073709551616", "340282366920938463463374607431768211456",
	"99999999999999999999999999999999999999999999999999",
	"\xc3\xa9", "\xc3", "\xe2\x82", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf0\x9f",
	"\xff", "\xfe\xff", "\xed\xa0\x80", "\xc0\x80", "%s%n%x", "\r\n",
};

static size_t below(struct fuzz *f, size_t n)
{
	return n ? (size_t)gp_rng_below(&f->rng, n) : 0;
}

static void insert(struct input *in, size_t at, const char *s, size_t n)
{
	if (n > INPUT_MAX - in->len)
		n = INPUT_MAX - in->len;
	memmove(in->b + at + n, in->b + at, in->len - at);
	memcpy(in->b + at, s, n);
	in->len += n;
	in->b[in->len] = '\0';
}

static void erase(struct input *in, size_t at, size_t n)
{
	if (n > in->len - at)
		n = in->len - at;
	memmove(in->b + at, in->b + at + n, in->len - at - n);
	in->len -= n;
	in->b[in->len] = '\0';
}

static const char *pick_token(struct fuzz *f)
{
	size_t i = below(f, N(common_tokens) + f->n_tokens);

	return i < N(common_tokens) ? common_tokens[i] : f->tokens[i - N(common_tokens)];
}

/* A run of one byte or one token, up to RUN_MAX bytes. */
static void insert_run(struct fuzz *f, struct input *in, size_t at)
{
	static char run[RUN_MAX];
	size_t want = 1 + below(f, below(f, 2) ? 80 : RUN_MAX), len = 0;
	const char *tok;
	char c;

	if (below(f, 2)) {
		c = interesting_bytes[below(f, sizeof(interesting_bytes) - 1)];
		memset(run, below(f, 4) ? c : (char)gp_rng_next(&f->rng), want);
		len = want;
	} else {
		tok = pick_token(f);
		while (len + strlen(tok) <= want) {
			memcpy(run + len, tok, strlen(tok));
			len += strlen(tok);
		}
	}
	insert(in, at, run, len);
}

/* Copies a piece of another corpus input over or into this one. */
static void splice(struct fuzz *f, struct input *in, size_t at)
{
	const char *other = f->corpus[below(f, f->n_corpus)];
	size_t len = strlen(other), from = below(f, len + 1);
	size_t n = below(f, len - from + 1);

	if (below(f, 2))
		erase(in, at, in->len - at);
	insert(in, at, other + from, n);
}

static void mutate_once(struct fuzz *f, struct input *in)
{
	static char piece[INPUT_MAX];
	size_t at = below(f, in->len + 1), n;
	const char *tok;

	switch (below(f, 10)) {
	case 0:
		if (in->len)
			in->b[below(f, in->len)] ^= (char)(1u << below(f, 8));
		break;
	case 1:
		if (in->len)
			in->b[below(f, in->len)] = (char)gp_rng_next(&f->rng);
		break;
	case 2:
		insert(in, at, &interesting_bytes[below(f, sizeof(interesting_bytes) - 1)], 1);
		break;
	case 3:
	case 4:
		tok = pick_token(f);
		insert(in, at, tok, strlen(tok));
		break;
	case 5: insert_run(f, in, at); break;
	case 6: erase(in, at, 1 + below(f, 16)); break;
	case 7: erase(in, at, in->len - at); break; /* truncation */
	case 8:                                       /* duplication */
		n = below(f, in->len - at + 1);
		memcpy(piece, in->b + at, n);
		insert(in, below(f, in->len + 1), piece, n);
		break;
	case 9: splice(f, in, at); break;
	}
}

/* A corpus input with a few mutations (none now and then). */
static void make_input(struct fuzz *f, struct input *in)
{
	const char *base = f->fixed ? f->fixed : f->corpus[below(f, f->n_corpus)];
	size_t rounds = f->fixed || below(f, 8) == 0 ? 0 : 1 + below(f, below(f, 4) ? 4 : 16);

	in->len = strnlen(base, INPUT_MAX);
	memcpy(in->b, base, in->len);
	in->b[in->len] = '\0';
	for (size_t i = 0; i < rounds; i++)
		mutate_once(f, in);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

/* Seeds the generator of iteration i on its own, so any one can be replayed. */
static void iteration_seed(struct fuzz *f, unsigned i)
{
	f->iter = i;
	gp_rng_init(&f->rng, f->seed ^ ((uint64_t)(i + 1) * 0x9e3779b97f4a7c15ULL));
}

/* Checks one input; true when the parser took it. */
typedef bool check_fn(struct fuzz *f, void *ctx);

/* Runs check iters times (GPUPOOL_FUZZ_ITERS), or only GPUPOOL_FUZZ_ITER. */
static void fuzz_run(struct fuzz *f, unsigned iters, check_fn *check, void *ctx)
{
	const char *only = getenv("GPUPOOL_FUZZ_ITER");
	unsigned first = 0, end, taken = 0;

	f->seed = env_u64("GPUPOOL_FUZZ_SEED", DEFAULT_SEED);
	end = (unsigned)env_u64("GPUPOOL_FUZZ_ITERS", iters);
	if (only && *only) {
		first = (unsigned)strtoul(only, NULL, 0);
		end = first + 1;
	}
	current = f;
	for (unsigned i = first; i < end; i++) {
		iteration_seed(f, i);
		taken += check(f, ctx);
	}
	current = NULL;
	print_message("fuzz %s: %u iterations (%u taken), seed %llu\n", f->parser,
		      end - first, taken, (unsigned long long)f->seed);
}

/* The inputs that once found a bug, each checked as it is. */
static void fuzz_fixed(struct fuzz *f, const char *const *inputs, size_t n, check_fn *check,
		       void *ctx)
{
	current = f;
	for (size_t i = 0; i < n; i++) {
		iteration_seed(f, 0);
		f->fixed = inputs[i];
		check(f, ctx);
	}
	f->fixed = NULL;
	current = NULL;
}

/* An error buffer of random length (1 to ERR_MAX) with a canary after it. */
static size_t err_prepare(struct fuzz *f, char *err)
{
	memset(err, CANARY, ERR_MAX);
	return below(f, 4) ? ERR_MAX : 1 + below(f, ERR_MAX);
}

/* ---- gp_parse_size ------------------------------------------------------- */

/* What gp_parse_size should say, worked out another way: the unit
 * lowercased, looked up among every spelling (K, KB, KiB in any case). */
static bool size_oracle(const char *s, uint64_t *ret)
{
	static const char *const units[] = {"",	  "k", "kb", "kib", "m", "mb", "mib",
					    "g", "gb", "gib", "t",  "tb", "tib"};
	unsigned __int128 n = 0;
	const char *p = s;
	char unit[8];
	unsigned shift = 0;
	size_t i = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		if ((n = n * 10 + (unsigned)(*p - '0')) > UINT64_MAX)
			return false;
	if (p == s || strlen(p) >= sizeof(unit))
		return false;
	for (i = 0; p[i]; i++)
		unit[i] = (char)tolower((unsigned char)p[i]);
	unit[i] = '\0';
	for (i = 0; i < N(units) && strcmp(unit, units[i]); i++)
		;
	if (i == N(units))
		return false;
	shift = 10 * (unsigned)((i + 2) / 3);
	if ((n << shift) > UINT64_MAX)
		return false;
	*ret = (uint64_t)(n << shift);
	return true;
}

static const char *const size_corpus[] = {
	"4G", "4096M", "512K", "1073741824", "1KiB", "16TiB", "0", "1t", "2g", "3m", "4k",
	"16777215T", "16777216T", "18446744073709551615", "18446744073709551616", "8MiB", "-1G",
	"", "G", " 4G", "4G ", "4 G", "4GB", "4Gi", "512mb", "4gib", "4GiBs", "4B",
};

static const char *const size_tokens[] = {
	"K", "k", "KiB", "M", "m", "MiB", "G", "g", "GiB", "T", "t", "TiB", "B", "Ki", "P",
	"KB", "mb", "Gb", "iB", "ib", "GIB", "tB",
	"17179869184", "18014398509481984", "16777216",
};

static bool check_size(struct fuzz *f, void *ctx)
{
	static struct input in;
	uint64_t got = 0xdeadbeef, want = 0;
	bool ok;
	int r;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	r = gp_parse_size(in.b, &got);
	ok = size_oracle(in.b, &want);
	CHECK(r == 0 || r == -EINVAL);
	CHECK((r == 0) == ok);
	if (ok)
		CHECK(got == want);
	else
		CHECK(got == 0xdeadbeef); /* untouched on failure */
	return ok;
}

static void test_parse_size(void **state)
{
	struct fuzz f = {.parser = "gp_parse_size", .corpus = size_corpus,
			 .n_corpus = N(size_corpus), .tokens = size_tokens,
			 .n_tokens = N(size_tokens)};
	uint64_t v;

	(void)state;
	assert_int_equal(gp_parse_size(NULL, &v), -EINVAL);
	assert_int_equal(gp_parse_size("4G", NULL), -EINVAL);
	fuzz_run(&f, 10000, check_size, NULL);
}

/* ---- gp_parse_uint -------------------------------------------------------- */

struct uint_case {
	unsigned lo, hi;
	const char *suffix;
};

static const struct uint_case uint_cases[] = {
	{0, 100, "%"}, {1, 65535, NULL}, {0, UINT_MAX, NULL}, {100, 3600000, NULL},
	{0, 0, NULL}, {5, 5, "ms"}, {0, UINT_MAX, ""},
};

static bool uint_oracle(const char *s, const struct uint_case *c, unsigned *ret)
{
	unsigned __int128 n = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++)
		if ((n = n * 10 + (unsigned)(*p - '0')) > UINT64_MAX)
			return false;
	if (p == s || n < c->lo || n > c->hi || (*p && !(c->suffix && !strcmp(p, c->suffix))))
		return false;
	*ret = (unsigned)n;
	return true;
}

static const char *const uint_corpus[] = {
	"30%", "30", "100%", "101%", "65535", "65536", "0", "4294967295", "4294967296",
	"3600000", "99", "5ms", "5", "", "%", " 1", "+1", "-1", "1 ",
};

static const char *const uint_tokens[] = {"%", "ms", " ", "+", "-", "0", "65535"};

static bool check_uint(struct fuzz *f, void *ctx)
{
	static struct input in;
	const struct uint_case *c = &uint_cases[below(f, N(uint_cases))];
	unsigned got = 0xdeadbeef, want = 0;
	bool ok, r;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	r = gp_parse_uint(in.b, c->lo, c->hi, c->suffix, &got);
	ok = uint_oracle(in.b, c, &want);
	CHECK(r == ok);
	if (ok)
		CHECK(got == want && got >= c->lo && got <= c->hi);
	else
		CHECK(got == 0xdeadbeef);
	return ok;
}

static void test_parse_uint(void **state)
{
	struct fuzz f = {.parser = "gp_parse_uint", .corpus = uint_corpus,
			 .n_corpus = N(uint_corpus), .tokens = uint_tokens,
			 .n_tokens = N(uint_tokens)};
	unsigned v;

	(void)state;
	assert_false(gp_parse_uint(NULL, 0, 1, NULL, &v));
	fuzz_run(&f, 10000, check_uint, NULL);
}

/* ---- gp_price_parse --------------------------------------------------------- */

static const char *const price_corpus[] = {
	"A100=2.50", "T4=0.35", "H100 80GB=12", "x=0", "a=1e9", "a=.5", "a=5.", "L40S=1000000000",
	"A100", "=2.5", "A100=", "A100=-1", "A100=abc", "A100=2.5x", "A100=nan", "A100=1e10",
	"A123456789012345678901234567890123456789012345678901234567890123=1", "a==1", "a=1=2",
};

static const char *const price_tokens[] = {
	"=", "e", "E", "e+", "e-", "0x", "p", "1e9", "1000000000", "1000000000.0000001", "A100",
};

/* A price's text: digits, at most one '.', and an exponent; nothing else
 * (no sign, no spaces, no hexadecimal, no "inf"). */
static bool is_decimal(const char *s)
{
	size_t digits = strspn(s, "0123456789");

	s += digits;
	if (*s == '.') {
		size_t more = strspn(s + 1, "0123456789");

		s += 1 + more;
		digits += more;
	}
	if (digits == 0)
		return false;
	if (*s == 'e' || *s == 'E') {
		s += 1 + (s[1] == '+' || s[1] == '-');
		if (!(*s >= '0' && *s <= '9'))
			return false;
		s += strspn(s, "0123456789");
	}
	return *s == '\0';
}

static bool check_price(struct fuzz *f, void *ctx)
{
	static struct input in;
	struct gp_price p;
	char err[ERR_MAX];
	size_t err_len = err_prepare(f, err);
	const char *eq;
	int r;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	memset(&p, CANARY, sizeof(p));
	r = gp_price_parse(in.b, &p, err, err_len);
	CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		check_err(err, err_len, true);
		return false;
	}
	eq = strchr(in.b, '=');
	CHECK(eq != NULL);
	CHECK(memchr(p.model, '\0', sizeof(p.model)) != NULL);
	CHECK(strlen(p.model) >= 1 && strlen(p.model) == (size_t)(eq - in.b));
	CHECK(strncmp(p.model, in.b, strlen(p.model)) == 0);
	CHECK(isfinite(p.per_hour) && p.per_hour >= 0 && p.per_hour <= GP_PRICE_LIMIT);
	CHECK(is_decimal(eq + 1));
	return true;
}

static void test_price_parse(void **state)
{
	struct fuzz f = {.parser = "gp_price_parse", .corpus = price_corpus,
			 .n_corpus = N(price_corpus), .tokens = price_tokens,
			 .n_tokens = N(price_tokens)};

	/* Found by this test: strtod took hexadecimal ("0xabc" was 2748). */
	static const char *const fixed[] = {"A100=0xabc", "A100=0x1p3", "A100=0X10"};

	(void)state;
	fuzz_fixed(&f, fixed, N(fixed), check_price, NULL);
	fuzz_run(&f, 10000, check_price, NULL);
}

/* ---- gp_fields_parse ---------------------------------------------------------- */

#define MEM_MIB_MAX (16ULL * 1024 * 1024)

static const char *const isolations[] = {"hard", "shared", NULL};
static const char *const kinds[] = {"batch", "training", "inference", "interactive", NULL};

/* Tables like the API's (src/server/api.c, api-quota.c): every kind of field. */
static const struct gp_field task_fields[] = {
	{"name", GP_FIELD_NAME},
	{"command", GP_FIELD_COMMAND, .required = true},
	{"template", GP_FIELD_NAME},
	{"mem_mib", GP_FIELD_UINT, false, 1, MEM_MIB_MAX},
	{"compute_pct", GP_FIELD_UINT, false, 1, 100},
	{"devices", GP_FIELD_UINT, false, 1, 16},
	{"whole", GP_FIELD_BOOL},
	{"isolation", GP_FIELD_CHOICE, .choices = isolations},
	{"priority", GP_FIELD_UINT, false, 0, 9},
	{"kind", GP_FIELD_CHOICE, .choices = kinds},
	{"model", GP_FIELD_TEXT, .hi = GP_STORE_NAME_MAX - 1},
	{"env", GP_FIELD_ENV},
	{NULL},
};

static const struct gp_field quota_fields[] = {
	{"name", GP_FIELD_NAME, .required = true},
	{"mem_guaranteed_mib", GP_FIELD_UINT, true, 0, MEM_MIB_MAX},
	{"compute_guaranteed_pct", GP_FIELD_UINT, false, 0, 100 * 1024},
	{"reason", GP_FIELD_TEXT, .hi = 200},
	{NULL},
};

/* Like POST /v1/sim/history's (src/server/api-sim.c): lists of strings. */
static const struct gp_field whatif_fields[] = {
	{"policy", GP_FIELD_TEXT, .hi = 63},
	{"template", GP_FIELD_TEXTS, .hi = 127},
	{"advised", GP_FIELD_BOOL},
	{NULL},
};

static const struct gp_field *const field_tables[] = {task_fields, quota_fields,
						      whatif_fields};

static const char *const fields_corpus[] = {
	"{\"command\": [\"sleep\", \"1\"], \"name\": \"job-1\", \"mem_mib\": 1024, "
	"\"compute_pct\": 50, \"devices\": 1, \"whole\": false, \"isolation\": \"hard\", "
	"\"priority\": 5, \"kind\": \"batch\", \"model\": \"A100\", \"template\": "
	"\"t.1\"}",
	"{\"command\": \"python train.py --epochs 3\"}",
	"{\"command\": [\"a\"], \"kind\": \"interactive\", \"isolation\": \"shared\"}",
	"{\"name\": \"team_a\", \"mem_guaranteed_mib\": 16777216, "
	"\"compute_guaranteed_pct\": 0,"
	" \"reason\": \"more \\u00e9 \\ud83d\\ude00\"}",
	"{\"name\": \"a\", \"mem_guaranteed_mib\": 0}",
	"{\"template\": [\"half=1280,25\", \"\"], \"policy\": \"fgd\", \"advised\": true}",
	"{\"command\": \"x\", \"command\": \"y\"}",
	"{\"command\": [], \"mem_mib\": -1, \"devices\": 1.5, \"whole\": 1}",
	"[1, 2, 3]",
	"\"text\"",
	"null",
	"{}",
	"",
	"{\"unknown\": true}",
	"{\"command\": \"x\", \"env\": {\"A\": \"1\", \"_B2\": \"x=y\", "
	"\"LD_LIBRARY_PATH\": "
	"\"/opt/lib\"}}",
	"{\"command\": \"x\", \"env\": {\"LD_PRELOAD\": \"/x.so\", \"GPUPOOL_X\": \"\", "
	"\"CUDA_VISIBLE_DEVICES\": \"0\", \"HOME\": \"/\"}}",
	"{\"command\": \"x\", \"env\": {\"A\": 1, \"1B\": \"\", \"C\": \"\\u0000\"}}",
	"{\"command\": \"x\", \"env\": []}",
};

static const char *const fields_tokens[] = {
	"\"command\"",
	"\"name\"",
	"\"mem_mib\"",
	"\"priority\"",
	"\"reason\"",
	"\"kind\"",
	"\"mem_guaranteed_mib\"",
	":",
	",",
	"{",
	"}",
	"[",
	"]",
	"true",
	"false",
	"null",
	"\"\"",
	"\"\\u0000\"",
	"\"\\ud800\"",
	"\\u00e9",
	"\\\"",
	"1e3",
	"-9223372036854775808",
	"\"hard\"",
	"\"batch\"",
	"\"a\"",
	"\"_a\"",
	", \"x\": 1",
	"\"env\"",
	"{\"A\": \"1\"}",
	"\"LD_PRELOAD\"",
	"\"GPUPOOL_\"",
	"_VISIBLE_DEVICES\"",
	"\"HOME\"",
	"\"ZE_AFFINITY_MASK\"",
	"\"USER\"",
};

/* ---- task variables, worked out another way ------------------------------------- */

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* A name a submitter may declare: [A-Za-z_][A-Za-z0-9_]*, at most 128,
 * none of gpupool's own. */
static bool env_name_oracle(const char *name, size_t len)
{
	static const char *const own[] = {
		"LD_PRELOAD",	    "LD_AUDIT", "GPU_DEVICE_ORDINAL",
		"ZE_AFFINITY_MASK", "HOME",	"USER",
		"LOGNAME"};

	if (len == 0 || len > 128 || len != strlen(name) ||
	    (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z')))
			return false;
	}
	for (size_t i = 0; i < N(own); i++)
		if (!strcmp(name, own[i]))
			return false;
	return strncmp(name, "GPUPOOL_", 8) != 0 && !ends_with(name, "_VISIBLE_DEVICES");
}

static bool env_oracle(json_t *env)
{
	const char *name;
	size_t len;
	json_t *v;

	if (!json_is_object(env) || json_object_size(env) > 64)
		return false;
	json_object_keylen_foreach(env, name, len, v)
	{
		if (!env_name_oracle(name, len) || !json_is_string(v) ||
		    json_string_length(v) > 4096 ||
		    memchr(json_string_value(v), '\0', json_string_length(v)))
			return false;
	}
	return true;
}

/* What a good body must hold: every member a field of the table with a
 * value of its kind, every required field there. */
static void check_good_body(const struct gp_field *fields, json_t *body)
{
	const char *key;
	json_t *v;

	CHECK(json_is_object(body));
	json_object_foreach (body, key, v) {
		const struct gp_field *fl = fields;

		while (fl->name && strcmp(fl->name, key))
			fl++;
		CHECK(fl->name != NULL);
		switch (fl->kind) {
		case GP_FIELD_NAME:
			CHECK(json_is_string(v) && gp_field_is_name(json_string_value(v)));
			break;
		case GP_FIELD_TEXT:
			CHECK(json_is_string(v) && json_string_length(v) <= fl->hi);
			break;
		case GP_FIELD_UINT:
			CHECK(json_is_integer(v) && json_integer_value(v) >= 0);
			CHECK(gp_field_uint(body, key, 0) >= fl->lo &&
			      gp_field_uint(body, key, 0) <= fl->hi);
			break;
		case GP_FIELD_BOOL:
			CHECK(json_is_boolean(v));
			(void)gp_field_bool(body, key);
			break;
		case GP_FIELD_CHOICE: {
			const char *const *c = fl->choices;

			CHECK(json_is_string(v));
			while (*c && strcmp(*c, json_string_value(v)))
				c++;
			CHECK(*c != NULL);
			break;
		}
		case GP_FIELD_COMMAND:
			CHECK((json_is_string(v) && json_string_length(v) > 0) ||
			      (json_is_array(v) && json_array_size(v) > 0 &&
			       json_is_string(json_array_get(v, 0))));
			break;
		case GP_FIELD_ENV: CHECK(env_oracle(v)); break;
		case GP_FIELD_TEXTS:
			CHECK(json_is_array(v) && json_array_size(v) <= GP_FIELD_TEXTS_MAX);
			for (size_t i = 0; i < json_array_size(v); i++)
				CHECK(json_is_string(json_array_get(v, i)) &&
				      json_string_length(json_array_get(v, i)) <= fl->hi);
			break;
		}
	}
	for (; fields->name; fields++)
		CHECK(!fields->required || gp_field_has(body, fields->name));
}

static bool check_fields(struct fuzz *f, void *ctx)
{
	static struct input in;
	const struct gp_field *fields = field_tables[below(f, N(field_tables))];
	struct gp_http_request req = {.method = "POST", .path = "/v1/fuzz"};
	struct gp_http_reply reply = {0};
	json_t *body = NULL, *error;
	bool ok;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	req.body = in.b;
	req.body_len = in.len;
	ok = gp_fields_parse(&req, fields, &reply, &body);
	if (ok) {
		CHECK(body != NULL && reply.body == NULL);
		check_good_body(fields, body);
		json_decref(body);
		return true;
	}
	/* A 400 whose body says what is wrong. */
	CHECK(reply.status == 400);
	error = json_object_get(reply.body, "error");
	CHECK(json_is_string(error) && json_string_length(error) > 0);
	json_decref(reply.body);
	free(reply.text);
	return false;
}

/* {"<prefix><char x n>": 1}, in buf. */
static const char *long_key(char *buf, size_t size, const char *prefix, const char *c,
			    int n)
{
	size_t len = (size_t)snprintf(buf, size, "{\"%s", prefix);

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s", c);
	snprintf(buf + len, size - len, "\": 1}");
	return buf;
}

static void test_fields_parse(void **state)
{
	struct fuzz f = {.parser = "gp_fields_parse", .corpus = fields_corpus,
			 .n_corpus = N(fields_corpus), .tokens = fields_tokens,
			 .n_tokens = N(fields_tokens)};
	static char keys[6][1024];
	/* Found by this test: an unknown field with a long name of multibyte
	 * characters, cut mid-character by gp_http_error's 512-byte limit,
	 * made json_pack fail and the 400 went out without its message. */
	const char *fixed[] = {
		long_key(keys[0], sizeof(keys[0]), "", "\xe2\x82\xac", 200),
		long_key(keys[1], sizeof(keys[1]), "a", "\xe2\x82\xac", 200),
		long_key(keys[2], sizeof(keys[2]), "ab", "\xe2\x82\xac", 200),
		long_key(keys[3], sizeof(keys[3]), "", "\xf0\x9f\x98\x80", 150),
		long_key(keys[4], sizeof(keys[4]), "a", "\xc3\xa9", 300),
		long_key(keys[5], sizeof(keys[5]), "co", "\xe2\x82\xac", 220),
	};

	(void)state;
	fuzz_fixed(&f, fixed, N(fixed), check_fields, NULL);
	fuzz_run(&f, 6000, check_fields, NULL);
}

/* ---- gp_task_env_array ------------------------------------------------------------ */

static const char *const env_corpus[] = {
	"{}",
	"{\"A\":\"1\"}",
	"{\"LD_LIBRARY_PATH\":\"/opt/lib:/usr/lib\",\"PATH\":\"/bin\"}",
	"{\"A\":\"x=y=z\",\"B_2\":\"\",\"_\":\"\\u00e9\\ud83d\\ude00\"}",
	"{\"LD_PRELOAD\":\"/x\"}",
	"{\"A\":1}",
	"{\"A\":\"1\",\"A\":\"2\"}",
	"[\"A=1\"]",
	"{\"HIP_VISIBLE_DEVICES\":\"0\"}",
	"{\"a\":\"\\u0000\"}",
	"",
	"null",
};

static const char *const env_tokens[] = {
	"\"",	      "\":\"",
	"\",\"",      "{",
	"}",	      "=",
	"\\u0000",    "\\n",
	"GPUPOOL_",   "_VISIBLE_DEVICES",
	"LD_PRELOAD", "LD_AUDIT",
	"HOME",	      "USER",
	"LOGNAME",    "LD_LIBRARY_PATH",
	"1A",
};

static bool check_env_array(struct fuzz *f, void *ctx)
{
	static struct input in;
	char **untouched = (char **)&in, **a = untouched;
	json_t *parsed;
	bool want;
	size_t n = 0;
	int r;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	parsed = json_loads(in.b, JSON_REJECT_DUPLICATES, NULL);
	want = parsed && env_oracle(parsed);
	r = gp_task_env_array(in.b, &a);
	CHECK(r == 0 || r == -EINVAL);
	CHECK((r == 0) == want);
	if (r < 0) {
		CHECK(a == untouched);
		json_decref(parsed);
		return false;
	}
	/* One "NAME=value" per variable, each as the object has it. */
	for (; a[n]; n++) {
		const char *eq = strchr(a[n], '=');
		json_t *v;

		CHECK(eq != NULL);
		v = json_object_getn(parsed, a[n], (size_t)(eq - a[n]));
		CHECK(json_is_string(v) && !strcmp(eq + 1, json_string_value(v)));
	}
	CHECK(n == json_object_size(parsed));
	gp_task_env_free(a);
	json_decref(parsed);
	return true;
}

static void test_env_array(void **state)
{
	struct fuzz f = {.parser = "gp_task_env_array",
			 .corpus = env_corpus,
			 .n_corpus = N(env_corpus),
			 .tokens = env_tokens,
			 .n_tokens = N(env_tokens)};

	(void)state;
	fuzz_run(&f, 6000, check_env_array, NULL);
}

/* ---- gp_user_resolve -------------------------------------------------------------- */

static const char *const user_corpus[] = {
	"root",
	"daemon",
	"nobody",
	"daemon:daemon",
	"bin:adm",
	"1000:1000",
	"0:0",
	"1:0",
	"65534:65534",
	"4294967294:4294967294",
	"4294967295:1",
	"nobody:nogroup",
	"a$",
	"a:b:c",
	"",
	":",
	"-x",
	"gp-no-such-user",
	"1000",
	"x:1000",
};

static const char *const user_tokens[] = {
	":", "$",  "root",   "0",      "00",	     "-",
	".", "..", "daemon", "nobody", "4294967294", ":0",
};

static bool check_user(struct fuzz *f, void *ctx)
{
	static struct input in;
	struct gp_user u;
	char err[ERR_MAX];
	size_t err_len = err_prepare(f, err);
	int r;

	(void)ctx;
	make_input(f, &in);
	f->in = &in;
	memset(&u, 0x5a, sizeof(u));
	r = gp_user_resolve(in.b, &u, err, err_len);
	CHECK(r == 0 || r == -EINVAL || r == -ENOENT || r == -ENAMETOOLONG);
	if (r < 0) {
		check_err(err, err_len, true);
		CHECK(u.uid == (uid_t)0x5a5a5a5a); /* untouched */
		return false;
	}
	/* Never root, never the kernel's "no id"; a spec of the grammar's bytes. */
	CHECK(u.uid != 0 && u.gid != 0);
	CHECK(u.uid != (uid_t)-1 && u.gid != (gid_t)-1);
	CHECK(memchr(u.name, '\0', sizeof(u.name)) &&
	      memchr(u.home, '\0', sizeof(u.home)));
	CHECK(strlen(in.b) < GP_USER_SPEC_MAX);
	CHECK(strspn(in.b, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345678"
			   "9._-:$") == strlen(in.b));
	return true;
}

static void test_user_resolve(void **state)
{
	struct fuzz f = {.parser = "gp_user_resolve",
			 .corpus = user_corpus,
			 .n_corpus = N(user_corpus),
			 .tokens = user_tokens,
			 .n_tokens = N(user_tokens)};

	(void)state;
	fuzz_run(&f, 4000, check_user, NULL);
}

/* ---- gp_config_load -------------------------------------------------------------- */

static const char *const config_snippets[] = {
	"", "~\n", "---\n...\n", "# nothing\n",
	"{db: /x.db, socket: /s, tcp: 8470, queue_max: 1, with_agent: off, grace_ms: 0}\n",
	"prices: {A100: 2.50, T4: 0.35, \"H100 80GB\": 12}\n"
	"overcommit: {\"*\": 1.0, T4: 1.5, all: 1.25}\n",
	"sample_ms: 100\nutil_window: 2678400\ngrow_samples: 64\nshim: /lib/libgpushare.so\n"
	"admin_token_file: /etc/gpupool/token\nrun_dir: /run/gpupool\nlog_dir: /var/log\n",
	"tcp: 65536\n", "db: [a, b]\n", "db: &a x\nsocket: *a\n", "db: \"a\\0b\"\n",
	"prices:\n  - A100\n", "with_agent: maybe\n", "db: x\ndb: y\n", "---\na: 1\n---\nb: 2\n",
	"overcommit:\n  T4: 1.6\n", "prices:\n  \"a=b\": 1\n", "prices: {A100: 1e10}\n",
	"db: !!binary aGVsbG8=\n", "? [complex]\n: key\n", "db: |\n  literal\n  block\n",
};

static const char *const config_tokens[] = {
	"db", "socket", "tcp", "prices", "overcommit", "queue_max", "with_agent", "grace_ms",
	"tenant_queue_max", "header_timeout_ms", "max_connections", "metrics_token_file",
	": ", "\n  ", "\n", "- ", "---\n", "...\n", "&a ", "*a", "!!str ", "!!map ", "!!seq ",
	"? ", "\"*\"", "\"\\0\"", "\"\\x00\"", "\"\\u0000\"", "~", "null", "yes", "off",
	"TRUE", "|\n  ", ">\n  ", "%YAML 1.1\n", "%TAG ! tag:x,2000:\n", "'", "\t", "\xef\xbb\xbf",
	"\xff\xfe", "A100: ", "T4: 1.5", "all: ",
};

struct config_ctx {
	char path[64];
};

static void write_input(const char *path, const struct input *in)
{
	FILE *fp = fopen(path, "we");

	assert_non_null(fp);
	assert_int_equal(fwrite(in->b, 1, in->len, fp), in->len);
	assert_int_equal(fclose(fp), 0);
}

static void check_options(const struct gp_server_options *o)
{
	const char *const paths[] = {o->db,	 o->socket,  o->token_file,
				     o->shim,	 o->run_dir, o->log_dir,
				     o->metrics_token_file};

	for (size_t i = 0; i < N(paths); i++)
		CHECK(memchr(paths[i], '\0', PATH_MAX) != NULL);
	CHECK(o->tcp_port <= 65535);
	CHECK(o->queue_max <= GP_CONFIG_QUEUE_MAX_LIMIT);
	CHECK(o->tenant_queue_max <= GP_CONFIG_QUEUE_MAX_LIMIT);
	CHECK(o->header_timeout_ms == 0 || (o->header_timeout_ms >= GP_CONFIG_TIMEOUT_MS_MIN &&
					    o->header_timeout_ms <= GP_CONFIG_TIMEOUT_MS_LIMIT));
	CHECK(o->body_timeout_ms == 0 || (o->body_timeout_ms >= GP_CONFIG_TIMEOUT_MS_MIN &&
					  o->body_timeout_ms <= GP_CONFIG_TIMEOUT_MS_LIMIT));
	CHECK(o->max_connections <= GP_CONFIG_CONNECTIONS_LIMIT);
	CHECK(o->max_client_connections <= GP_CONFIG_CONNECTIONS_LIMIT);
	CHECK(o->grace_ms <= GP_CONFIG_GRACE_MS_LIMIT);
	CHECK(o->loop.sample_ms == 0 || (o->loop.sample_ms >= GP_CONFIG_SAMPLE_MS_MIN &&
					 o->loop.sample_ms <= GP_CONFIG_SAMPLE_MS_LIMIT));
	CHECK(o->loop.util_window_s <= GP_CONFIG_UTIL_WINDOW_LIMIT);
	CHECK(o->loop.grow_samples <= GP_METER_GROW_MAX);
	CHECK(o->prices >= 0 && o->prices <= GP_PRICES_MAX);
	for (int i = 0; i < o->prices; i++) {
		const struct gp_price *p = &o->price[i];

		CHECK(memchr(p->model, '\0', sizeof(p->model)) != NULL && p->model[0]);
		CHECK(!strchr(p->model, '='));
		CHECK(isfinite(p->per_hour) && p->per_hour >= 0 &&
		      p->per_hour <= GP_PRICE_LIMIT);
	}
	CHECK(o->loop.overcommits >= 0 && o->loop.overcommits <= GP_LOOP_OVERCOMMITS_MAX);
	for (int i = 0; i < o->loop.overcommits; i++) {
		const struct gp_overcommit *c = &o->loop.overcommit[i];

		CHECK(memchr(c->model, '\0', sizeof(c->model)) != NULL);
		CHECK(c->permille >= GP_CONFIG_RATIO_MIN_PERMILLE &&
		      c->permille <= GP_CONFIG_RATIO_MAX_PERMILLE);
	}
}

static bool check_config(struct fuzz *f, void *ctx)
{
	static struct input in;
	static struct gp_server_options o;
	struct config_ctx *c = ctx;
	char err[ERR_MAX];
	size_t err_len = err_prepare(f, err);
	int r;

	make_input(f, &in);
	f->in = &in;
	write_input(c->path, &in);
	memset(&o, 0, sizeof(o));
	r = gp_config_load(c->path, &o, err, err_len);
	CHECK(r <= 0);
	if (r == 0) {
		check_options(&o);
		return true;
	}
	CHECK(r == -EINVAL);
	check_err(err, err_len, true);
	/* "FILE:LINE:COLUMN: ...", as far as the buffer goes. */
	CHECK(strncmp(err, c->path, MIN(err_len - 1, strlen(c->path))) == 0);
	return false;
}

/* The whole of a small file, malloc'd; NULL when it cannot be read. */
static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "re");
	char *text = calloc(1, INPUT_MAX + 1);

	if (fp && text)
		(void)!fread(text, 1, INPUT_MAX, fp);
	if (fp)
		fclose(fp);
	if (!fp) {
		free(text);
		return NULL;
	}
	return text;
}

static void test_config_load(void **state)
{
	const char *corpus[N(config_snippets) + 1];
	struct fuzz f = {.parser = "gp_config_load", .corpus = corpus,
			 .n_corpus = N(corpus), .tokens = config_tokens,
			 .n_tokens = N(config_tokens)};
	struct config_ctx c;
	char dir[] = "/tmp/test-fuzz-XXXXXX";
	char *example;

	(void)state;
	/* The tests run from tests/ (meson's workdir). */
	example = read_text("../docs/gpupool.example.yaml");
	assert_non_null(example);
	corpus[0] = example;
	for (size_t i = 0; i < N(config_snippets); i++)
		corpus[i + 1] = config_snippets[i];
	assert_non_null(mkdtemp(dir));
	snprintf(c.path, sizeof(c.path), "%s/config.yaml", dir);
	fuzz_run(&f, 4000, check_config, &c);
	unlink(c.path);
	rmdir(dir);
	free(example);
}

/* ---- gp_shim_config_load ----------------------------------------------------------- */

/* The variables, each with good and nearly good values. */
struct shim_var {
	const char *name;
	const char *const *values;
	size_t n;
};

#define VALUES(...) (const char *const[]){__VA_ARGS__}, N(((const char *const[]){__VA_ARGS__}))

static const struct shim_var shim_vars[] = {
	{"GPUPOOL_MEM_LIMIT", VALUES("4G", "4096M", "4G,8G", "512K,1G,2G,3G", "16TiB", "1073741824",
				     "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "0", ",", "4G,,8G")},
	{"GPUPOOL_COMPUTE", VALUES("100", "1", "50", "0", "101")},
	{"GPUPOOL_PRIORITY", VALUES("0", "5", "9", "10")},
	{"GPUPOOL_ISOLATION", VALUES("hard", "shared", "soft")},
	{"GPUPOOL_SLICE_MS", VALUES("1", "50", "1000", "1001")},
	{"GPUPOOL_RUN_DIR", VALUES("/run/gpupool", "/tmp/gpupool-1000", ".", "")},
	{"GPUPOOL_TASK_ID", VALUES("test-shim", "pid-1-2", "a", "a b", "a/b")},
};

static const char *const shim_tokens[] = {",", "G", "M", "T", "K", "100", "hard", "shared", "/", "-"};

/* Sets every variable: unset, a value of its own, or (the one being
 * fuzzed) a mutated one. Returns the index of the fuzzed one. */
static size_t shim_env(struct fuzz *f, struct input *in)
{
	size_t fuzzed = below(f, N(shim_vars));

	for (size_t i = 0; i < N(shim_vars); i++) {
		const struct shim_var *v = &shim_vars[i];

		if (i == fuzzed) {
			f->corpus = v->values;
			f->n_corpus = v->n;
			f->detail = v->name;
			make_input(f, in);
			setenv(v->name, in->b, 1);
		} else if (below(f, 3) == 0) {
			unsetenv(v->name);
		} else {
			setenv(v->name, v->values[below(f, v->n)], 1);
		}
	}
	return fuzzed;
}

static void check_shim_config(const struct gp_shim_config *cfg)
{
	const char *mem = getenv("GPUPOOL_MEM_LIMIT"), *dir = getenv("GPUPOOL_RUN_DIR");
	const char *id = getenv("GPUPOOL_TASK_ID");
	struct gp_task_limits l;

	CHECK(cfg->mem_limited == (mem != NULL));
	CHECK(cfg->mem_limits >= (mem ? 1 : 0) && cfg->mem_limits <= GP_SHIM_DEVICES_MAX);
	for (int i = 0; i < cfg->mem_limits; i++)
		CHECK(cfg->mem_limit[i] > 0);
	CHECK(cfg->compute >= 1 && cfg->compute <= 100);
	CHECK(cfg->priority <= 9);
	CHECK(cfg->slice_ms >= 1 && cfg->slice_ms <= 1000);
	CHECK(cfg->isolation == GP_ISOLATION_HARD || cfg->isolation == GP_ISOLATION_SHARED);
	CHECK(memchr(cfg->run_dir, '\0', sizeof(cfg->run_dir)) != NULL);
	CHECK(strcmp(cfg->run_dir, dir ? dir : "") == 0);
	CHECK(memchr(cfg->task_id, '\0', sizeof(cfg->task_id)) != NULL && cfg->task_id[0]);
	CHECK(!strpbrk(cfg->task_id, " \t\n/"));
	CHECK(!id || strcmp(cfg->task_id, id) == 0);
	for (int dev = 0; dev < GP_SHIM_DEVICES_MAX + 4; dev++) {
		gp_shim_config_limits(cfg, dev, &l);
		CHECK(l.compute == cfg->compute && l.priority == cfg->priority);
		CHECK(mem ? l.mem_bytes > 0 : l.mem_bytes == 0);
	}
}

static bool check_shim(struct fuzz *f, void *ctx)
{
	static struct input in;
	static struct gp_shim_config cfg;
	char err[ERR_MAX];
	size_t err_len;
	int r;

	(void)ctx;
	shim_env(f, &in);
	f->in = &in;
	err_len = err_prepare(f, err);
	r = gp_shim_config_load(&cfg, err, err_len);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		check_shim_config(&cfg);
		return true;
	}
	check_err(err, err_len, true);
	CHECK(strncmp(err, "GPUPOOL_", MIN(err_len - 1, 8)) == 0);
	return false;
}

static void test_shim_config(void **state)
{
	struct fuzz f = {.parser = "gp_shim_config_load", .tokens = shim_tokens,
			 .n_tokens = N(shim_tokens)};

	(void)state;
	fuzz_run(&f, 6000, check_shim, NULL);
	for (size_t i = 0; i < N(shim_vars); i++)
		unsetenv(shim_vars[i].name);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),  cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_price_parse), cmocka_unit_test(test_fields_parse),
		cmocka_unit_test(test_env_array),   cmocka_unit_test(test_user_resolve),
		cmocka_unit_test(test_config_load), cmocka_unit_test(test_shim_config),
	};

#if defined(__SANITIZE_ADDRESS__)
	/* A sanitizer report ends the process: say which input did it. */
	__sanitizer_set_death_callback(report);
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
