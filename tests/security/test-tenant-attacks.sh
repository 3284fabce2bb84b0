#!/bin/sh
# test-tenant-attacks.sh — the adversarial suite: each attack a hostile
# tenant tried on the platform (issue 9), run as that tenant's task on
# simulated devices, and shown to fail or to be caught.
#   1. reading the admin token, the database, another tenant's log, the
#      server's environment: permission denied, nothing leaks;
#   2. widening its own limit through the environment: the server's limit
#      holds;
#   3. clearing LD_PRELOAD, and 4. loading a renamed copy of the driver,
#      each taking more than its slice: killed by the verifier within 1 s,
#      the task failed with the reason, an alert naming the task;
#   5. `gpupool region set` on another tenant's task: refused;
#   6. a setsid child holding memory after its task "succeeded": stopped
#      with the task, its memory back within 1 s, no zombie;
#   7. a device process that belongs to no task: killed, an alert.
# The rest of the suite: slow connections and a tenant filling the queue
# (test-api-abuse.sh), a 1 GB log (../server/test-logcap.sh).
# Needs root (tasks run as their tenants' users only under a root server)
# and, for 6, cgroup v2; skips with the reason where they are not there.
# usage: test-tenant-attacks.sh GPUPOOL HOG NVML-PROBE SIMDEV-DIR
set -u
gp=$1 hog=$2 probe=$3 simdev=$4
. "$(dirname "$0")/../lib.sh"
needs_root "the attacks need root (a server that is not root runs every task as itself)"
export GPUPOOL_SIM_DEVICES=t4-16g:2
. "$(dirname "$0")/../server/agent-lib.sh"
# Something of the server's own that no task may see.
export GP_TEST_SERVER_SECRET=server-private-7f3a
run=$tmp/run
work=$tmp/work
mkdir -p "$work"
chmod 1777 "$work"

# The limits every task is held to (9-11): small, to reach them quickly.
server_start --task-memory-max 256M --task-pids-max 128 --task-tmp-max 16M
admin=$(cat "$tmp/state/admin.token")
alice=$(as "$admin" tenant add alice --mem-guaranteed 16G --compute-guaranteed 200)
bob=$(as "$admin" tenant add bob --mem-guaranteed 16G --compute-guaranteed 200)
cgroups=no
grep -q "each in a cgroup" "$tmp/server.log" && cgroups=yes

# submit TOKEN ARGS...: the task's id (submitted from $work).
submit() {
	token=$1
	shift
	(cd "$work" && as "$token" submit -q "$@")
}


