/* slow-clients.c — the slow-connection attack of tests/security/
 * test-api-abuse.sh: N connections to the server (TCP 127.0.0.1:PORT, or
 * a Unix socket), each sending a request line and then one header line
 * every S seconds, never the blank line that ends the headers, so that
 * only a deadline that trickling bytes do not move can close them.
 *
 * usage: slow-clients (--port PORT | --unix PATH) [--connections N]
 *                     [--every SECONDS] [--duration SECONDS] [--uid UID]
 *                     [--reconnect] [--lives FILE] [--addresses N]
 *   --connections N   how many at once (default 300)
 *   --every SECONDS   between two header lines of a connection (default 5)
 *   --duration SECONDS  how long to go on (default 20), then close all
 *   --uid UID         as root: become UID (and its group) first, so that
 *                     the server sees another client on loopback
 *   --reconnect       open a new connection a second after the server
 *                     closed one, as an attacker would, to keep the
 *                     pressure on throughout
 *   --lives FILE      one line per connection the server closed: when it
 *                     opened (ms from the start), how long it lived (ms),
 *                     and 503 when it was answered so
 *   --addresses N     TCP: connection i comes from 127.0.0.2 + (i mod N)
 *                     (127.0.0.2 ... 127.0.0.65 for 64), as a task that
 *                     takes a loopback address per connection would
 *
 * At the end, one JSON object on stdout: connections opened, connects
 * that failed, closed by the server, of those answered 503, still open,
 * and the shortest and longest life of those the server closed (ms). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONNECTIONS_MAX 4096
#define RECONNECT_MS	1000 /* after the server closed one, before the next */
#define ADDRESSES_MAX	65000
#define FIRST_SOURCE	0x7f000002u /* 127.0.0.2 */

struct options {
	unsigned port;
	const char *unix_path;
	unsigned n;
	int64_t every_ms, duration_ms;
	long long uid; /* -1: stay */
	bool reconnect;
	const char *lives;
	unsigned addresses; /* 0: the kernel's choice (127.0.0.1) */
};

/* One slow connection. */
struct slow {
	unsigned index;	/* which of the connections */
	int fd;		/* -1: none now */
	int64_t opened; /* when it connected (ms) */
	int64_t next;	/* when to send its next header line, or to reconnect */
	unsigned lines; /* header lines sent */
	bool got_503;
};

struct totals {
	int64_t start; /* ms */
	unsigned opened, failed, closed, answered_503;
	int64_t life_min, life_max;
	FILE *lives;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: slow-clients (--port PORT | --unix PATH) [--connections N] "
		"[--every SECONDS] [--duration SECONDS] [--uid UID] [--reconnect] "
		"[--lives FILE] [--addresses N]\n");
	exit(2);
}

/* A number of seconds (decimals allowed) as ms; exits when it is not. */
static int64_t seconds_ms(const char *flag, const char *text)
{
	char *end;
	double v = strtod(text, &end);

	if (end == text || *end || !(v > 0 && v < 86400)) {
		fprintf(stderr, "slow-clients: --%s \"%s\" must be seconds, above 0\n",
			flag, text);
		exit(2);
	}
	return (int64_t)(v * 1000);
}

static long long whole(const char *flag, const char *text, long long lo, long long hi)
{
	char *end;
	long long v = strtoll(text, &end, 10);

	if (end == text || *end || v < lo || v > hi) {
		fprintf(stderr,
			"slow-clients: --%s \"%s\" must be a whole number from %lld "
			"to %lld\n",
			flag, text, lo, hi);
		exit(2);
	}
	return v;
}

static void parse(int argc, char **argv, struct options *o)
{
	static const struct option flags[] = {
		{"port", required_argument, NULL, 'p'},
		{"unix", required_argument, NULL, 'u'},
		{"connections", required_argument, NULL, 'n'},
		{"every", required_argument, NULL, 'e'},
		{"duration", required_argument, NULL, 'd'},
		{"uid", required_argument, NULL, 'U'},
		{"reconnect", no_argument, NULL, 'r'},
		{"lives", required_argument, NULL, 'l'},
		{"addresses", required_argument, NULL, 'a'},
		{0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", flags, NULL)) != -1) {
		switch (c) {
		case 'p': o->port = (unsigned)whole("port", optarg, 1, 65535); break;
		case 'u': o->unix_path = optarg; break;
		case 'n':
			o->n = (unsigned)whole("connections", optarg, 1, CONNECTIONS_MAX);
			break;
		case 'e': o->every_ms = seconds_ms("every", optarg); break;
		case 'd': o->duration_ms = seconds_ms("duration", optarg); break;
		case 'U': o->uid = whole("uid", optarg, 0, 4294967294LL); break;
		case 'r': o->reconnect = true; break;
		case 'l': o->lives = optarg; break;
		case 'a':
			o->addresses = (unsigned)whole("addresses", optarg, 1, ADDRESSES_MAX);
			break;
		default: usage();
		}
	}
	if (optind < argc || (!o->port) == (!o->unix_path) || (o->addresses && o->unix_path))
		usage();
}

/* As root, becomes uid (its group from the password file, else the same
 * number), with no supplementary groups. */
static void become(long long uid)
{
	const struct passwd *pw = getpwuid((uid_t)uid);
	gid_t gid = pw ? pw->pw_gid : (gid_t)uid;

	if (geteuid() != 0) {
		fprintf(stderr, "slow-clients: --uid needs root\n");
		exit(2);
	}
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid((uid_t)uid) < 0) {
		fprintf(stderr, "slow-clients: cannot become uid %lld: %s\n", uid,
			strerror(errno));
		exit(1);
	}
}

