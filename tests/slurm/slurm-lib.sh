# slurm-lib.sh — real Slurm daemons for the tests of the SPANK plugin;
# sourced after ../lib.sh. slurm_start PLUGSTACK-LINE GPUS SHARDS writes a
# single-node configuration in $tmp/slurm (this host's short name, state
# and spool there, munge authentication through a munged of the test's
# own, proctrack/linuxproc, task/none, select/cons_tres,
# GresTypes=gpu,shard, one device file per simulated GPU made with mknod),
# starts munged, slurmctld and slurmd, and waits until the node is idle.
# slurm_accounting_start, called first, adds Slurm's accounting: a MariaDB
# of the test's own (data and socket in $sl/db) and slurmdbd on it.
# slurm_nodes_start PLUGSTACK-LINE GPUS SHARDS NODES PRIVATE-DIR... starts
# NODES nodes on this one machine instead (n1, n2, ...), each slurmd in
# a mount and UTS namespace of its own (below). slurm_stop stops them all
# by their pids (also at exit). Skips (77) where Slurm or root is
# missing.
for cmd in munged slurmctld slurmd srun sbatch scontrol; do
	command -v "$cmd" >/dev/null 2>&1 || { echo "SKIP: $cmd is not installed (scripts/install-deps.sh installs Slurm)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd runs jobs as their users only as root"; exit 77; }

sl=$tmp/slurm
export SLURM_CONF=$sl/slurm.conf

# Eight free TCP ports from 20000 + a number of this test's own: the
# controller's, slurmdbd's, MariaDB's, then the nodes' (slurmd_port is
# the first node's, the next the second's, ...).
slurm_ports() {
	base=$((20000 + ($$ % 2000) * 8))
	ctld_port=$base dbd_port=$((base + 1)) db_port=$((base + 2)) slurmd_port=$((base + 3))
}
accounting="AccountingStorageType=accounting_storage/none"

# munged as the munge user, its socket in $sl/munge (the package's key).
munge_start() {
	chmod 711 "$tmp" "$sl"
	mkdir -p "$sl/munge"
	chown munge:munge "$sl/munge" && chmod 711 "$sl/munge" || return 1
	[ -s "$sl/munge/munged.pid" ] && kill -0 "$(cat "$sl/munge/munged.pid")" 2>/dev/null && return 0
	runuser -u munge -- munged --socket="$sl/munge/munge.socket" \
		--pid-file="$sl/munge/munged.pid" --log-file="$sl/munge/munged.log" \
		--seed-file="$sl/munge/munged.seed" || { bad "munged starts" "$sl/munge/munged.log"; return 1; }
}

# MariaDB (root without a password, on 127.0.0.1 only) and slurmdbd.
slurm_accounting_start() {
	for cmd in mariadbd mariadb-install-db slurmdbd sacctmgr sacct; do
		command -v "$cmd" >/dev/null 2>&1 || { echo "SKIP: $cmd is not installed (scripts/install-deps.sh installs it)"; exit 77; }
	done
	slurm_ports
	mkdir -p "$sl/db" "$sl/log"
	munge_start || return 1
	mariadb-install-db --no-defaults --datadir="$sl/db/data" --user=root \
		--auth-root-authentication-method=normal >"$sl/log/db-install.log" 2>&1 ||
		{ bad "MariaDB's data folder is made" "$sl/log/db-install.log"; return 1; }
	mariadbd --no-defaults --datadir="$sl/db/data" --socket="$sl/db/sock" --port="$db_port" \
		--bind-address=127.0.0.1 --user=root --pid-file="$sl/db/mariadbd.pid" \
		--skip-log-bin --innodb-buffer-pool-size=32M >"$sl/log/mariadbd.log" 2>&1 &
	echo $! >"$sl/mariadbd.pid"
	cat >"$sl/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$sl/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$sl/slurmdbd.pid
LogFile=$sl/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=root
StorageLoc=slurm_acct_db
CONF
	chmod 600 "$sl/slurmdbd.conf"
	for _ in $(seq 100); do
		[ -S "$sl/db/sock" ] && break
		sleep 0.1
	done
	slurmdbd >>"$sl/log/slurmdbd.out" 2>&1 ||
		{ bad "slurmdbd starts" "$sl/log/slurmdbd.log"; return 1; }
	for _ in $(seq 100); do
		grep -q "slurmdbd version .* started" "$sl/log/slurmdbd.log" 2>/dev/null && break
		sleep 0.1
	done
	accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
AccountingStoragePass=$sl/munge/munge.socket"
}

