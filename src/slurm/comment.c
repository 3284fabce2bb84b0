/* comment.c — a job's AdminComment as entries kept apart (comment.h). */
#include "slurm/comment.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gp_slurm_figures_read(const char *text, struct gp_slurm_figure **ret, size_t *ret_n)
{
	int n = gp_slurm_figures_parse(text, NULL, 0);
	struct gp_slurm_figure *f = NULL;

	if (n > 0) {
		f = calloc((size_t)n, sizeof(*f));
		if (!f)
			return -ENOMEM;
		gp_slurm_figures_parse(text, f, n);
	}
	*ret = f;
	*ret_n = (size_t)n;
	return 0;
}

bool gp_slurm_figure_same_entry(const struct gp_slurm_figure *a,
				const struct gp_slurm_figure *b)
{
	return strcmp(a->step, b->step) == 0 && strcmp(a->node, b->node) == 0 &&
	       a->node_index == b->node_index;
}

static bool same_key(const struct gp_slurm_figure *a, const struct gp_slurm_figure *b)
{
	return gp_slurm_figure_same_entry(a, b) && strcmp(a->uuid, b->uuid) == 0;
}

size_t gp_slurm_figures_unique(struct gp_slurm_figure *f, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t k = 0; k < kept && !seen; k++)
			seen = same_key(&f[k], &f[i]);
		if (!seen)
			f[kept++] = f[i];
	}
	return kept;
}

/* The entry of the k figures at f (one entry) into out. */
static int entry_put(FILE *out, const struct gp_slurm_figure *f, unsigned k)
{
	char probe[1];
	size_t len = gp_slurm_figures_format(f, k, probe, sizeof(probe));
	char *text = malloc(len + 1);

	if (!text)
		return -ENOMEM;
	gp_slurm_figures_format(f, k, text, len + 1);
	fputs(text, out);
	free(text);
	return 0;
}

int gp_slurm_comment_format(const struct gp_slurm_figure *f, size_t n, char sep,
			    char **ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int r = out ? 0 : -ENOMEM;

	for (size_t i = 0, k; r == 0 && i < n; i += k) {
		for (k = 1; i + k < n && gp_slurm_figure_same_entry(&f[i], &f[i + k]);
		     k++)
			;
		if (i > 0)
			fputc(sep, out);
		r = entry_put(out, &f[i], (unsigned)k);
	}
	if (out && fclose(out) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	return 0;
}

/* Is f of an entry that one of mine replaces? */
static bool replaced(const struct gp_slurm_figure *f, const struct gp_slurm_figure *mine,
		     size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (gp_slurm_figure_same_entry(f, &mine[i]))
			return true;
	return false;
}

int gp_slurm_comment_merge(const char *text, const struct gp_slurm_figure *mine, size_t n,
			   char **ret)
{
	struct gp_slurm_figure *all = NULL, *more;
	size_t had = 0, kept = 0;
	int r = gp_slurm_figures_read(text, &all, &had);

	if (r < 0)
		return r;
	more = realloc(all, (had + n ? had + n : 1) * sizeof(*all));
	if (!more) {
		free(all);
		return -ENOMEM;
	}
	all = more;
	for (size_t i = 0; i < had; i++)
		if (!replaced(&all[i], mine, n))
			all[kept++] = all[i];
	if (n)
		memcpy(&all[kept], mine, n * sizeof(*mine));
	kept = gp_slurm_figures_unique(all, kept + n);
	r = gp_slurm_comment_format(all, kept, ' ', ret);
	free(all);
	return r;
}

bool gp_slurm_comment_holds(const char *text, const struct gp_slurm_figure *mine,
			    size_t n)
{
	struct gp_slurm_figure *all = NULL;
	size_t had = 0, found = 0;

	if (gp_slurm_figures_read(text, &all, &had) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < had; k++)
			if (same_key(&mine[i], &all[k])) {
				found++;
				break;
			}
	free(all);
	return found == n;
}

bool gp_slurm_comment_has_node(const char *text, const char *step, unsigned node_index)
{
	struct gp_slurm_figure *all = NULL;
	size_t had = 0;
	bool has = false;

	if (gp_slurm_figures_read(text, &all, &had) < 0)
		return false;
	for (size_t k = 0; k < had && !has; k++)
		has = all[k].node[0] && all[k].node_index == node_index &&
		      strcmp(all[k].step, step) == 0;
	free(all);
	return has;
}

/* The AdminComment line's value in show ("   AdminComment=… \n"), its
 * trailing blanks dropped; NULL where there is none. */
static const char *comment_at(const char *show, size_t *ret_len)
{
	for (const char *line = show; line && *line;) {
		const char *start = line + strspn(line, " \t");
		const char *end = strchr(line, '\n');
		size_t len;

		if (strncmp(start, "AdminComment=", 13) == 0) {
			start += 13;
			len = end ? (size_t)(end - start) : strlen(start);
			while (len && (start[len - 1] == ' ' || start[len - 1] == '\t' ||
				       start[len - 1] == '\r'))
				len--;
			*ret_len = len;
			return start;
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

int gp_slurm_job_parse(const char *show, char *state, size_t state_len,
		       char **ret_comment)
{
	const char *at = strstr(show, "JobState="), *comment;
	size_t len = 0, word;

	if (!at || state_len == 0)
		return -ENOENT;
	at += strlen("JobState=");
	word = strcspn(at, " \t\n");
	if (word >= state_len)
		word = state_len - 1;
	comment = comment_at(show, &len);
	*ret_comment = strndup(comment ? comment : "", len);
	if (!*ret_comment)
		return -ENOMEM;
	memcpy(state, at, word);
	state[word] = '\0';
	return 0;
}
