# demo-report.jq — the report of scripts/demo.sh, from its samples (one JSON
# object per half second: the phase, `gpupool task ls -o json`, and NVML's
# devices as build/tests/nvml-probe prints them). Per card and phase: the
# tasks it held, the most at once, NVML's physical utilization, the share
# allocated on it, and effective utilization (physical / allocated); then
# sliced against whole cards; then the inference service's p99 latency per
# window (gpuload serve results: --slurpfile lat_alone, lat_sliced and
# lat_whole; --arg window, their length in seconds): each phase's median
# and range, and a comparison of alone and co-located only where the
# ranges do not overlap. Last, the mixed pool (phase 4), per vendor, from
# the server's view of every vendor's devices (`gpupool device ls`).
def mean: if length == 0 then 0 else add / length end;
def round1: . * 10 | round / 10;
def running: .tasks | map(select(.state == "running"));
def on($uuid): map(select((.placement // "") | split(",") | index($uuid)));
def share: if .whole or .exclusive then 100 else .compute_pct end;
def phase($p): map(select(.phase == $p and .nvml != null));
def card($samples; $c):
	($samples | map(running | on($c.uuid))) as $per
	| { name: $c.name,
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
def spread($what; $w): p99s($w) as $p
	| "  \($what | . + " " * (36 - length)) " +
	  (if ($p | length) == 0 then "no window measured"
	   else "median \($p | median | us), range \($p | min | us) to \($p | max | us), " +
	        "\($p | length) window\(if ($p | length) == 1 then "" else "s" end) (\($p | map(round | tostring) | join(", ")))" end);
def pct($a; $b): (($a / $b - 1) * 100 | round | if . >= 0 then "+\(.)" else "\(.)" end) + " %";
def verdict($alone; $co): p99s($alone) as $a | p99s($co) as $c
	| if ($a | length) < 2 or ($c | length) < 2 then
		"  Too few windows to compare alone and co-located."
	  elif ($c | min) > ($a | max) then
		"  Co-located, the p99 was above alone's in every window (medians \(pct($c | median; $a | median)))."
	  elif ($c | max) < ($a | min) then
		"  Co-located, the p99 was below alone's in every window (medians \(pct($c | median; $a | median)))."
	  else
		"  The two ranges overlap: this run does not show the co-located p99 better or worse than alone."
	  end;
def vendors($p): map(select(.phase == $p)) as $s
	| [$s[].devices[]] | group_by(.vendor)
	| map({ vendor: .[0].vendor, cards: (map(.uuid) | unique | length),
		physical: (map(.utilization_pct // 0) | mean),
		allocated: (map(.allocated_compute_pct // 0) | mean) });
def vendor_line: "  \(.vendor | . + " " * (10 - length)) \(.cards) cards, physical " +
	"\(.physical | round1) %, allocated \(.allocated | round1) %";
def line: "  \(.name | .[0:22] | . + " " * (22 - length)) \(.peak) at once, physical " +
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
  "30 % of an A100, priority 8):",
  spread("alone"; $lat_alone),
  spread("beside training and preprocessing"; $lat_sliced),
  spread("on a whole card (baseline)"; $lat_whole),
  verdict($lat_alone; $lat_sliced),
  "The mixed pool (phase 4), per vendor: mean physical utilization and share allocated of its cards",
  "(every vendor's cards as the server sees them; the bill below is per tenant, model and vendor):",
  (vendors("mixed")[] | vendor_line)
