#!/bin/sh
# test-console.sh — the web console (ui/, docs/console.md) end to end, in
# Debian's headless Chromium driven by puppeteer-core (console.mjs): a
# real `gpupool server --with-agent --tcp PORT` on the demo's simulated
# cards (2 x A100, 2 x T4, 2 x Ascend 910B), two tenants with quotas, a
# template, running tasks, a queued one, a failed one. console.mjs signs
# in as tenant alpha and as the admin, checks each page from what it
# shows, submits a task from the form, changes its share live, is refused
# beta's task, cancels, and downloads the bill; this script checks what
# lies outside the browser: the share in the shim's region (gpupool
# region ls), the CSV byte for byte against `gpupool bill -o csv`, and a
# template's YAML against `gpupool template show -o yaml`; the tenant
# token the console rotated (the old one refused, the new one good), the
# advice it applied (`gpupool advise --apply` finds it there) and its
# what-if replay against `gpupool sim --history`. Screenshots of every
# page go to SHOTS (the build folder's console/).
# usage: test-console.sh PATH/TO/gpupool PATH/TO/gpuload SHOTS
# CONSOLE_CHART_JS=PATH serves that as the charting library instead of
# Debian's (a path that does not exist: the pages without it).
# Skips (77) without chromium, node or tests/console/node_modules
# (scripts/install-deps.sh installs them).
set -u
gp=$1
gl=$2
shots=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ] || ! command -v node >/dev/null 2>&1 ||
	[ ! -d "$here/node_modules/puppeteer-core" ]; then
	echo "SKIP the console test needs $chromium, node and tests/console/node_modules (scripts/install-deps.sh)"
	exit 77
fi

. "$here/../lib.sh"
export GPUPOOL_SIM_DEVICES=a100-80g:2,t4-16g:2,ascend-910b-64g:2
. "$here/../server/agent-lib.sh"

# free_port: a TCP port nothing listens on, from this test's pid, outside
# 20000-28000 (which other tests use).
free_port() {
	port=$((30000 + $$ % 20000))
	while ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; do port=$((port + 1)); done
	echo "$port"
}
port=$(free_port)
url=http://127.0.0.1:$port
server_start --tcp "$port" --ui-dir "$top/ui" ${CONSOLE_CHART_JS:+--ui-chart-js "$CONSOLE_CHART_JS"} \
	--sample-ms 1000 --util-window 2 --grace-ms 1000 \
	--price A100=2.50 --price T4=0.35 --price Ascend=1.80 || { finish; exit 1; }
expect "the console's page is served on TCP" 0 'gpupool console' -- curl -sf "$url/ui/"

# ---- the pool: tenants, a template, tasks --------------------------------------
admin=$(cat "$GPUPOOL_TOKEN_FILE")
alpha=$("$gp" tenant add alpha --mem-guaranteed 16G --compute-guaranteed 100 --priority-max 6 \
	--mem-borrowable 16G --compute-borrowable 100 2>/dev/null)
beta=$("$gp" tenant add beta --mem-guaranteed 8G --compute-guaranteed 50 2>/dev/null)
"$gp" tenant quota alpha A100 --mem-guaranteed 8G --compute-guaranteed 60 >/dev/null
"$gp" template add infer-2g --mem 2G --compute 25 --models A100 --isolation shared >/dev/null
alpha_task=$(as "$alpha" submit -q --name alpha-serve --template infer-2g -- sleep 300)
beta_task=$(as "$beta" submit -q --name beta-train --mem 6G --compute 45 --model T4 -- sleep 300)
failed_task=$(as "$beta" submit -q --name beta-fails --mem 1G --compute 5 --model T4 -- \
	sh -c 'echo "loss went NaN at step 7"; exit 3')
stuck_task=$("$gp" submit -q --name waits --mem 1G --compute 10 --model H100 --await-cards -- true)
# A process on a card that belongs to no task (run here, outside the
# server): the verifier's critical alert, which the alerts page shows.
"$gl" alloc --mib 256 --hold 120 >/dev/null 2>&1 &
stray=$!
wait_for "alpha's task runs" 10 "$alpha_task" '.state == "running"'
wait_for "beta's task runs" 10 "$beta_task" '.state == "running"'
wait_for "beta's other task fails" 10 "$failed_task" '.state == "failed"'

