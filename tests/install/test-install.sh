#!/bin/sh
# test-install.sh — what `make install` gives an operator, installed into
# a DESTDIR under the test's $tmp, never the machine's /etc, /usr or /var:
# the layout (the programs, libgpushare.so in the library folder, the
# manual page, the systemd unit, /etc/gpupool/gpupool.yaml, nothing
# else: no simulated driver); a second install keeps a changed
# configuration; the unit passes `systemd-analyze verify` (where it is
# installed); --check-config of the installed configuration gives the
# system's paths; then the INSTALLED server, with the INSTALLED
# configuration and flags that move its paths into $tmp (--db, --socket,
# --run-dir, --log-dir: the file itself is not edited), started as the
# unit would start it where this runs as root (its CapabilityBoundingSet
# and NoNewPrivileges, through setpriv, in a cgroup it may write in), on
# a simulated T4, finds the installed libgpushare.so by itself and runs a
# tenant's task through it (held to its slice while the verifier
# watches; as root: as the tenant's own uid, in its cgroup, and a task
# cancelled with SIGTERM); then uninstall.sh removes the files and keeps
# the configuration; and the machine's own paths are as they were.
# usage: test-install.sh MESON BUILD-FOLDER
set -u
meson=$1
build=$2
. "$(dirname "$0")/../lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
root=$tmp/root

# ---- where things go, from the build folder's options -----------------------
"$meson" introspect "$build" --buildoptions >"$tmp/options.json"
option() { jq -r --arg n "$1" '.[] | select(.name == $n) | .value' "$tmp/options.json"; }
prefix=$(option prefix)
under() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
bindir=$(under "$(option bindir)")
libdir=$(under "$(option libdir)")
mandir=$(under "$(option mandir)")
docdir=$(under "$(option datadir)")/doc/gpupool
uidir=$(under "$(option datadir)")/gpupool/ui
sysconfdir=$(option sysconfdir)
case $sysconfdir in /*) ;; *) sysconfdir=/etc ;; esac # dist/meson.build
unitdir=$(option systemdsystemunitdir)
[ -n "$unitdir" ] || unitdir=$prefix/lib/systemd/system
config=$sysconfdir/gpupool/gpupool.yaml
unit=$unitdir/gpupool.service

# What is on the machine before, to show that the test leaves it alone.
host_paths="$bindir/gpupool $libdir/libgpushare.so $unit $config /var/lib/gpupool
	/var/log/gpupool"
for p in $host_paths; do [ -e "$p" ] && echo "$p"; done >"$tmp/host-before"

# meson install writes in the build folder (install-log.txt, and
# install-config.txt from dist/install-config.sh): the operator's own
# install's are put back at the end.
logs="install-log.txt install-config.txt"
for f in $logs; do
	[ -f "$build/meson-logs/$f" ] && cp "$build/meson-logs/$f" "$tmp/$f"
done
restore_logs() {
	for f in $logs; do
		if [ -f "$tmp/$f" ]; then cp "$tmp/$f" "$build/meson-logs/$f"; else rm -f "$build/meson-logs/$f"; fi
	done
}
# At exit, however the test ends (lib.sh runs it): those logs, then what
# is left in the server's cgroup (below), and the cgroup.
service_cg=""
cleanup_hook() {
	restore_logs
	[ -n "$service_cg" ] && [ -d "$service_cg" ] || return 0
	echo 1 >"$service_cg/cgroup.kill" 2>/dev/null
	sleep 0.2
	find "$service_cg" -depth -type d -exec rmdir {} + 2>/dev/null
}

# ---- the layout ---------------------------------------------------------------
if "$meson" install -C "$build" --no-rebuild --quiet --destdir "$root" >"$tmp/install.out" 2>&1; then
	ok "meson install --destdir: done"
else
	bad "meson install --destdir: done" "$tmp/install.out"
fi
{
	echo "$bindir/gpuload"
	echo "$bindir/gpupool"
	echo "$libdir/libgpushare.so"
	[ ! -f "$build/gpupool.so" ] || echo "$libdir/gpupool.so" # the SPANK plugin, with Slurm's headers
	echo "$mandir/man1/gpupool.1"
	echo "$unit"
	echo "$config"
	echo "$docdir/gpupool.example.yaml"
	for f in "$src"/ui/*; do echo "$uidir/${f##*/}"; done # the web console: every file of ui/
} | sort >"$tmp/want-files"
(cd "$root" && find . ! -type d | sed 's|^\.||' | sort) >"$tmp/got-files"
if cmp -s "$tmp/want-files" "$tmp/got-files"; then
	ok "installed: the programs, the library, the page, the unit, the configuration, nothing else"
