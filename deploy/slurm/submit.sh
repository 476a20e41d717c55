#!/usr/bin/env bash
# Submits an aisim sweep to Slurm: a job array of SHARDS tasks over PLAN
# (sweep.sbatch), then a merge job (merge.sbatch) that starts only once every
# task has succeeded. Prints both job ids:
#
#   sweep_job=ID
#   merge_job=ID
#
#   deploy/slurm/submit.sh PLAN DIR SHARDS [RESULTS]
#
# PLAN, DIR and RESULTS (default DIR/results.jsonl, the file a single
# `sweep run` of the whole plan writes) must be on a filesystem every node
# sees. Environment:
#   AISIM          the aisim binary on the nodes (default: `aisim` on PATH)
#   CPUS_PER_TASK  CPUs, hence threads, of each array task (default 1)
#   SLURM_LOGS     where the jobs' logs go (default DIR/slurm-logs)
#   SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...: read by sbatch
#                  itself, for both jobs
set -euo pipefail

usage() {
    echo "usage: $0 PLAN DIR SHARDS [RESULTS]" >&2
    exit 2
}
if [ "$#" -lt 3 ] || [ "$#" -gt 4 ]; then usage; fi

here=$(cd "$(dirname "$0")" && pwd)

# whole NAME VALUE: VALUE as a number in 1 ..= 999999999, or exit 2 naming NAME
# (at most 9 digits, so the shell's arithmetic cannot wrap).
whole() {
    case $2 in
    '' | *[!0-9]* | ??????????*) ;;
    *) if [ "$((10#$2))" -ge 1 ]; then echo "$((10#$2))"; return; fi ;;
    esac
    echo "error: $1 '$2': not a whole number in 1 ..= 999999999" >&2
    exit 2
}
shards=$(whole SHARDS "$3")
cpus=$(whole CPUS_PER_TASK "${CPUS_PER_TASK:-1}")
plan=$1
if [ ! -f "$plan" ] || [ ! -r "$plan" ]; then
    echo "error: PLAN $plan: not a readable file (write it with \`aisim sweep plan GRID --out PLAN\`)" >&2
    exit 2
fi
runs=$(grep -c . -- "$plan" || true)
if [ "$shards" -gt "$runs" ]; then
    # More tasks than runs would only queue tasks with nothing to do.
    echo "error: SHARDS $shards: more than the $runs runs in $plan (use 1 ..= $runs)" >&2
    exit 2
fi
# Absolute paths: a job may start on a node whose working directory differs.
plan=$(realpath -- "$plan")
mkdir -p -- "$2"
dir=$(realpath -- "$2")
results=$(realpath -m -- "${4:-$dir/results.jsonl}")
logs=${SLURM_LOGS:-$dir/slurm-logs}
mkdir -p -- "$logs"

# --parsable prints "ID" or "ID;CLUSTER".
sweep_job=$(sbatch --parsable --array="0-$((shards - 1))" --cpus-per-task="$cpus" \
    --output="$logs/sweep-%A_%a.out" \
    "$here/sweep.sbatch" "$plan" "$dir")
sweep_job=${sweep_job%%;*}
# afterok on an array job waits for all its tasks; if one fails for good the
# merge is cancelled instead of pending forever (--kill-on-invalid-dep).
merge_job=$(sbatch --parsable --dependency="afterok:$sweep_job" --kill-on-invalid-dep=yes \
    --output="$logs/merge-%j.out" \
    "$here/merge.sbatch" "$dir" "$results")
merge_job=${merge_job%%;*}

echo "sweep_job=$sweep_job"
echo "merge_job=$merge_job"