# slurm_conf GPUS SHARDS NODE-LINES NODES: slurm.conf (the nodes'
# spool, pid and log files named by node: %n), gres.conf, one device
# file per simulated GPU, and munged.
slurm_conf() {
	gpus=$1 shards=$2 node_lines=$3 nodes=$4
	mkdir -p "$sl/state" "$sl/spool" "$sl/dev" "$sl/log"
	munge_start || return 1
	i=0
	while [ "$i" -lt "$gpus" ]; do
		[ -e "$sl/dev/nvidia$i" ] || mknod "$sl/dev/nvidia$i" c 1 3
		i=$((i + 1))
	done
	cat >"$SLURM_CONF" <<CONF
ClusterName=gpupool-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sl/munge/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool/%n
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd-%n.pid
SlurmctldLogFile=$sl/log/slurmctld.log
SlurmdLogFile=$sl/log/slurmd-%n.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$accounting
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
GresTypes=gpu,shard
PlugStackConfig=$sl/plugstack.conf
$node_lines
PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
	{
		echo "Name=gpu File=$sl/dev/nvidia[0-$((gpus - 1))]"
		echo "Name=shard Count=$shards"
	} >"$sl/gres.conf"
}

# slurm_idle N: waits until slurmctld has N nodes, all idle.
slurm_idle() {
	for _ in $(seq 150); do
		[ "$(sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" = "$1" ] && return 0
		sleep 0.1
	done
	bad "the $1 Slurm node(s) are idle" "$sl/log/slurmctld.log"
	return 1
}

slurm_start() {
	plug=$1 gpus=$2 shards=$3
	host=$(hostname -s)
	slurm_ports
	slurm_conf "$gpus" "$shards" "NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=4000 Gres=gpu:$gpus,shard:$shards State=UNKNOWN" "$host" ||
		return 1
	mkdir -p "$sl/spool/$host"
	echo "$plug" >"$sl/plugstack.conf"
	slurmctld -f "$SLURM_CONF" -i >>"$sl/log/ctld.out" 2>&1
	slurmd -f "$SLURM_CONF" -N "$host" >>"$sl/log/slurmd.out" 2>&1
	slurm_idle 1
}

# Nodes on one machine. Debian's Slurm is built for several slurmd on
# one host (scontrol show config: MULTIPLE_SLURMD = Yes): nodes of their
# own NodeName and Port= on 127.0.0.1, each slurmd started with -N NAME.
# That alone would give the nodes one filesystem, so one simulated GPU
# and one run directory of regions between them; each slurmd runs in a
# mount and UTS namespace of its own instead, and so its steps too, so
# that each node has what a real node has: its host name (nI), its own
# copy of each PRIVATE-DIR (the regions' run directory, simdev's state:
# $sl/nI/PRIVATE-DIR mounted over PRIVATE-DIR) and its own munged (the
# package's key; its socket mounted over $sl/munge, where slurm.conf
# names it). node_dir N DIR: node N's copy of DIR.
node_dir() {
	echo "$sl/n$1$2"
}

