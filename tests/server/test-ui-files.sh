#!/bin/sh
# test-ui-files.sh — how `gpupool server --tcp` serves the web console's
# files (src/server/api-ui.c): /ui to /ui/, the page and its files with
# their types, a policy that allows no script from elsewhere and no
# framing; names that are not one plain file of the console's folder
# (hidden, of another type, a link, a path out of it) are 404; the
# charting library from its package, and a clear 404 saying what to
# install when it is missing. The pages are tested in tests/console.
# usage: test-ui-files.sh GPUPOOL
gp=$1
. "$(dirname "$0")/../lib.sh"
port=$((30000 + $$ % 2000))
ui=$tmp/ui
mkdir -p "$ui"
echo '<!doctype html><title>t</title>' >"$ui/index.html"
echo 'export const x = 1;' >"$ui/app.js"
echo 'body { margin: 0 }' >"$ui/app.css"
echo 'secret' >"$ui/.hidden.js"
echo 'text' >"$ui/notes.txt"
echo 'outside' >"$tmp/outside.js"
ln -s "$tmp/outside.js" "$ui/link.js"
echo 'window.Chart = {};' >"$tmp/chart.js"

serve() { # UI-CHART-JS: the server on $port with the console in $ui
	"$gp" server --db "$tmp/state/gpupool.db" --socket "$tmp/server.sock" --tcp "$port" \
		--ui-dir "$ui" --ui-chart-js "$1" >>"$tmp/server.log" 2>&1 &
	server=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/v1/health" && return 0
		sleep 0.1
	done
	bad "the server answers on 127.0.0.1:$port" "$tmp/server.log"
}
get() { # PATH: status, headers in $tmp/h, body in $tmp/b
	curl -s -D "$tmp/h" -o "$tmp/b" -w '%{http_code}' "http://127.0.0.1:$port$1"
}
header() { # NAME VALUE: the last reply had that header
	grep -qi "^$1: $2"$(printf '\r')'$' "$tmp/h"
}

serve "$tmp/chart.js"
grep -q "the console at http://127.0.0.1:$port/ui/" "$tmp/server.log" &&
	ok "the server says where the console is" || bad "the server says where the console is" "$tmp/server.log"
[ "$(get /ui)" = 301 ] && header Location /ui/ && ok "/ui goes to /ui/" || bad "/ui goes to /ui/" "$tmp/h"
[ "$(get /ui/)" = 200 ] && header Content-Type "text/html; charset=utf-8" &&
	header Content-Security-Policy "default-src 'self'; frame-ancestors 'none'" &&
	cmp -s "$tmp/b" "$ui/index.html" && ok "/ui/ is the page, under a policy of 'self' and no framing" ||
	bad "/ui/ is the page, under a policy of 'self' and no framing" "$tmp/h"
[ "$(get /ui/app.js)" = 200 ] && header Content-Type "text/javascript; charset=utf-8" &&
	[ "$(get /ui/app.css)" = 200 ] && header Content-Type "text/css; charset=utf-8" &&
	ok "scripts and styles with their types" || bad "scripts and styles with their types" "$tmp/h"
served=0
for name in .hidden.js notes.txt link.js nothing.js ..%2Foutside.js lib/other.js; do
	[ "$(get "/ui/$name")" = 404 ] && ! grep -qx "outside\|secret\|text" "$tmp/b" ||
		{ served=1; bad "/ui/$name is 404" "$tmp/b"; }
done
[ "$served" = 0 ] && ok "hidden names, other types, links, missing files and paths out are 404"
[ "$(get /ui/lib/chart.js)" = 200 ] && cmp -s "$tmp/b" "$tmp/chart.js" &&
	ok "/ui/lib/chart.js is the charting library" || bad "/ui/lib/chart.js is the charting library" "$tmp/b"
[ "$(get /v1/tenants)" = 401 ] && ok "the API still wants a token on TCP" || bad "the API still wants a token on TCP" "$tmp/b"
kill "$server"
wait "$server"

serve "$tmp/no-chart.js"
[ "$(get /ui/lib/chart.js)" = 404 ] && grep -q "libjs-chart.js" "$tmp/b" &&
	ok "without the library: 404 saying to install libjs-chart.js" ||
	bad "without the library: 404 saying to install libjs-chart.js" "$tmp/b"
kill "$server"
wait "$server"
finish
