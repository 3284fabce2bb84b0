# demo-report.jq — the report of scripts/demo.sh, from its samples (one JSON
# object per half second: the phase, `gpupool task ls -o json`, and NVML's
# devices as build/tests/nvml-probe prints them). Cards are named as the
# pool lists them, model and index ("A100 #0": --slurpfile cards, by UUID
# {label, vendor, index}). Per card and phase: the tasks it held, the most
# at once, NVML's physical utilization, the share allocated on it, and
# effective utilization (physical / allocated), the two read at the same
# sample; then sliced against whole cards; then the inference service's p99
# latency per window (gpuload serve results: --slurpfile lat_alone,
# lat_sliced and lat_whole, and warm_alone, warm_sliced and warm_whole,
# each phase's warm-up window, set aside; --arg window, their length in
# seconds): each phase's median and range, and comparisons of co-located
# with alone and of a whole card with co-located that say which is better
# only where the ranges do not overlap (--arg cores, load_start and
# load_end: the machine's; train_steps and train_rate: phase 2's training
# task's own figures). Last, the mixed pool (phase 4), per vendor, from the
# server's usage records of its tasks (--slurpfile mixed_tasks,
# mixed_usage: allocated and used device time over the same intervals;
# --arg sample_ms, the server's sampling period) and, on simulated cards,
# what the cards count having given out (busy_before, busy_after: µs by
# UUID; null elsewhere).
def mean: if length == 0 then 0 else add / length end;
def round1: . * 10 | round / 10;
def round2: . * 100 | round / 100;
def card_label($uuid): $cards[0][$uuid].label // $uuid;
def running: .tasks | map(select(.state == "running"));
def on($uuid): map(select((.placement // "") | split(",") | map(split("@")[0]) | index($uuid)));
def share: if .whole or .exclusive then 100 else .compute_pct end;
def phase($p): map(select(.phase == $p and .nvml != null));
def card($samples; $c):
	($samples | map(running | on($c.uuid))) as $per
	| { name: card_label($c.uuid),
	    tasks: ($per | add // [] | map(.name) | unique),
	    peak: ($per | map(length) | max // 0),
	    physical: ($samples | map(.nvml.devices[] | select(.uuid == $c.uuid) | .util_gpu)
	               | mean),
	    allocated: ($per | map(map(share) | add // 0) | mean) };
def stats($p):
	phase($p) as $s
	| { cards: [($s[0].nvml.devices // [])[] | card($s; .)],
	    peak_running: ($s | map(running | length) | max // 0),
	    seconds: (if ($s | length) > 0 then $s[-1].t - $s[0].t else 0 end) }
	| .physical = (.cards | map(.physical) | mean);
def ratio($a; $b): if $b > 0 then ($a / $b | round1 | tostring) + "x" else "-" end;
def median: sort | if length == 0 then null
	elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def us: if . == null then "-" else "\(round) us" end;
def p99s($w): $w | map(.p99_us) | map(select(. != null));
def spread($what; $w; $warm): p99s($w) as $p
	| "  \($what | . + " " * (36 - length)) " +
	  (if ($p | length) == 0 then "no window measured"
	   else "median \($p | median | us), range \($p | min | us) to \($p | max | us), " +
	        "\($p | length) window\(if ($p | length) == 1 then "" else "s" end) (\($p | map(round | tostring) | join(", ")))" end) +
	  (p99s($warm) | if length > 0 then "; warm-up \(.[0] | us)" else "" end);
def pct($a; $b): (($a / $b - 1) * 100 | round | if . >= 0 then "+\(.)" else "\(.)" end) + " %";
# verdict(NAME; WINDOWS; AGAINST; ITS WINDOWS): one phase's p99 against
# another's, only where every window of the one is above (or below) every
# window of the other.
def verdict($name; $w; $other; $ow): p99s($w) as $c | p99s($ow) as $a
	| "  \($name), against \($other): " +
	  if ($a | length) < 2 or ($c | length) < 2 then
		"too few windows to compare."
	  elif ($c | min) > ($a | max) then
		"the p99 was higher in every window (medians \(pct($c | median; $a | median)))."
	  elif ($c | max) < ($a | min) then
		"the p99 was lower in every window (medians \(pct($c | median; $a | median)))."
	  else
		"the ranges overlap: this run shows neither the better."
	  end;
# The mixed pool, per vendor: its tasks' usage records (each an interval
# of one task on one card: its share, and the device time the server
# metered its processes using), and the cards' own count.
def vendors:
	($mixed_tasks[0] // []) as $tasks
	| [($mixed_usage[0] // [])[]
	   | . + { vendor: ($cards[0][.device].vendor // "?"),
	           allocated_ms: ((.end_ms - .start_ms) * .compute_pct / 100) }]
	| group_by(.vendor)
	| map(.[0].vendor as $v | (map(.task) | unique) as $ids
	      | { vendor: $v, tasks: ($ids | length), on: (map(.device) | unique | length),
	          cards: ([$cards[0][] | select(.vendor == $v)] | length),
	          isolation: ([$tasks[] | select(.id | IN($ids[])) | .isolation] | unique),
	          allocated: (map(.allocated_ms) | add / 1000),
	          used: (map(.used_ms) | add / 1000),
	          own: (if $busy_after[0] == null then null
	                else [$busy_after[0] | to_entries[] | select($cards[0][.key].vendor == $v)
	                      | .value - ($busy_before[0][.key] // 0)] | add / 1e6 end) });
def of($a): if $a > 0 then " (\(. / $a * 100 | round) %)" else "" end;
def vendor_line: .allocated as $a
	| "  \(.vendor | . + " " * (8 - length)) \(.tasks) task\(if .tasks == 1 then "" else "s" end) " +
	"(\(.isolation | join(" and ")) isolation) on \(.on) of its \(.cards) cards: allocated " +
	"\($a | round2) s, used \(.used | round2) s\(.used | of($a))" +
	(if .own == null then "" else ", the cards' own count \(.own | round2) s\(.own | of($a))" end);
# What the numbers say of hard isolation (a share is a cap), by the cards'
# own count where there is one, else by the metering.
def vendor_verdict: (if .own == null then .used else .own end) as $got
	| (if .own == null then "by the server's metering" else "by the cards' own count" end) as $how
	| "  \(.vendor): " +
	  if .isolation != ["hard"] then
		"tasks in shared isolation may use more than their share (idle time lent)."
	  elif $got <= .allocated then
		"hard isolation held: \($how), its tasks used \($got / .allocated * 100 | round) % " +
		"of the device time allocated to them, not more (a share is a cap)."
	  else
		"\($how), its tasks used \($got / .allocated * 100 | round) % of the device time " +
		"allocated to them: more, though hard isolation makes a share a cap."
	  end;
def line: "  \(.name | .[0:14] | . + " " * (14 - length)) \(.peak) at once, physical " +
	"\(.physical | round1) %, allocated \(.allocated | round1) %, effective " +
	"\(if .allocated > 0 then (.physical / .allocated * 100 | round1 | tostring) + " %"
	  else "-" end)\n      held: \(.tasks | join(", "))";
stats("sliced") as $sliced | stats("whole") as $whole
| "Tasks per NVIDIA card while sliced (physical = NVML utilization; allocated = the shares of the tasks",
  "running on it, read at the same half-second samples; effective = physical / allocated, over 100 %",
  "when tasks in shared isolation borrow idle time):",
  ($sliced.cards[] | line),
  "Baseline, the same tasks on whole cards, one each (tenant baseline):",
  ($whole.cards[] | line),
  "Sliced vs whole cards, the same tasks: \($sliced.peak_running) ran at once instead of " +
  "\($whole.peak_running) (\(ratio($sliced.peak_running; $whole.peak_running))); all done in " +
  "\($sliced.seconds | round) s instead of \($whole.seconds | round) s; mean physical " +
  "utilization of the cards \($sliced.physical | round1) % instead of " +
  "\($whole.physical | round1) % (\(ratio($sliced.physical; $whole.physical)))",
  "The inference service's p99 latency, per \($window) s window (gpuload serve, 200 requests/s, " +
  "30 % of an A100, priority 8; in each phase a first window was set aside as a warm-up):",
  spread("alone"; $lat_alone; $warm_alone),
  spread("beside training and preprocessing"; $lat_sliced; $warm_sliced),
  spread("on a whole card (baseline)"; $lat_whole; $warm_whole),
  verdict("Beside training and preprocessing"; $lat_sliced; "alone"; $lat_alone),
  verdict("On a whole card"; $lat_whole; "beside training and preprocessing"; $lat_sliced),
  "  (this machine: \($cores) cores, load average \($load_start) at the start and \($load_end) at the " +
  "end; other work on it competes with the tasks for its CPUs" +
  (if $busy_after[0] == null then "" else ", on which the simulated devices run in the tasks' own processes" end) +
  ", and shows in the tails)",
  "The training task (phase 2): \($train_steps) steps at \($train_rate) steps/s, with 80 % then 60 % of " +
  "an A100 in shared isolation (a live change).",
  "The mixed pool (phase 4), per vendor: the device time its tasks were allocated (share x time)",
  "and what they used, both from the server's usage records of them (the same intervals; the",
  "server samples every \($sample_ms | tonumber / 1000) s here)" +
  (if $busy_after[0] == null then ":" else ", and what the simulated cards count having given out" end),
  (if $busy_after[0] == null then empty
   else "over the phase (simdev's own record):" end),
  (vendors[] | vendor_line),
  (vendors[] | vendor_verdict)