# ---- the browser -----------------------------------------------------------------
mkdir -p "$shots" "$tmp/downloads"
rm -f "$shots"/*.png
jq -n --arg url "$url" --arg admin "$admin" --arg alpha "$alpha" --arg chromium "$chromium" \
	--argjson alphaTask "$alpha_task" --argjson betaTask "$beta_task" --argjson failedTask "$failed_task" \
	--arg gpuload "$gl" --arg shots "$shots" --arg tmp "$tmp" '{url: $url, admin: $admin, alpha: $alpha,
	 chromium: $chromium, alphaTask: $alphaTask, betaTask: $betaTask, failedTask: $failedTask,
	 gpuload: $gpuload, template: "infer-2g", shots: $shots, downloads: ($tmp + "/downloads"),
	 liveFile: ($tmp + "/live.json"), regionDone: ($tmp + "/region.done"), yaml: ($tmp + "/ui.yaml"),
	 bill: ($tmp + "/bill.json"), counts: ($tmp + "/counts"), tokens: ($tmp + "/tokens.json"),
	 whatif: ($tmp + "/whatif.json")}' >"$tmp/config.json"
node "$here/console.mjs" "$tmp/config.json" &
browser=$!

# The live change: once the console made it, it is in the shim's region.
for _ in $(seq 900); do
	[ -f "$tmp/live.json" ] || ! kill -0 "$browser" 2>/dev/null && break
	sleep 0.1
done
if [ -f "$tmp/live.json" ]; then
	live=$(jq -r .task "$tmp/live.json")
	compute=$(jq -r .compute "$tmp/live.json")
	eventually "the share changed in the console is in task $live's region ($compute %)" 5 \
		"$tmp/region.json" "[.devices[].tasks[] | select(.id == \"task-$live\") | .compute] == [$compute]" -- \
		"$gp" region ls --dir "$tmp/run" --json
else
	bad "the console made a live change (it wrote no $tmp/live.json)"
fi
touch "$tmp/region.done"
exited "the console's checks in Chromium passed" "$browser"
if [ -f "$tmp/counts" ]; then
	read -r browser_pass browser_fail <"$tmp/counts"
	pass=$((pass + browser_pass)) fail=$((fail + browser_fail))
fi

# ---- what the browser saved ----------------------------------------------------
if [ -f "$tmp/bill.json" ] && [ "$(jq -r .file "$tmp/bill.json")" != null ]; then
	month=$(jq -r .month "$tmp/bill.json")
	as "$admin" bill -o csv --month "$month" --tenant alpha >"$tmp/bill-cli.csv"
	if cmp -s "$(jq -r .file "$tmp/bill.json")" "$tmp/bill-cli.csv" &&
		grep -q '^alpha,NVIDIA A100' "$tmp/bill-cli.csv"; then
		ok "the downloaded CSV is what gpupool bill -o csv prints, byte for byte ($(wc -c <"$tmp/bill-cli.csv") bytes)"
	else
		bad "the downloaded CSV is what gpupool bill -o csv prints, byte for byte" \
			"$(jq -r .file "$tmp/bill.json")" "$tmp/bill-cli.csv"
	fi
else
	bad "the console downloaded a bill"
fi
"$gp" template show infer-2g -o yaml >"$tmp/cli.yaml"
if [ -s "$tmp/ui.yaml" ] && cmp -s "$tmp/ui.yaml" "$tmp/cli.yaml"; then
	ok "a template's YAML in the console is gpupool template show -o yaml's"
else
	bad "a template's YAML in the console is gpupool template show -o yaml's" "$tmp/ui.yaml" "$tmp/cli.yaml"
fi
expect "the template made in the console is the server's" 0 'ui-made +6G +40% shared +T4' -- "$gp" template ls

# ---- the platform's pages, from outside ----------------------------------------------
if [ -f "$tmp/tokens.json" ]; then
	expect "gamma's first token, rotated in the console, is refused" 1 'unknown token' -- \
		as "$(jq -r .old "$tmp/tokens.json")" task ls
	expect "... and the one the console showed works" 0 'ID|no task' -- \
		as "$(jq -r .new "$tmp/tokens.json")" task ls
else
	bad "the console rotated a tenant's token (it wrote no $tmp/tokens.json)"
fi
expect "the console's Apply did what gpupool advise --apply does: infer-2g.v2 is there" 0 \
	'template infer-2g.v2: already there' -- "$gp" advise --apply
if [ -f "$tmp/whatif.json" ]; then
	"$gp" sim --history --add-cards T4=1 -o json >"$tmp/whatif-cli.json" 2>&1
	check "the What-if page showed what gpupool sim --history prints (cards, tasks placed)" \
		'.[0].cards.variant == .[1].variant.cards and .[0].cards.recorded == .[1].recorded.cards and
		 .[0].placed == .[1].recorded.placed' "$tmp/whatif.json" "$tmp/whatif-cli.json"
else
	bad "the What-if page replayed the month (it wrote no $tmp/whatif.json)"
fi
n=$(find "$shots" -name '*.png' | wc -l)
[ "$n" -ge 20 ] && ok "$n screenshots in $shots" || bad "screenshots in $shots: $n, want 20 or more"

"$gp" task cancel "$beta_task" "$stuck_task" >/dev/null 2>&1
kill "$stray" 2>/dev/null
finish