else
	diff "$tmp/want-files" "$tmp/got-files" >"$tmp/files.diff"
	bad "installed: the programs, the library, the page, the unit, the configuration, nothing else" \
		"$tmp/files.diff"
fi
# Everyone may run the programs and read the library: tasks' users too.
modes=$(stat -c %a "$root$bindir/gpupool" "$root$bindir/gpuload" "$root$libdir/libgpushare.so" |
	paste -sd' ' -)
if [ "$modes" = "755 755 755" ]; then
	ok "the programs and the library are mode 0755"
else
	ls -l "$root$bindir" "$root$libdir" >"$tmp/ls" 2>&1
	bad "the programs and the library are mode 0755" "$tmp/ls"
fi
if cmp -s "$src/docs/gpupool.example.yaml" "$root$config" &&
	[ "$(stat -c %a "$root$config")" = 644 ]; then
	ok "the configuration is the example, mode 0644"
else
	ls -l "$root$config" >"$tmp/ls" 2>&1
	bad "the configuration is the example, mode 0644" "$tmp/ls"
fi

echo "# the operator's change" >>"$root$config"
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$root" >"$tmp/install.out" 2>&1
if tail -1 "$root$config" | grep -q "the operator's" &&
	grep -q "^Keeping $root$config (yours)" "$build/meson-logs/install-config.txt"; then
	ok "a second install keeps a changed configuration, and says so"
else
	cat "$build/meson-logs/install-config.txt" >>"$tmp/install.out" 2>&1
	bad "a second install keeps a changed configuration, and says so" "$tmp/install.out"
fi

# ---- the unit -------------------------------------------------------------------
expect "the unit starts the installed server with the installed configuration" 0 \
	"^ExecStart=$bindir/gpupool server --config $config\$" -- cat "$root$unit"
if command -v systemd-analyze >/dev/null 2>&1; then
	# Its programs and page where they were installed, in $root.
	mkdir -p "$tmp/units"
	sed "s|^ExecStart=/|ExecStart=$root/|" "$root$unit" >"$tmp/units/gpupool.service"
	if MANPATH=$root$mandir systemd-analyze verify "$tmp/units/gpupool.service" \
		>"$tmp/verify" 2>&1 && [ ! -s "$tmp/verify" ]; then
		ok "systemd-analyze verify: no error, no warning"
	else
		bad "systemd-analyze verify: no error, no warning" "$tmp/verify"
	fi
else
	echo "skip: systemd-analyze verify (systemd-analyze is not installed)"
fi

# ---- the installed configuration ----------------------------------------------------
gp=$root$bindir/gpupool
gl=$root$bindir/gpuload
shim=$(realpath "$root$libdir/libgpushare.so")
expect "--check-config: the installed configuration's system paths, the agent, the library" 0 \
	"database   /var/lib/gpupool/gpupool.db .*socket     /run/gpupool/server.sock .*agent      yes .*shim       $shim .*logs       /var/log/gpupool," -- \
	sh -c "'$gp' server --config '$root$config' --check-config | tr '\n' ' '"
expect "the installed configuration's regions are in /run/gpupool" 0 "^run_dir: /run/gpupool" -- \
	cat "$root$config"

