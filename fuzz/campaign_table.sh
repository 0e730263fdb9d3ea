#!/bin/bash
# The results of fuzz/campaign.sh runs as one markdown table (fuzz/README.md,
# "Results"): a row per harness and implementation, its campaigns summed.
#   fuzz/campaign_table.sh [CAMPAIGN_DIR]   (default ~/.cache/tvm-ffi-conformance/campaign)
dir=${1:-${TVMFFI_CONFORMANCE_CACHE:-$HOME/.cache/tvm-ffi-conformance}/campaign}
echo "| harness | implementation | CPU s | wall s | executions | exec/CPU s | cov (edges) | features | corpus | crashes | ooms | timeouts | first finding (CPU s) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for f in "$dir"/*/results.tsv; do
  [ -f "$f" ] || continue
  awk -F'\t' -v run="$(basename "$(dirname "$f")")" '
    { cpu += $4; wall += $14; ex += $5; cov = $7; ft = $8; corp = $9; cr += $10; oom += $11; to += $12
      if (first == "" && $13 != "-") first = prior + $13
      prior += $4; h = $2; impl = $3 }
    END { tag = run; sub("^" h "-", "", tag)
          printf "| %s | %s | %d | %s | %d | %d | %s | %s | %s | %d | %d | %d | %s |\n",
                 h, tag, cpu, wall ? wall : "?", ex, cpu ? ex / cpu : 0, cov, ft, corp, cr, oom, to, first == "" ? "-" : first }' "$f"
done