# ---- 1. the server's and the other tenant's data -----------------------------
bob_task=$(submit "$bob" --mem 1G --compute 10 -- sh -c 'echo bob-private-data; sleep 60')
wait_for "bob's task runs" 10 "$bob_task" '.state == "running"'
sleep 0.5
spy=$(submit "$alice" --mem 1G --compute 10 -- sh -c "
	id -u; cat '$tmp/state/admin.token'; echo token=\$?;
	cat '$tmp/state/gpupool.db' >/dev/null; echo db=\$?;
	cat '$tmp/state/logs/task-$bob_task.log'; echo log=\$?;
	env; cat /proc/$server/environ >/dev/null; echo proc=\$?")
wait_for "the spy's task ends" 15 "$spy" '.state == "succeeded"'
log "$spy" >"$tmp/spy.log"
alice_id=$(as "$alice" tenant ls -o json | jq -r '.tenants[0].id')
if grep -qx "$((1879048192 + alice_id))" "$tmp/spy.log"; then
	ok "a task runs as its tenant's own unprivileged user"
else
	bad "a task runs as its tenant's own unprivileged user" "$tmp/spy.log"
fi
if grep -q "token=1" "$tmp/spy.log" && grep -q "db=1" "$tmp/spy.log" &&
	grep -q "log=1" "$tmp/spy.log" && [ "$(grep -c 'Permission denied' "$tmp/spy.log")" -ge 3 ]; then
	ok "reading the admin token, the database and another tenant's log: permission denied"
else
	bad "reading the admin token, the database and another tenant's log: permission denied" "$tmp/spy.log"
fi
if grep -q "$admin" "$tmp/spy.log" || grep -q bob-private-data "$tmp/spy.log"; then
	bad "nothing of the token or the other tenant's log leaked" "$tmp/spy.log"
else
	ok "nothing of the token or the other tenant's log leaked"
fi
if grep -Eq "GP_TEST_SERVER_SECRET|GPUPOOL_TOKEN|GPUPOOL_DB|GPUPOOL_SOCKET" "$tmp/spy.log"; then
	bad "the task's environment holds nothing of the server's" "$tmp/spy.log"
elif grep -q '^GPUPOOL_TASK_SECRET=' "$tmp/spy.log" && grep -q '^CUDA_VISIBLE_DEVICES=GPU-' "$tmp/spy.log"; then
	ok "the task's environment holds nothing of the server's (its own id, secret and devices)"
else
	bad "the task's environment: its id, secret and devices" "$tmp/spy.log"
fi
if grep -q "proc=1" "$tmp/spy.log"; then
	ok "the server's /proc/PID/environ is out of reach"
else
	bad "the server's /proc/PID/environ is out of reach" "$tmp/spy.log"
fi

# ---- 2. a limit widened through the environment ------------------------------
wide=$(submit "$alice" --mem 1G --compute 10 -- \
	env GPUPOOL_MEM_LIMIT=8G GPUPOOL_COMPUTE=100 "$hog" libcuda.so.1 3072 5)
wait_for "the widened task ends" 15 "$wide" '.state == "failed" or .state == "succeeded"'
log "$wide" >"$tmp/wide.log"
if grep -q "refused at 1024 MiB" "$tmp/wide.log"; then
	ok "GPUPOOL_MEM_LIMIT=8G in a 1G task: the server's 1G holds"
else
	bad "GPUPOOL_MEM_LIMIT=8G in a 1G task: the server's 1G holds" "$tmp/wide.log"
fi

# ---- 3, 4. around the interposer: the verifier -------------------------------
# caught NAME ID PATTERN: task ID took more than its slice (its log says
# when), was killed within 1 s, failed with a reason matching PATTERN, and
# an alert names it.
caught() {
	what=$1 id=$2 pattern=$3
	for _ in $(seq 100); do
		log "$id" | grep -q "^held " && break
		sleep 0.05
	done
	line=$(log "$id" | grep "^held " | head -1)
	pid=$(echo "$line" | awk '{print $5}')
	held_at=$(echo "$line" | awk '{print $7}')
	if [ -z "$pid" ]; then
		log "$id" >"$tmp/caught.log"
		bad "$what: it never held its memory" "$tmp/caught.log"
		return
	fi
	while kill -0 "$pid" 2>/dev/null && [ $(($(now_ms) - held_at)) -lt 5000 ]; do
		sleep 0.01
	done
	took=$(($(now_ms) - held_at))
	if [ "$took" -le 1000 ]; then
		ok "$what: killed by the verifier ${took} ms after it held the memory"
	else
		echo "killed after $took ms" >"$tmp/why"
		bad "$what: killed within 1 s" "$tmp/why"
	fi
	wait_for "$what: the task failed with the verifier's reason" 5 "$id" \
		".state == \"failed\" and (.reason | test(\"stopped by the verifier\")) and (.reason | test(\"$pattern\"))"
	alert_within "$what: a critical alert names the task and the figures" 2 \
		"any(.kind == \"task.violation\" and .level == \"critical\" and .object == \"task $id\" and (.message | test(\"3072 MiB\")))"
}

bare=$(submit "$alice" --mem 1G --compute 10 -- env -u LD_PRELOAD "$hog" libcuda.so.1 3072)
caught "env -u LD_PRELOAD" "$bare" "without the interposer"
cp "$simdev/libcuda.so.1" "$work/libnotcuda.so"
chmod 755 "$work/libnotcuda.so"
renamed=$(submit "$alice" --mem 1G --compute 10 -- "$hog" "$work/libnotcuda.so" 3072)
caught "a renamed copy of the driver" "$renamed" "without the interposer"

# ---- 5. another tenant's limits ----------------------------------------------
burner=$(submit "$bob" --mem 1G --compute 50 -- sh -c "$hog libcuda.so.1 64 60")
wait_for "bob's burner runs" 10 "$burner" '.state == "running"'
uuid=$(as "$admin" task show "$burner" -o json | jq -r .placement)
for _ in $(seq 50); do
	"$gp" region ls --dir "$run" --json 2>/dev/null | grep -q "task-$burner" && break
	sleep 0.1
done
meddler=$(submit "$alice" --mem 1G --compute 10 -- sh -c \
	"'$gp' region set '$uuid' task-$burner --compute 1 --dir '$run'; echo status=\$?")
wait_for "the meddling task ends" 15 "$meddler" '.state == "succeeded"'
log "$meddler" >"$tmp/meddle.log"
if grep -q "status=1" "$tmp/meddle.log" && grep -q "gpupool task set" "$tmp/meddle.log"; then
	ok "gpupool region set on another tenant's task: refused, with what to do"
else
	bad "gpupool region set on another tenant's task: refused" "$tmp/meddle.log"
fi
"$gp" region ls --dir "$run" --json >"$tmp/region.json" 2>&1
check "... and bob's task keeps its 50 %" \
	".[0] | [.. | objects | select(.id? == \"task-$burner\")] | .[0].compute == 50" "$tmp/region.json"

# ---- 6. a child that leaves its task --------------------------------------------
mem_used() {
	"$probe" | jq "[.devices[].mem_used_mib] | add"
}
if [ "$cgroups" = yes ]; then
	escaper=$(submit "$alice" --mem 2G --compute 10 -- sh -c \
		"setsid '$hog' libcuda.so.1 1536 & sleep 1; exit 0")
	wait_for "the escaper's task 'succeeds'" 15 "$escaper" '.state == "succeeded"'
	ended=$(now_ms)
	pid=$(log "$escaper" | awk '/^held /{print $5}')
	while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $(($(now_ms) - ended)) -lt 3000 ]; do
		sleep 0.01
	done
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
		ok "a setsid child is stopped with its task ($(($(now_ms) - ended)) ms after its end was seen)"
	else
		bad "a setsid child is stopped with its task (pid '$pid')" "$tmp/server.log"
	fi
	for _ in $(seq 20); do
		[ "$(mem_used)" -lt 1536 ] && break
		sleep 0.05
	done
	if [ "$(mem_used)" -lt 1536 ]; then
		ok "... its device memory is back within 1 s"
	else
		"$probe" >"$tmp/probe.json"
		bad "... its device memory is back within 1 s" "$tmp/probe.json"
	fi
	zombies=$(ps -o stat= --ppid "$server" | grep -c Z)
	if [ "$zombies" = 0 ]; then ok "... and no zombie is left"; else bad "... $zombies zombie(s) left" "$tmp/server.log"; fi