/* With --addresses, binds fd to connection i's loopback address. */
static int source_bind(const struct options *o, int fd, unsigned i)
{
	struct sockaddr_in from = {.sin_family = AF_INET};

	if (!o->addresses)
		return 0;
	from.sin_addr.s_addr = htonl(FIRST_SOURCE + i % o->addresses);
	return bind(fd, (struct sockaddr *)&from, sizeof(from));
}

/* Connection i with its request line sent; -1 when it could not be
 * made. One the server closed before the line was sent is kept: the
 * next read sees the end, and it counts as closed by the server. */
static int slow_open(const struct options *o, unsigned i)
{
	static const char line[] = "GET /v1/health HTTP/1.1\r\nHost: gpupool\r\n";
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)o->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fd = socket(o->unix_path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	if (fd < 0)
		return -1;
	if (o->unix_path) {
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", o->unix_path);
		r = connect(fd, (struct sockaddr *)&un, sizeof(un));
	} else {
		r = source_bind(o, fd, i);
		if (r == 0)
			r = connect(fd, (struct sockaddr *)&in, sizeof(in));
	}
	if (r < 0) {
		close(fd);
		return -1;
	}
	send(fd, line, sizeof(line) - 1, MSG_NOSIGNAL);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void slow_start(const struct options *o, struct slow *s, struct totals *t,
		       int64_t now)
{
	s->fd = slow_open(o, s->index);
	s->opened = now;
	s->next = now + o->every_ms;
	s->lines = 0;
	s->got_503 = false;
	if (s->fd < 0) {
		t->failed++;
		s->next = now + RECONNECT_MS;
	} else {
		t->opened++;
	}
}

/* The server closed s (or answered it, then closed it): counted. */
static void slow_lost(const struct options *o, struct slow *s, struct totals *t,
		      int64_t now)
{
	int64_t life = now - s->opened;

	close(s->fd);
	s->fd = -1;
	t->closed++;
	t->answered_503 += s->got_503;
	if (t->closed == 1 || life < t->life_min)
		t->life_min = life;
	if (life > t->life_max)
		t->life_max = life;
	if (t->lives)
		fprintf(t->lives, "%lld %lld%s\n", (long long)(s->opened - t->start),
			(long long)life, s->got_503 ? " 503" : "");
	s->next = o->reconnect ? now + RECONNECT_MS : INT64_MAX;
}

/* What the server sent s: a reply (its status noted), or the end. */
static void slow_read(const struct options *o, struct slow *s, struct totals *t,
		      int64_t now)
{
	char buf[4096];
	ssize_t n = recv(s->fd, buf, sizeof(buf) - 1, 0);

	if (n > 0) {
		buf[n] = '\0';
		if (strstr(buf, "HTTP/1.1 503") || strstr(buf, "HTTP/1.0 503"))
			s->got_503 = true;
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	slow_lost(o, s, t, now);
}

/* One header line more, when its time has come. */
static void slow_tick(const struct options *o, struct slow *s, struct totals *t,
		      int64_t now)
{
	char line[64];
	int len;

	if (now < s->next)
		return;
	if (s->fd < 0) {
		if (s->next != INT64_MAX)
			slow_start(o, s, t, now);
		return;
	}
	len = snprintf(line, sizeof(line), "X-Slow-%u: %u\r\n", s->lines, s->lines);
	s->lines++;
	s->next = now + o->every_ms;
	if (send(s->fd, line, (size_t)len, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
		slow_lost(o, s, t, now);
}

static void run(const struct options *o, struct slow *all, struct totals *t)
{
	struct pollfd *p = calloc(o->n, sizeof(*p));
	int64_t end = now_ms() + o->duration_ms;

	if (!p)
		exit(1);
	t->start = now_ms();
	for (unsigned i = 0; i < o->n; i++) {
		all[i].index = i;
		slow_start(o, &all[i], t, now_ms());
	}
	for (int64_t now = now_ms(); now < end; now = now_ms()) {
		for (unsigned i = 0; i < o->n; i++) {
			p[i].fd = all[i].fd;
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		poll(p, o->n, 50);
		now = now_ms();
		for (unsigned i = 0; i < o->n; i++) {
			if (all[i].fd >= 0 && p[i].revents)
				slow_read(o, &all[i], t, now);
			slow_tick(o, &all[i], t, now);
		}
	}
	free(p);
}

int main(int argc, char **argv)
{
	struct options o = {.n = 300, .every_ms = 5000, .duration_ms = 20000, .uid = -1};
	struct totals t = {0};
	struct slow *all;
	unsigned still = 0;

	parse(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (o.lives && !(t.lives = fopen(o.lives, "we"))) {
		fprintf(stderr, "slow-clients: cannot write %s: %s\n", o.lives,
			strerror(errno));
		return 1;
	}
	if (o.uid >= 0)
		become(o.uid);
	all = calloc(o.n, sizeof(*all));
	if (!all)
		return 1;
	run(&o, all, &t);
	for (unsigned i = 0; i < o.n; i++)
		if (all[i].fd >= 0) {
			still++;
			close(all[i].fd);
		}
	if (t.lives)
		fclose(t.lives);
	printf("{\"opened\": %u, \"failed\": %u, \"closed_by_server\": %u, "
	       "\"answered_503\": %u, \"open_at_end\": %u, \"life_min_ms\": %lld, "
	       "\"life_max_ms\": %lld}\n",
	       t.opened, t.failed, t.closed, t.answered_503, still, (long long)t.life_min,
	       (long long)t.life_max);
	free(all);
	return 0;
}
