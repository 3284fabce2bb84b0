/* seal.c — placements only the server can write (seal.h): the key file,
 * HMAC-SHA256 from nettle over the pod's UID and the placement's text. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

#include "k8s/names.h"
#include "k8s/objects.h"
#include "k8s/seal.h"

#define SEAL_PREFIX "v1:"
/* What is sealed: this domain line, the UID and the placement's text,
 * each ended by a newline, so that no two (uid, text) pairs give the
 * same message (a UID has no newline; the text is the rest). */
#define SEAL_DOMAIN "gpupool placement seal 1\n"

int gp_seal_key_load(const char *path, struct gp_seal_key *ret, char *err, size_t err_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	memset(ret, 0, sizeof(*ret));
	if (fd < 0) {
		int e = errno;

		snprintf(err, err_len, "cannot read the placement key %s: %s (make it with `head -c "
			 "48 /dev/urandom | base64 -w0 > FILE`, or mount the Secret "
			 "gpupool-placement-key: docs/kubernetes.md)", path, strerror(e));
		return -e;
	}
	got = read(fd, ret->bytes, sizeof(ret->bytes));
	if (got == (ssize_t)sizeof(ret->bytes) && read(fd, &(char){ 0 }, 1) > 0)
		got = -2;               /* longer than any key */
	close(fd);
	while (got > 0 && (ret->bytes[got - 1] == '\n' || ret->bytes[got - 1] == '\r'))
		got--;
	if (got < GP_SEAL_KEY_MIN) {
		snprintf(err, err_len, "the placement key %s %s: it must be %d to %d bytes (make "
			 "it with `head -c 48 /dev/urandom | base64 -w0 > FILE`)", path,
			 got == -2 ? "is too long" : got < 0 ? "cannot be read" : "is too short",
			 GP_SEAL_KEY_MIN, GP_SEAL_KEY_MAX);
		gp_seal_key_wipe(ret);
		return -EINVAL;
	}
	ret->len = (size_t)got;
	return 0;
}

void gp_seal_key_wipe(struct gp_seal_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

static void digest(const struct gp_seal_key *k, const char *uid, const char *placement,
		   uint8_t ret[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, k->len, k->bytes);
	hmac_sha256_update(&ctx, strlen(SEAL_DOMAIN), (const uint8_t *)SEAL_DOMAIN);
	hmac_sha256_update(&ctx, strlen(uid), (const uint8_t *)uid);
	hmac_sha256_update(&ctx, 1, (const uint8_t *)"\n");
	hmac_sha256_update(&ctx, strlen(placement), (const uint8_t *)placement);
	hmac_sha256_update(&ctx, 1, (const uint8_t *)"\n");
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, ret);
	explicit_bzero(&ctx, sizeof(ctx));
}

void gp_seal_make(const struct gp_seal_key *k, const char *uid, const char *placement,
		  char ret[GP_SEAL_TEXT_MAX])
{
	uint8_t d[SHA256_DIGEST_SIZE];
	size_t used = strlen(SEAL_PREFIX);

	digest(k, uid, placement, d);
	memcpy(ret, SEAL_PREFIX, used);
	for (size_t i = 0; i < sizeof(d); i++)
		used += (size_t)snprintf(ret + used, GP_SEAL_TEXT_MAX - used, "%02x", d[i]);
}

bool gp_seal_verifies(const struct gp_seal_key *k, const char *uid, const char *placement,
		      const char *seal)
{
	char want[GP_SEAL_TEXT_MAX];

	if (!uid || !placement || !seal || strlen(seal) != GP_SEAL_TEXT_MAX - 1)
		return false;
	gp_seal_make(k, uid, placement, want);
	return memeql_sec(want, seal, GP_SEAL_TEXT_MAX - 1) != 0;
}

enum gp_seal_state gp_seal_of_pod(const struct gp_seal_key *k, const json_t *pod)
{
	const char *placement = gp_kube_annotation(pod, GP_KUBE_ANN_PLACEMENT);
	const char *seal = gp_kube_annotation(pod, GP_KUBE_ANN_SEAL);
	const char *uid = json_string_value(json_object_get(json_object_get(pod, "metadata"),
							    "uid"));

	if (!placement)
		return GP_SEAL_NONE;
	if (!seal)
		return GP_SEAL_MISSING;
	return gp_seal_verifies(k, uid, placement, seal) ? GP_SEAL_VALID : GP_SEAL_FORGED;
}

const char *gp_seal_state_text(enum gp_seal_state s)
{
	switch (s) {
	case GP_SEAL_MISSING:
		return "its " GP_KUBE_ANN_PLACEMENT " annotation has no seal (" GP_KUBE_ANN_SEAL
		       "): only the gpupool scheduler places pods; set schedulerName: "
		       "gpupool-scheduler and leave spec.nodeName and gpupool.io/placement unset";
	case GP_SEAL_FORGED:
		return "its " GP_KUBE_ANN_PLACEMENT " annotation was not written by the gpupool "
		       "server (its seal does not verify): a placement cannot be edited or copied "
		       "from another pod";
	default:
		return "";
	}
}