else
	echo "skipped: a setsid child (no cgroup v2 here: $(grep -o 'no cgroup[^;]*' "$tmp/server.log"))"
fi

# ---- 7. a process of no task -----------------------------------------------------
"$hog" libcuda.so.1 512 >"$tmp/stranger.log" 2>&1 &
stranger=$!
for _ in $(seq 30); do
	kill -0 "$stranger" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$stranger" 2>/dev/null; then
	kill -9 "$stranger"
	bad "a device process of no task is killed" "$tmp/stranger.log"
else
	ok "a device process of no task is killed"
fi
alert_within "... with an alert that names it" 2 \
	"any(.kind == \"task.violation\" and (.message | test(\"process $stranger holds 512 MiB .* belongs to no task\")))"

# ---- 8. two servers on one machine ------------------------------------------------
# A second server giving tenants of the same id the same uids: its tenant's
# task could kill this server's alice's (the issue saw it done). It is
# refused its range, told whose it is; with auto it gets a range of its own.
two=$tmp/two
mkdir -p "$two"
# second ARGS...: a server with its own database, socket, run directory
# and simulated devices (its verifier would kill this one's tasks on the
# same ones), on this machine; run with &, $! is the server's pid.
second() {
	GPUPOOL_SIM_DIR="$two/sim" exec "$gp" server --db "$two/state/gpupool.db" \
		--socket "$two/server.sock" --with-agent --run-dir "$two/run" "$@"
}
second >"$two/refused.log" 2>&1 &
refused=$!
for _ in $(seq 150); do
	kill -0 "$refused" 2>/dev/null && ! grep -q "serving on" "$two/refused.log" || break
	sleep 0.1
