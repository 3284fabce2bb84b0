#!/bin/sh
# uninstall.sh — `make uninstall`: removes what `make install` put on the
# system from BUILD (the list is meson's own: meson introspect --installed,
# so it is the same PREFIX and layout), under DESTDIR when that is set.
# Keeps what is the operator's: the configuration, the database and the
# admin token, the task logs; says where they are. Refuses while the
# service runs.
# usage: uninstall.sh BUILD
set -eu
build=$1
destdir=${DESTDIR:-}

if [ -z "$destdir" ] && command -v systemctl >/dev/null 2>&1 &&
	systemctl is-active --quiet gpupool 2>/dev/null; then
	echo "uninstall: gpupool.service is running; stop it first:" \
		"systemctl disable --now gpupool" >&2
	exit 1
fi
if ! plan=$(meson introspect "$build" --installed 2>/dev/null) ||
	! files=$(echo "$plan" | jq -r '.[]') || [ -z "$files" ]; then
	echo "uninstall: cannot read what $build installs (meson introspect);" \
		"give the build folder that was installed: make uninstall BUILD=DIR" >&2
	exit 1
fi
# The configuration the unit names (kept), read before the unit goes.
unit=$(echo "$files" | grep '/gpupool\.service$' || true)
config=$(sed -n 's/^ExecStart=.* --config \([^ ]*\).*/\1/p' "$destdir$unit" 2>/dev/null || true)
echo "$files" | while read -r f; do
	[ -n "$f" ] || continue
	if [ -e "$destdir$f" ] || [ -L "$destdir$f" ]; then
		rm -f "$destdir$f"
		echo "Removed $destdir$f"
	fi
	# Folders of gpupool's own, once empty (share/doc/gpupool,
	# share/gpupool/ui and then share/gpupool).
	dir=${f%/*}
	while case $dir in */gpupool | */gpupool/*) true ;; *) false ;; esac; do
		rmdir "$destdir$dir" 2>/dev/null || break
		dir=${dir%/*}
	done
done
echo "Kept: ${config:+$destdir$config (the configuration), }/var/lib/gpupool" \
	"(the database, the admin token), /var/log/gpupool (task logs); remove them" \
	"to forget every tenant, task and bill"
[ -n "$destdir" ] || ! command -v systemctl >/dev/null 2>&1 ||
	systemctl daemon-reload 2>/dev/null || true
