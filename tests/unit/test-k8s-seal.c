/* test-k8s-seal.c — sealed placements (src/k8s/seal.c): the key file and
 * its errors, a seal that verifies only for its pod's UID and its exact
 * placement text, the HMAC as any HMAC-SHA256 would compute it, and what
 * a pod object's placement is worth (none, valid, missing, forged). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "k8s/names.h"
#include "k8s/seal.h"

#define KEY_TEXT "0123456789abcdef0123456789abcdef-key"

static char key_path[] = "/tmp/test-k8s-seal-XXXXXX";

static void key_write(const char *text)
{
	FILE *f = fopen(key_path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void key_of(const char *text, struct gp_seal_key *ret)
{
	char err[512];

	key_write(text);
	assert_int_equal(gp_seal_key_load(key_path, ret, err, sizeof(err)), 0);
}

static void key_files_are_checked(void **state)
{
	struct gp_seal_key k;
	char err[512], big[GP_SEAL_KEY_MAX + 8];

	(void)state;
	key_of(KEY_TEXT "\n", &k);
	assert_int_equal(k.len, strlen(KEY_TEXT));     /* the newline is not the key's */
	key_write("short\n");
	assert_int_equal(gp_seal_key_load(key_path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too short"));
	assert_non_null(strstr(err, "/dev/urandom"));
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	key_write(big);
	assert_int_equal(gp_seal_key_load(key_path, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
	assert_int_equal(gp_seal_key_load("/nonexistent/key", &k, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/key"));
	assert_non_null(strstr(err, "gpupool-placement-key"));
}

static void a_seal_binds_uid_and_text(void **state)
{
	static const char text[] = "{\"node\":\"n1\",\"devices\":[\"GPU-1\"],\"compute\":30}";
	struct gp_seal_key k, other;
	char seal[GP_SEAL_TEXT_MAX];

	(void)state;
	key_of(KEY_TEXT, &k);
	key_of(KEY_TEXT "2", &other);
	gp_seal_make(&k, "uid-1", text, seal);
	assert_int_equal(strlen(seal), GP_SEAL_TEXT_MAX - 1);
	assert_memory_equal(seal, "v1:", 3);
	assert_true(gp_seal_verifies(&k, "uid-1", text, seal));
	assert_false(gp_seal_verifies(&k, "uid-2", text, seal));       /* another pod */
	assert_false(gp_seal_verifies(&other, "uid-1", text, seal));   /* another key */
	assert_false(gp_seal_verifies(&k, "uid-1",
				      "{\"node\":\"n1\",\"devices\":[\"GPU-1\"],\"compute\":100}", seal));
	/* the UID and the text cannot trade characters */
	assert_false(gp_seal_verifies(&k, "uid-1\n{", text + 1, seal));
	seal[10] = seal[10] == '0' ? '1' : '0';
	assert_false(gp_seal_verifies(&k, "uid-1", text, seal));
	assert_false(gp_seal_verifies(&k, "uid-1", text, "v1:00"));
	assert_false(gp_seal_verifies(&k, "uid-1", text, NULL));
}

/* The seal is HMAC-SHA256 over the documented message: computed here
 * with openssl, as an operator (or a test of another language) would. */
static void a_seal_is_plain_hmac_sha256(void **state)
{
	static const char text[] = "{\"node\":\"n1\"}";
	struct gp_seal_key k;
	char seal[GP_SEAL_TEXT_MAX], cmd[1024], out[128] = "";
	FILE *p;

	(void)state;
	if (system("command -v openssl >/dev/null 2>&1") != 0)
		skip();
	key_of(KEY_TEXT, &k);
	gp_seal_make(&k, "uid-9", text, seal);
	snprintf(cmd, sizeof(cmd), "printf 'gpupool placement seal 1\\nuid-9\\n%%s\\n' '%s' | "
		 "openssl dgst -sha256 -hmac '%s' -r", text, KEY_TEXT);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	assert_memory_equal(out, seal + 3, 64);
}

static json_t *pod_with(const char *uid, const char *placement, const char *seal)
{
	json_t *ann = json_object();

	if (placement)
		json_object_set_new(ann, GP_KUBE_ANN_PLACEMENT, json_string(placement));
	if (seal)
		json_object_set_new(ann, GP_KUBE_ANN_SEAL, json_string(seal));
	return json_pack("{s:{s:s, s:o}}", "metadata", "uid", uid, "annotations", ann);
}

static void a_pods_placement_is_judged(void **state)
{
	static const char text[] = "{\"node\":\"n1\",\"devices\":[\"GPU-1\"],\"whole\":true}";
	struct gp_seal_key k;
	char seal[GP_SEAL_TEXT_MAX];
	json_t *pod;

	(void)state;
	key_of(KEY_TEXT, &k);
	gp_seal_make(&k, "uid-1", text, seal);
	pod = pod_with("uid-1", NULL, NULL);
	assert_int_equal(gp_seal_of_pod(&k, pod), GP_SEAL_NONE);
	json_decref(pod);
	pod = pod_with("uid-1", text, seal);
	assert_int_equal(gp_seal_of_pod(&k, pod), GP_SEAL_VALID);
	json_decref(pod);
	pod = pod_with("uid-1", text, NULL);
	assert_int_equal(gp_seal_of_pod(&k, pod), GP_SEAL_MISSING);
	json_decref(pod);
	pod = pod_with("uid-2", text, seal);           /* copied onto another pod */
	assert_int_equal(gp_seal_of_pod(&k, pod), GP_SEAL_FORGED);
	json_decref(pod);
	assert_non_null(strstr(gp_seal_state_text(GP_SEAL_FORGED), "not written by the gpupool"));
	assert_non_null(strstr(gp_seal_state_text(GP_SEAL_MISSING), "no seal"));
	assert_null(strchr(gp_seal_state_text(GP_SEAL_FORGED), '%'));
	assert_string_equal(gp_seal_state_text(GP_SEAL_VALID), "");
}

static int key_file_make(void **state)
{
	int fd = mkstemp(key_path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int key_file_remove(void **state)
{
	(void)state;
	unlink(key_path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_files_are_checked),
		cmocka_unit_test(a_seal_binds_uid_and_text),
		cmocka_unit_test(a_seal_is_plain_hmac_sha256),
		cmocka_unit_test(a_pods_placement_is_judged),
	};

	return cmocka_run_group_tests(tests, key_file_make, key_file_remove);
}