done
if kill -0 "$refused" 2>/dev/null; then
	kill "$refused"
	wait "$refused"
	bad "a second server with the same uid range is refused" "$two/refused.log"
elif wait "$refused"; then
	bad "a second server with the same uid range is refused (it exited 0)" "$two/refused.log"
elif grep -q "overlap the range at 1879048192, which a running server holds (pid $server, the server of $tmp/state/gpupool.db); the range at 1895825408 is free" "$two/refused.log" &&
	grep -q "give this one another --task-uid-base (or auto)" "$two/refused.log"; then
	ok "a second server with the same uid range is refused, told whose it is and which is free"
else
	bad "a second server with the same uid range is refused, with the reason" "$two/refused.log"
fi

victim=$(submit "$alice" --mem 1G --compute 10 -- sh -c "echo \$\$ >'$work/victim.pid'; sleep 60")
wait_for "alice's task runs" 10 "$victim" '.state == "running"'
for _ in $(seq 50); do [ -s "$work/victim.pid" ] && break; sleep 0.1; done
second --task-uid-base auto >"$two/server.log" 2>&1 &
second_pid=$!
for _ in $(seq 100); do
	GPUPOOL_SOCKET="$two/server.sock" GPUPOOL_TOKEN_FILE="$two/state/admin.token" "$gp" task ls \
		>/dev/null 2>&1 && break
	sleep 0.1
done
if grep -q "uid 1895825408 + tenant id" "$two/server.log"; then
	ok "--task-uid-base auto: the second server takes the next free range"
else
	bad "--task-uid-base auto: the second server takes the next free range" "$two/server.log"
fi
# Its tenant of alice's id (admin is 1 in both) tries to kill alice's task.
two_as() { GPUPOOL_SOCKET="$two/server.sock" GPUPOOL_TOKEN_FILE="$two/state/admin.token" as "$@"; }
two_admin=$(cat "$two/state/admin.token")
carol=$(two_as "$two_admin" tenant add carol --mem-guaranteed 4G --compute-guaranteed 100)
killer=$(cd "$work" && two_as "$carol" submit -q --mem 1G --compute 10 -- sh -c \
	"id -u; kill -9 \$(cat '$work/victim.pid'); echo kill=\$?")
for _ in $(seq 100); do
	two_as "$two_admin" task show "$killer" -o json >"$two/killer.json" 2>&1
	jq -e '.state == "succeeded" or .state == "failed"' "$two/killer.json" >/dev/null 2>&1 && break
	sleep 0.1
done
two_as "$two_admin" logs "$killer" >"$two/killer.log" 2>&1
if grep -qx "$((1895825408 + alice_id))" "$two/killer.log" && grep -q "kill=1" "$two/killer.log"; then
	ok "... its tenant of the same id has another uid, and cannot kill the first server's task"
else
	bad "... its tenant of the same id has another uid, and cannot kill the first server's task" \
		"$two/killer.log" "$two/killer.json"
fi
as "$admin" task show "$victim" -o json >"$tmp/victim.json"
check "... which still runs" '.[0].state == "running"' "$tmp/victim.json"
kill "$second_pid" 2>/dev/null
wait "$second_pid" 2>/dev/null
as "$admin" task cancel "$victim" >/dev/null 2>&1