# ---- the installed server, a task through the installed library -------------------------
export GPUPOOL_SIM_DEVICES=t4-16g:1 GPUPOOL_SIM_DIR="$tmp/sim"
export GPUPOOL_SOCKET="$tmp/server.sock" GPUPOOL_TOKEN_FILE="$tmp/state/admin.token"
export LD_LIBRARY_PATH="$build/simdev"
# As root, tasks run as tenants' users: they reach $tmp (as they would
# /var/tmp), the installed tree in it, and copies of the simulated driver.
chmod 1777 "$tmp"
. "$src/scripts/for-tasks.sh"
for_tasks "$tmp/bin" || { echo "cannot copy the simulated driver into $tmp/bin"; exit 1; }
cd "$tmp" || exit 1

# As systemd would start it, where this runs as root: with the unit's
# capability bounding set and no_new_privs (setpriv), in a cgroup of its
# own that it may write in, as Delegate=yes gives gpupool.service.
as_unit=""
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$root$unit" | tr 'A-Z ' 'a-z\n' |
		sed -n 's/^cap_/+/p' | paste -sd, -)
	grep -q '^NoNewPrivileges=yes$' "$root$unit" && nnp=--no-new-privs || nnp=""
	as_unit="setpriv --bounding-set -all,$caps --inh-caps -all $nnp --"
	cg_mount=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2" &&
		$4 == "/") print $5; break } }' /proc/self/mountinfo | head -1)
	cg_own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	service_cg=${cg_mount:+$cg_mount${cg_own%/}/test-install-$$.service}
	[ -n "$service_cg" ] && mkdir -m 0755 "$service_cg" 2>/dev/null || service_cg=""
	echo "# the server runs as: $as_unit, in the cgroup ${service_cg:-(none: no cgroup v2 here)}"
else
	echo "# not root (or no setpriv): the server runs without the unit's capabilities"
fi
# into_cgroup DIR COMMAND...: COMMAND, in the cgroup DIR ("" for none).
into_cgroup() {
	exec sh -c '[ -z "$0" ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "$@"
}
# shellcheck disable=SC2086 # $as_unit is words
into_cgroup "$service_cg" $as_unit "$gp" server --config "$root$config" \
	--db "$tmp/state/gpupool.db" --socket "$GPUPOOL_SOCKET" --run-dir "$tmp/run" \
	--log-dir "$tmp/logs" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
	"$gp" task ls >/dev/null 2>&1 && break
	sleep 0.1
done
expect "the installed server starts with the installed configuration" 0 \
	"gpupool server: serving on $GPUPOOL_SOCKET" -- cat "$tmp/server.log"
expect "... finds the installed libgpushare.so by itself" 0 "tasks preload $shim\$" -- \
	cat "$tmp/server.log"
if [ -n "$service_cg" ]; then
	expect "... and, under the unit's capabilities, isolates tenants (users, cgroups, the verifier)" 0 \
		"tasks run as their tenants' users .*, each in a cgroup under $service_cg/gpupool-.*; verifier on\$" -- \
		cat "$tmp/server.log"
elif [ -n "$as_unit" ]; then
	echo "skip: ... isolates tenants (no cgroup v2 here)"
fi

# wait_end ID SECONDS: until task ID has ended (its JSON in $tmp/task.json).
wait_end() {
	for _ in $(seq $(($2 * 10))); do
		"$gp" task show "$1" -o json >"$tmp/task.json" 2>&1
		jq -e '.state | IN("pending", "running") | not' "$tmp/task.json" >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
}
token=$("$gp" tenant add installer --unlimited 2>"$tmp/tenant.err")
tenant_id=$("$gp" tenant ls -o json 2>/dev/null |
	jq -r '.tenants[] | select(.name == "installer") | .id')
