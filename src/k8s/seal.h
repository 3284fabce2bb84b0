/* seal.h — placements only the server can write. A pod's owner may edit
 * its annotations (RBAC cannot stop a user from writing them), so the
 * placement annotation alone would let a pod name its own devices and
 * limits (a whole card, 100 %). The server seals each placement it makes:
 * an HMAC-SHA256, keyed with a secret only the server and the node
 * programs read (the Secret gpupool-placement-key in the manifests), over
 * the pod's UID and the placement annotation's exact text (which names the
 * node, devices, memory, compute, priority and isolation). The node
 * program applies a placement only when its seal verifies, for a pod of
 * that UID, on the node it names; the extender counts only sealed ones.
 *
 * The annotation GP_KUBE_ANN_SEAL is "v1:" and the HMAC in lowercase hex.
 * A sealed placement copied onto another pod fails (another UID); one
 * edited fails (another text); an older one of the same pod (a replay
 * after a live change shrank it) verifies, so the placement carries when
 * it was sealed and the node program never goes back to an older one.
 *
 * The key: a file of at least GP_SEAL_KEY_MIN bytes (a trailing newline
 * is not part of it), e.g. `head -c 48 /dev/urandom | base64 -w0`.
 * No allocation; keys are plain values, wiped by gp_seal_key_wipe. */
#ifndef GP_K8S_SEAL_H
#define GP_K8S_SEAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Where the manifests mount the Secret gpupool-placement-key. */
#define GP_SEAL_KEY_PATH_DEFAULT "/etc/gpupool/placement-key/key"
#define GP_SEAL_KEY_MIN 32
#define GP_SEAL_KEY_MAX 256
#define GP_SEAL_TEXT_MAX 68     /* "v1:" + 64 hex digits + NUL */

struct gp_seal_key {
	unsigned char bytes[GP_SEAL_KEY_MAX];
	size_t len;
};

/* Reads the key file at path. -EINVAL (too short, too long) or -errno,
 * with the reason in err naming the file and what to do. */
int gp_seal_key_load(const char *path, struct gp_seal_key *ret, char *err, size_t err_len);
void gp_seal_key_wipe(struct gp_seal_key *k);

/* The seal of placement text `placement` for the pod of UID `uid`. */
void gp_seal_make(const struct gp_seal_key *k, const char *uid, const char *placement,
		  char ret[GP_SEAL_TEXT_MAX]);

/* Does `seal` seal `placement` for the pod of UID `uid`? (constant time) */
bool gp_seal_verifies(const struct gp_seal_key *k, const char *uid, const char *placement,
		      const char *seal);

/* What a pod's placement is worth, read from the pod object itself. */
enum gp_seal_state {
	GP_SEAL_NONE,           /* no placement */
	GP_SEAL_VALID,
	GP_SEAL_MISSING,        /* a placement without a seal */
	GP_SEAL_FORGED,         /* a seal that does not verify */
};
enum gp_seal_state gp_seal_of_pod(const struct gp_seal_key *k, const json_t *pod);

/* Why a placement in that state is not applied, for an Event ("" for
 * NONE and VALID). */
const char *gp_seal_state_text(enum gp_seal_state s);

#endif