# ---- 9. a fork bomb: pids.max ---------------------------------------------------
limits=$(grep -o 'pids.max 128 per task (cgroup v[12])' "$tmp/server.log")
if [ -n "$limits" ]; then
	forker=$(submit "$alice" --mem 1G --compute 10 -- sh -c \
		"i=0; while [ \$i -lt 3000 ]; do sleep 30 & i=\$((i + 1)); echo \$i >'$work/forks'; done; echo made=\$i")
	wait_for "the fork bomb's task ends" 30 "$forker" '.state == "failed" or .state == "succeeded"'
	log "$forker" >"$tmp/forker.log"
	made=$(cat "$work/forks" 2>/dev/null)
	if [ "${made:-3000}" -lt 128 ] && grep -q "fork" "$tmp/forker.log" &&
		! grep -q "made=3000" "$tmp/forker.log"; then
		ok "forking 3,000 processes: refused past $limits (it made $made, then: $(grep -o "[^:]*fork.*" "$tmp/forker.log" | head -1))"
	else
		echo "made ${made:-none}" >>"$tmp/forker.log"
		bad "forking 3,000 processes: refused past pids.max" "$tmp/forker.log"
	fi
else
	echo "skipped: pids.max (no pids controller: $(grep -o 'no pids.max[^;]*' "$tmp/server.log"))"
fi

# ---- 10. host memory: memory.max --------------------------------------------------
if grep -q 'memory.max 256 MiB per task (cgroup v[12])' "$tmp/server.log"; then
	eater=$(submit "$alice" --mem 1G --compute 10 -- dd if=/dev/zero of=/dev/null bs=512M count=1)
	wait_for "512 MiB of host memory over a 256 MiB memory.max: the task is killed, failed with the reason" 30 \
		"$eater" '.state == "failed" and (.reason | test("^killed for memory: its processes reached their memory.max of 256 MiB .*--task-memory-max.*exit code 137"))'
	as "$admin" task ls >/dev/null 2>&1 && ok "... and the server goes on" ||
		bad "... and the server goes on" "$tmp/server.log"
else
	echo "skipped: memory.max (no memory controller: $(grep -o 'no memory.max[^;]*' "$tmp/server.log"))"
fi