# node_start N PRIVATE-DIR...: munged and slurmd of node nN.
node_start() {
	n=$1
	shift
	mkdir -p "$sl/n$n/munge" "$sl/spool/n$n"
	chown munge:munge "$sl/n$n/munge" && chmod 711 "$sl/n$n/munge" || return 1
	runuser -u munge -- munged --socket="$sl/n$n/munge/munge.socket" \
		--pid-file="$sl/n$n/munge/munged.pid" --log-file="$sl/n$n/munge/munged.log" \
		--seed-file="$sl/n$n/munge/munged.seed" ||
		{ bad "munged of node n$n starts" "$sl/n$n/munge/munged.log"; return 1; }
	for d in "$@"; do mkdir -p "$d" "$(node_dir "$n" "$d")"; done
	unshare --mount --uts --propagation private sh -c '
		n=$1 sl=$2
		shift 2
		hostname "n$n" &&
		mount --bind "$sl/n$n/munge" "$sl/munge" || exit 1
		for d in "$@"; do mount --bind "$sl/n$n$d" "$d" || exit 1; done
		exec slurmd -f "$SLURM_CONF" -N "n$n"' sh "$n" "$sl" "$@" \
		>>"$sl/log/slurmd-n$n.out" 2>&1 ||
		{ bad "slurmd of node n$n starts in its namespace" "$sl/log/slurmd-n$n.out"; return 1; }
}

slurm_nodes_start() {
	plug=$1 gpus=$2 shards=$3 count=$4
	shift 4
	command -v unshare >/dev/null 2>&1 ||
		{ echo "SKIP: unshare is not installed (util-linux): nodes need namespaces"; exit 77; }
	unshare --mount --uts true 2>/dev/null ||
		{ echo "SKIP: cannot make mount and UTS namespaces here (unshare): nodes need them"; exit 77; }
	slurm_ports
	lines= i=1
	while [ "$i" -le "$count" ]; do
		lines="$lines${lines:+
}NodeName=n$i NodeHostName=n$i NodeAddr=127.0.0.1 Port=$((slurmd_port + i - 1)) CPUs=$(nproc) RealMemory=4000 Gres=gpu:$gpus,shard:$shards State=UNKNOWN"
		i=$((i + 1))
	done
	slurm_conf "$gpus" "$shards" "$lines" "n[1-$count]" || return 1
	echo "$plug" >"$sl/plugstack.conf"
	slurmctld -f "$SLURM_CONF" -i >>"$sl/log/ctld.out" 2>&1
	i=1
	while [ "$i" -le "$count" ]; do
		node_start "$i" "$@" || return 1
		i=$((i + 1))
	done
	slurm_idle "$count"
}

# step_start OUT SRUN-OPTIONS GPULOAD-ARGS...: a step in the background
# ($! is its srun) that prints "pid=N id=TASK-ID" (its process, its task),
# then runs gpuload (its path in $gl) with the arguments; all it prints
# goes to OUT. step_pid OUT: the N it printed, once it has (10 s at most).
step_start() {
	out=$1 opts=$2
	shift 2
	# shellcheck disable=SC2086 # the srun options are a list
	srun $opts sh -c 'echo "pid=$$ id=$GPUPOOL_TASK_ID"; exec "$0" "$@"' "$gl" "$@" \
		>"$out" 2>&1 &
}

step_pid() {
	for _ in $(seq 100); do
		p=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.1
	done
}

slurm_stop() {
	for pidfile in "$sl"/slurmd-*.pid "$sl"/n*/munge/munged.pid; do
		[ -s "$pidfile" ] || continue
		pidfile=${pidfile#"$sl/"}
		slurm_kill "${pidfile%.pid}"
	done
	for daemon in slurmctld slurmdbd mariadbd munge/munged; do
		[ -s "$sl/$daemon.pid" ] && slurm_kill "$daemon"
	done
}

# slurm_kill NAME: stops the daemon of $sl/NAME.pid, and removes the file.
slurm_kill() {
	pid=$(cat "$sl/$1.pid")
	kill "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	rm -f "$sl/$1.pid"
}

cleanup_hook() {
	slurm_stop
}

# The daemons are daemons: a test killed at its timeout (SIGTERM, which
# runs no EXIT trap in dash) would leave them running. A watchdog, deaf
# to SIGTERM, stops them once the test's shell is gone, however it went.
(
	trap '' TERM INT
	while kill -0 $$ 2>/dev/null; do sleep 1; done
	slurm_stop
	rm -rf "$tmp"
) >/dev/null 2>&1 &
