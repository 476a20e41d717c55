# shellcheck shell=bash disable=SC2034 # its variables are read by the scripts that source it
# Sourced by the scripts beside it: where the one-node CI cluster lives.
# Everything it makes (munge key and socket, Slurm state, spool, logs, pid
# files, the sweep's files) is under one directory, so a run leaves nothing
# behind when it is removed, and a killed run's daemons can be found by it:
# they are the only processes whose command line names it.
AISIM_SLURM_ROOT=${AISIM_SLURM_ROOT:-${TMPDIR:-/tmp}/aisim-slurm-ci}
export SLURM_CONF=$AISIM_SLURM_ROOT/etc/slurm.conf
# The marker of the cluster's processes (see slurm_cluster_pids): set only on
# what the cluster runs, never inherited by these scripts' own helpers.
unset AISIM_SLURM_CLUSTER
MUNGE_SOCKET=$AISIM_SLURM_ROOT/munge/munge.socket
# Not Slurm's default ports (6817, 6818), so a machine's own Slurm is left alone.
SLURMCTLD_PORT=${SLURMCTLD_PORT:-16817}
SLURMD_PORT=${SLURMD_PORT:-16818}

slurm_log() { echo "slurm-ci: $*" >&2; }

# The pids of the processes that belong to this cluster: those whose
# environment has AISIM_SLURM_CLUSTER=ROOT (the daemons, which `up` starts
# with it, slurmstepd, which slurmd forks, and the jobs, which `roundtrip`
# submits with it) or whose command line names the root,
# less this script and its ancestors. Read with builtins only, so no helper
# process of the scan itself matches.
slurm_cluster_pids() {
    local keep=" " p pid ppid rest arg
    pid=$BASHPID
    while [ "$pid" -gt 1 ] 2>/dev/null; do
        keep+="$pid "
        read -r _ rest <"/proc/$pid/stat" || break
        rest=${rest##*) }
        read -r _ ppid _ <<<"$rest"
        pid=$ppid
    done
    for p in /proc/[0-9]*; do
        pid=${p#/proc/}
        [[ $keep == *" $pid "* ]] && continue
        {
            while IFS= read -r -d '' arg; do
                if [[ $arg == "AISIM_SLURM_CLUSTER=$AISIM_SLURM_ROOT" ]]; then echo "$pid"; continue 2; fi
            done <"$p/environ"
            while IFS= read -r -d '' arg; do
                if [[ $arg == *"$AISIM_SLURM_ROOT/"* ]]; then echo "$pid"; continue 2; fi
            done <"$p/cmdline"
        } 2>/dev/null
    done
}