# ---- 11. $HOME, /tmp and /dev/shm: the task's own, capped, gone at its end ------------
mark=gp-attack-$$
if grep -q "/tmp, /dev/shm and \$HOME (when gpupool makes it) of their own, tmpfs of at most 16 MiB each" "$tmp/server.log"; then
	filler=$(submit "$alice" --mem 1G --compute 10 -- sh -c "echo \$HOME >'$work/home'
		for d in \$HOME /tmp /dev/shm; do
			echo kept >\$d/$mark; dd if=/dev/zero of=\$d/$mark.big bs=1M count=64 2>&1; echo \"\$d dd=\$?\"
		done")
	wait_for "a task fills its \$HOME, /tmp and /dev/shm" 15 "$filler" '.state == "succeeded"'
	log "$filler" >"$tmp/filler.log"
	home=$(cat "$work/home")
	if [ "$(grep -c 'No space left on device' "$tmp/filler.log")" = 3 ] &&
		[ "$(grep -c ' dd=1$' "$tmp/filler.log")" = 3 ]; then
		ok "writing past 16 MiB in \$HOME, /tmp, /dev/shm: ENOSPC in the task, each"
	else
		bad "writing past 16 MiB in \$HOME, /tmp, /dev/shm: ENOSPC in the task, each" "$tmp/filler.log"
	fi
	ls -A "$home" "/tmp/$mark" "/dev/shm/$mark" >"$tmp/left" 2>&1
	if [ -d "$home" ] && [ -z "$(ls -A "$home")" ] && [ ! -e "/tmp/$mark" ] && [ ! -e "/dev/shm/$mark" ]; then
		ok "... and after its end nothing of it is left on the machine ($home is empty)"
	else
		bad "... and after its end nothing of it is left on the machine" "$tmp/left"
	fi
	reader=$(submit "$alice" --mem 1G --compute 10 -- sh -c \
		"cat \$HOME/$mark /tmp/$mark /dev/shm/$mark 2>&1; df -k /tmp | tail -1")
	wait_for "the tenant's next task starts afresh" 15 "$reader" '.state != "pending" and .state != "running"'
	log "$reader" >"$tmp/reader.log"
	if [ "$(grep -c 'No such file' "$tmp/reader.log")" = 3 ] && ! grep -q kept "$tmp/reader.log"; then
		ok "... and the tenant's next task finds none of it"
	else
		bad "... and the tenant's next task finds none of it" "$tmp/reader.log"
	fi
	rm -f "/tmp/$mark" "/tmp/$mark.big" "/dev/shm/$mark" "/dev/shm/$mark.big" "$home/$mark" "$home/$mark.big"
else
	echo "skipped: a task's own /tmp ($(grep -o "the machine's /tmp and /dev/shm[^;]*" "$tmp/server.log"))"
fi

# ---- 12. other tenants' processes: a /proc of the task's own ------------------------
if grep -q "a /proc of their user's processes only" "$tmp/server.log"; then
	holder=$(submit "$bob" --mem 1G --compute 10 -- sh -c \
		"echo \$\$ >'$work/bob.pid'; exec '$hog' libcuda.so.1 64 30")
	wait_for "bob's holder runs" 10 "$holder" '.state == "running"'
	for _ in $(seq 50); do log "$holder" | grep -q "^held " && break; sleep 0.1; done
	bob_pid=$(cat "$work/bob.pid")
	peeker=$(submit "$alice" --mem 1G --compute 10 -- sh -c "
		test -e /proc/$bob_pid && echo bob=seen || echo bob=hidden
		cat /proc/$bob_pid/cmdline 2>/dev/null; ps -eo uid= | sort -u | tr -d ' '
		test -e /proc/\$\$ && echo self=seen")
	wait_for "the peeking task ends" 15 "$peeker" '.state == "succeeded"'
	log "$peeker" >"$tmp/peeker.log"
	if grep -qx bob=hidden "$tmp/peeker.log" && grep -qx self=seen "$tmp/peeker.log" &&
		! grep -q "$hog" "$tmp/peeker.log" &&
		[ "$(grep -cx '[0-9]*' "$tmp/peeker.log")" = 1 ] && grep -qx "$((1879048192 + alice_id))" "$tmp/peeker.log"; then
		ok "another tenant's process is not in a task's /proc (nor its command line), its own are"
	else
		bad "another tenant's process is not in a task's /proc" "$tmp/peeker.log"
	fi
	# What tasks share of a card (the arbiter's turns) still counts the
	# processes they cannot see: test-card-attacks.sh's hard share beside
	# priority 9 runs with these /procs, and fails without that.
	as "$admin" task cancel "$holder" >/dev/null 2>&1
else
	echo "skipped: a task's own /proc ($(grep -o "the machine's /proc[^;]*" "$tmp/server.log"))"
fi

# ---- 13. a reason quoting what a tenant wrote, in task ls --------------------------------
# A working directory whose name holds a terminal escape, out of the task's
# reach: the task fails saying which directory, and `task ls` shows it escaped.
esc_dir="$work/x$(printf '\033')[2Jy"
mkdir -m 0700 "$esc_dir"
escaped=$(cd "$esc_dir" && as "$alice" submit -q --mem 1G --compute 10 -- true)
wait_for "a task in a directory it cannot enter fails" 15 "$escaped" '.state == "failed"'
as "$admin" task ls >"$tmp/ls.txt" 2>&1
as "$admin" task ls -o yaml >"$tmp/ls.yaml" 2>&1
if grep -qF 'cannot enter the working directory' "$tmp/ls.txt" && grep -qF 'x\x1b[2Jy' "$tmp/ls.txt" &&
	! LC_ALL=C grep -q "$(printf '\033')" "$tmp/ls.txt" "$tmp/ls.yaml"; then
	ok "task ls and -o yaml: a reason's terminal escape shown escaped"
else
	bad "task ls and -o yaml: a reason's terminal escape shown escaped" "$tmp/ls.txt"
fi

as "$admin" task cancel "$bob_task" >/dev/null 2>&1
as "$admin" task cancel "$burner" >/dev/null 2>&1
finish
