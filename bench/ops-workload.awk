# ops-workload.awk — the generated day of bench/bench-operations.sh: an
# inference + training workload (docs/operations.md, "The benchmark").
# usage: awk -v seed=N [-v jobs=N] -f ops-workload.awk
#
# Prints, deterministically for the seed:
#   rate SERVICE HOUR QPS   each service's mean request rate in each hour
#                           (0-23): a night floor of 15 % of its peak, then
#                           a rise and fall over the working day (a sine
#                           from 07:00 to 21:00 for chat, 09:00 to 19:00
#                           for embed), each hour +-10 % at random. Peaks:
#                           chat 300/s (2 ms requests: 0.6 of a card),
#                           embed 400/s (1 ms: 0.4 of a card).
#   job AT_HOUR HOURS MIB   a training job arriving at AT_HOUR (fractional),
#                           running HOURS (1 to 3) and holding MIB of device
#                           memory (6144 to 10240); `jobs` of them (default
#                           80; the benchmark asks 100), 75 % arriving in 08:00-18:00, the rest at
#                           any hour before 22:00; in order of arrival.
BEGIN {
	srand(seed ? seed : 1)
	if (!jobs)
		jobs = 80
	pi = atan2(0, -1)
	service("chat", 300, 7, 21)
	service("embed", 400, 9, 19)
	for (i = 0; i < jobs; i++) {
		at[i] = rand() < 0.75 ? 8 + 10 * rand() : 22 * rand()
		len[i] = 1 + 2 * rand()
		mib[i] = 6144 + int(4097 * rand())
	}
	n = jobs
	for (i = 1; i < n; i++)        # insertion sort by arrival
		for (j = i; j > 0 && at[j - 1] > at[j]; j--) {
			t = at[j]; at[j] = at[j - 1]; at[j - 1] = t
			t = len[j]; len[j] = len[j - 1]; len[j - 1] = t
			t = mib[j]; mib[j] = mib[j - 1]; mib[j - 1] = t
		}
	for (i = 0; i < n; i++)
		printf "job %.3f %.3f %d\n", at[i], len[i], mib[i]
}

# The hourly rates of one service: floor, then a sine over [from, to).
function service(name, peak, from, to,    h, f) {
	for (h = 0; h < 24; h++) {
		f = 0.15
		if (h >= from && h < to)
			f = 0.15 + 0.85 * sin(pi * (h + 0.5 - from) / (to - from))
		printf "rate %s %d %.1f\n", name, h, peak * f * (0.9 + 0.2 * rand())
	}
}