as_tenant() { GPUPOOL_TOKEN=$token GPUPOOL_TOKEN_FILE='' "$gp" "$@"; }
# Holds its memory over three of the verifier's periods: the verifier,
# which kills a device process without libgpushare, must find it loaded.
id=$(as_tenant submit -q --name installed --mem 1G --compute 50 -- sh -c "id -u;
	grep '^0::' /proc/self/cgroup; grep -o '/[^ ]*libgpushare\\.so' /proc/self/maps | head -1
	df -k /tmp | tail -1; exec '$gl' alloc --hold 1.5 --json" 2>"$tmp/submit.err")
wait_end "$id" 15
check "a tenant's task through the installed server succeeds, the verifier watching" \
	'.[0].state == "succeeded"' "$tmp/task.json"
"$gp" logs "$id" >"$tmp/task.log" 2>&1
expect "... with the installed libgpushare.so loaded" 0 "^$shim\$" -- cat "$tmp/task.log"
tail -1 "$tmp/task.log" >"$tmp/alloc.json"
check "... which holds it to its 1G slice" '.[0].allocated_mib == 1024 and .[0].oom' \
	"$tmp/alloc.json"
if [ -n "$service_cg" ]; then
	# The automatic user of the tenant: task_uid_base (the file's) + its id.
	uid=$(sed -n 1p "$tmp/task.log")
	cgroup=$(sed -n 2p "$tmp/task.log")
	if [ "$uid" = $((1879048192 + tenant_id)) ] &&
		echo "$cgroup" | grep -Eq "^0::${service_cg#"$cg_mount"}/gpupool-[^/]+/task-$id\$"; then
		ok "... as the tenant's own uid, in a cgroup of its own under the server's"
	else
		bad "... as the tenant's own uid, in a cgroup of its own under the server's (uid $uid, tenant $tenant_id)" \
			"$tmp/task.log"
	fi
	# The unit's capabilities let the server mount the task's own /tmp
	# (CAP_SYS_ADMIN): a tmpfs of the installed task_tmp_max, 1G.
	expect "... with a /tmp of its own, a tmpfs of task_tmp_max" 0 '^tmpfs +1048576 ' -- \
		sed -n 4p "$tmp/task.log"
	# Signalling a task of another uid: SIGTERM ends it at once, well
	# within the grace period (grace_ms: 5000) after which it would be
	# killed through its cgroup.
	long=$(as_tenant submit -q --name long --mem 1G --compute 10 -- sleep 60 2>>"$tmp/submit.err")
	for _ in $(seq 50); do
		"$gp" task show "$long" -o json 2>/dev/null | jq -e '.state == "running"' \
			>/dev/null && break
		sleep 0.1
	done
	as_tenant task cancel "$long" >/dev/null 2>&1
	wait_end "$long" 3
	check "... and cancelled, it gets SIGTERM from the server" \
		'.[0].state == "cancelled" and (.[0].reason | endswith("killed by signal 15"))' \
		"$tmp/task.json"
fi

kill -TERM "$server"
wait "$server"
status=$?
if [ "$status" -eq 0 ] && grep -q "gpupool server: stopped" "$tmp/server.log"; then
	ok "the installed server stops on SIGTERM, exit 0"
else
	bad "the installed server stops on SIGTERM, exit 0 (exit $status)" "$tmp/server.log"
fi

# ---- uninstalling -------------------------------------------------------------------
DESTDIR=$root "$src/dist/uninstall.sh" "$build" >"$tmp/uninstall.out" 2>&1
(cd "$root" && find . ! -type d | sed 's|^\.||' | sort) >"$tmp/left"
if [ "$(cat "$tmp/left")" = "$config" ] && [ ! -e "$root$docdir" ] &&
	grep -q "^Kept: $root$config (the configuration)" "$tmp/uninstall.out"; then
	ok "uninstall removes every file but the configuration, and says what it kept"
else
	cat "$tmp/left" >>"$tmp/uninstall.out"
	bad "uninstall removes every file but the configuration, and says what it kept" \
		"$tmp/uninstall.out"
fi

for p in $host_paths; do [ -e "$p" ] && echo "$p"; done >"$tmp/host-after"
if cmp -s "$tmp/host-before" "$tmp/host-after"; then
	ok "the machine's own /etc, /usr and /var are as they were"
else
	diff "$tmp/host-before" "$tmp/host-after" >"$tmp/host.diff"
	bad "the machine's own /etc, /usr and /var are as they were" "$tmp/host.diff"
fi
finish
