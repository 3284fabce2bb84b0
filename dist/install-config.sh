#!/bin/sh
# install-config.sh — run by `meson install` (dist/meson.build): installs
# the example configuration as the server's configuration, mode 0644,
# unless that file exists already; an operator's file is never replaced.
# Honours DESTDIR (set by meson install --destdir, or make install
# DESTDIR=). What it did is one line in BUILD/meson-logs/install-config.txt,
# which make install prints (meson install shows an install script's
# output only when it fails).
# usage: install-config.sh EXAMPLE CONFIG INSTALLED-EXAMPLE
set -eu
example=$1
config=${DESTDIR:-}$2
said=${MESON_BUILD_ROOT:-.}/meson-logs/install-config.txt
say() { echo "$*" >"$said" 2>/dev/null || echo "$*"; }

if [ -e "$config" ] || [ -L "$config" ]; then
	say "Keeping $config (yours); this version's example is $3:" \
		"compare them (diff) for new keys"
	exit 0
fi
if [ ! -d "$(dirname "$config")" ]; then
	mkdir -p "$(dirname "$config")"
	chmod 755 "$(dirname "$config")"
fi
cp "$example" "$config.new"
chmod 644 "$config.new"
mv "$config.new" "$config"
say "Installing $config (the example configuration; edit it, then systemctl restart gpupool)"
