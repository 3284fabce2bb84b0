# for-tasks.sh — sourced, never run: puts what tasks run where tasks can
# reach it.
#
# A server run as root runs every task as its tenant's Unix user, who may
# not reach this checkout: /root, or a `mktemp -d` directory, is 0700. So
# the tests, the demo and the benchmarks that start such a server copy the
# programs its tasks run, the interposer and the simulated driver into a
# directory every user can read, and use the copies (the server finds the
# interposer next to its own program, as it does in build/).
#
#   for_tasks DIR VAR...   copies the files the variables name into DIR
#                          (made 0755), points the variables at the copies,
#                          copies libgpushare.so with the gpupool program,
#                          and the directories of LD_LIBRARY_PATH that hold
#                          libcuda.so.1 (the simulated driver), pointing
#                          LD_LIBRARY_PATH at them. Does nothing unless
#                          this shell is root. Returns 1 (having said why,
#                          as cp does) when a copy fails. A second call
#                          with the same DIR copies more programs and keeps
#                          the libraries' copies.

for_tasks() {
	ft_dir=$1
	shift
	[ "$(id -u)" = 0 ] || return 0
	mkdir -p "$ft_dir" && chmod 755 "$ft_dir" || return 1
	for ft_var in "$@"; do
		eval "ft_src=\${$ft_var:-}"
		[ -n "$ft_src" ] && [ -f "$ft_src" ] || continue
		cp "$ft_src" "$ft_dir/" || return 1
		chmod 755 "$ft_dir/$(basename "$ft_src")"
		eval "$ft_var=\$ft_dir/\$(basename \"\$ft_src\")"
		if [ -f "$(dirname "$ft_src")/libgpushare.so" ]; then
			cp "$(dirname "$ft_src")/libgpushare.so" "$ft_dir/" || return 1
			chmod 755 "$ft_dir/libgpushare.so"
		fi
	done
	ft_path=""
	ft_n=0
	ft_rest=${LD_LIBRARY_PATH:-}
	while [ -n "$ft_rest" ]; do
		ft_part=${ft_rest%%:*}
		[ "$ft_part" = "$ft_rest" ] && ft_rest="" || ft_rest=${ft_rest#*:}
		# (A directory in DIR already is a copy: a second call keeps it.)
		if [ -n "$ft_part" ] && [ -f "$ft_part/libcuda.so.1" ] &&
			[ "${ft_part#"$ft_dir"/}" = "$ft_part" ]; then
			ft_n=$((ft_n + 1))
			mkdir -p "$ft_dir/lib$ft_n" && chmod 755 "$ft_dir/lib$ft_n" || return 1
			for ft_lib in "$ft_part"/*.so*; do
				[ -f "$ft_lib" ] || continue # meson's .p directories
				cp "$ft_lib" "$ft_dir/lib$ft_n/" &&
					chmod 755 "$ft_dir/lib$ft_n/$(basename "$ft_lib")" || return 1
			done
			ft_part=$ft_dir/lib$ft_n
		fi
		ft_path=${ft_path:+$ft_path:}$ft_part
	done
	[ -z "$ft_path" ] || export LD_LIBRARY_PATH="$ft_path"
}
