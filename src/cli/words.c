/* words.c — the server's errors in the CLI's words (words.h): the one
 * table from the API's field names and requests to the flags and
 * commands a user typed, and the replacement of whole words. */
#include "cli/words.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* For the commands named in cmds ("a|b": the command a, or any of the
 * group b's, as "b ls"; NULL: every command), the API's words and the
 * CLI's. The first row that fits a place in the text wins. */
static const struct {
	const char *cmds, *api, *cli;
} words[] = {
	/* gpupool submit (run, task submit), and what service create shares */
	{"submit|run", "field \"name\"", "--name"},
	{"submit|run|service", "field \"command\"", "the command"},
	{"task set", "field \"reason\"", "--reason"},
	{NULL, "field \"template\"", "--template"},
	{NULL, "field \"mem_mib\"", "--mem"},
	{NULL, "field \"compute_pct\"", "--compute"},
	{NULL, "field \"devices\"", "--devices"},
	{NULL, "field \"whole\"", "--whole"},
	{NULL, "\"whole\": true", "--whole"},
	{NULL, "field \"exclusive\"", "--exclusive"},
	{NULL, "field \"mixed_models\"", "--mixed-models"},
	{NULL, "field \"isolation\"", "--isolation"},
	{NULL, "field \"priority\"", "--priority"},
	{NULL, "field \"kind\"", "--kind"},
	{NULL, "field \"model\"", "--model"},
	{NULL, "field \"runtime\"", "--runtime"},
	{"submit|run", "field \"await_cards\"", "--await-cards"},
	{"submit|run", "(await_cards)", "(--await-cards)"},
	{NULL, "field \"models\"", "--models"},
	{NULL, "field \"workdir\"", "--workdir"},
	{NULL, "field \"env\"", "--env"},
	{NULL, "field \"on_memory_growth\"", "--on-memory-growth"},
	{NULL, "field \"mem_pct\"", "--mem"},
	{NULL, "field \"time_limit_s\"", "--time"},
	{"submit|run", "field \"after\"", "--after"},
	{"submit|run", "field \"array\"", "--array"},
	/* gpupool tenant, template, service: the name is their argument */
	{"tenant", "field \"name\"", "the tenant's name"},
	{"template", "field \"name\"", "the template's name"},
	{"service", "field \"name\"", "the service's name"},
	{"schedule", "field \"name\"", "the rule's name"},
	{"tenant", "field \"user\"", "--user"},
	{"tenant", "field \"mem_guaranteed_mib\"", "--mem-guaranteed"},
	{"tenant", "field \"mem_borrowable_mib\"", "--mem-borrowable"},
	{"tenant", "field \"compute_guaranteed_pct\"", "--compute-guaranteed"},
	{"tenant", "field \"compute_borrowable_pct\"", "--compute-borrowable"},
	{"tenant", "field \"priority_max\"", "--priority-max"},
	{"tenant", "\"mem_guaranteed_mib\"", "--mem-guaranteed"},
	{"tenant", "\"mem_borrowable_mib\"", "--mem-borrowable"},
	{"tenant", "\"compute_guaranteed_pct\"", "--compute-guaranteed"},
	{"tenant", "\"compute_borrowable_pct\"", "--compute-borrowable"},
	{"tenant", "field \"unlimited\": true", "--unlimited"},
	{"tenant", "\"unlimited\": true", "--unlimited"},
	{"service", "field \"deployment\"", "--deployment"},
	{"service", "field \"replicas\"", "--replicas"},
	{"service", "field \"min_replicas\"", "--min"},
	{"service", "field \"max_replicas\"", "--max"},
	{"service", "min_replicas", "--min"},
	{"service", "max_replicas", "--max"},
	{"service", "field \"autoscale\"", "--no-autoscale"},
	{"service", "field \"out_pct\"", "--out"},
	{"service", "field \"in_pct\"", "--in"},
	{"service", "field \"margin_pct\"", "--margin"},
	{"service", "field \"out_window_s\"", "--out-window"},
	{"service", "field \"in_window_s\"", "--in-window"},
	{"service", "field \"cooldown_s\"", "--cooldown"},
	{"service", "field \"step_pct\"", "--step"},
	{"service", "field \"share_max_pct\"", "--share-max"},
	{"schedule", "field \"at\"", "--at"},
	{"schedule", "field \"tenant\"", "--tenant"},
	{"schedule", "field \"task\"", "--task"},
	{"schedule", "field \"field\"", "--set"},
	{"schedule", "field \"value\"", "--set"},
	/* the requests that list what a message points to */
	{NULL, "GET /v1/templates", "`gpupool template ls`"},
	{NULL, "GET /v1/tenants", "`gpupool tenant ls`"},
	{NULL, "GET /v1/tasks", "`gpupool task ls`"},
	{NULL, "GET /v1/queue", "`gpupool queue`"},
	{NULL, "GET /v1/nodes", "`gpupool node ls`"},
	{NULL, "GET /v1/devices", "`gpupool device ls`"},
	{NULL, "GET /v1/alerts", "`gpupool alerts`"},
	{NULL, "GET /v1/services", "`gpupool service ls`"},
	{NULL, "GET /v1/schedules", "`gpupool schedule ls`"},
};

/* Is cmd one of "a|b|..." (itself, or a subcommand of the group)? */
static bool cmd_in(const char *cmd, const char *cmds)
{
	size_t len = strlen(cmd);

	if (!cmds)
		return true;
	for (const char *p = cmds; *p; p += strcspn(p, "|"), p += *p == '|') {
		size_t n = strcspn(p, "|");

		if (!strncmp(cmd, p, n) && (len == n || cmd[n] == ' '))
			return true;
	}
	return false;
}

static bool is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '/' || c == '-';
}

/* The row whose API words start the text at at (a whole word there). */
static int row_at(const char *cmd, const char *text, const char *at)
{
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].api);

		if (strncmp(at, words[i].api, n) || !cmd_in(cmd, words[i].cmds))
			continue;
		if ((at > text && is_word_char(at[-1]) && is_word_char(at[0])) ||
		    (is_word_char(at[n - 1]) && is_word_char(at[n])))
			continue;
		return (int)i;
	}
	return -1;
}

const char *gp_words_cli(const char *cmd, const char *text, char *out, size_t size)
{
	size_t used = 0;

	if (!size)
		return out;
	for (const char *p = text; *p && used + 1 < size;) {
		int row = row_at(cmd, text, p);

		if (row < 0) {
			out[used++] = *p++;
			continue;
		}
		used += (size_t)snprintf(out + used, size - used, "%s", words[row].cli);
		if (used >= size)
			used = size - 1;
		p += strlen(words[row].api);
	}
	out[used] = '\0';
	return out;
}
