#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cluster path on a real single-node Slurm cluster: starts munged, slurmctld and slurmd on
# this machine (their own key, socket, ports, state and logs under a temporary directory;
# proctrack/linuxproc and task/none, so no cgroups), submits scripts/slurm/summarize.sbatch as
# an array over 64 generated rank traces and reduce.sbatch after it (--dependency=afterok),
# and checks the reduced report equals `tracedoc diagnose DIR` on the same files, in every
# format. Stops the daemons it started, by their pid. Skips (77) without Slurm or munge.
# usage: slurm_test.sh TRACEDOC GEN_TRACE REPO_ROOT
set -u
bin=$(realpath "$1")
gen=$(realpath "$2")
root=$(realpath "$3")
for c in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol; do
	if ! command -v $c >/dev/null 2>&1 && [ ! -x /usr/sbin/$c ]; then
		echo "SKIPPED: $c not found (scripts/setup.sh --test installs slurm-wlm and munge)"
		exit 77
	fi
done
PATH=$PATH:/usr/sbin
tmp=$(mktemp -d /tmp/tracedoc-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
stop() {
	local p
	for p in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munged.pid; do
		[ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	sleep 1
	for p in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munged.pid; do
		[ -s "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null
	done
	if [ "${fail:-1}" != 0 ]; then
		for l in "$tmp"/*.log; do echo "--- $l"; tail -20 "$l"; done
	fi
	rm -rf "$tmp"
}
trap stop EXIT
fail=1
die() { echo "FAIL: $*"; exit 1; }

# munge: a key of our own, on our own socket
mkdir -p "$tmp/munge" && chmod 700 "$tmp/munge"
mungekey -c -k "$tmp/munge/munge.key" -b 1024 >/dev/null 2>&1 ||
	dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge/munge.key"
munged -f --socket="$tmp/munge/munge.sock" --key-file="$tmp/munge/munge.key" \
	--pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" ||
	die "munged did not start"

# two free ports near 17000 (another Slurm may own 6817/6818)
port() {
	local p
	for p in $(seq "$1" $(($1 + 200))); do
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo $p; return; fi
	done
}
cport=$(port $((17000 + RANDOM % 1000)))
dport=$(port $((cport + 1)))
host=$(hostname -s)
cpus=$(nproc)
mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=tracedoc-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -i -f "$tmp/slurm.conf" || die "slurmctld did not start"
slurmd -f "$tmp/slurm.conf" || die "slurmd did not start"
for i in $(seq 60); do
	state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
	case $state in idle*|mix*|alloc*) break ;; esac
	sleep 1
done
case $state in idle*|mix*|alloc*) ;; *) die "the node is '$state', not idle, after 60 s" ;; esac

# 64 ranks, rank 41 late by 2 ms a step
mkdir "$tmp/ranks" "$tmp/sums" "$tmp/work"
"$gen" --ranks 64 --straggler 41 --delay 2 --steps 4 --ops 30 -o "$tmp/ranks" || die "gen_trace"
rm "$tmp/ranks/truth.txt"
cd "$tmp/work" || die "cd"
export TRACEDOC=$bin
jid=$(sbatch --parsable --array=0-7 "$root/scripts/slurm/summarize.sbatch" "$tmp/ranks" \
	"$tmp/sums") || die "sbatch of the array"
rid=$(sbatch --parsable --dependency=afterok:$jid "$root/scripts/slurm/reduce.sbatch" \
	"$tmp/sums" "$tmp/report") || die "sbatch of the reduce"
for i in $(seq 300); do
	[ -z "$(squeue -h -j "$jid,$rid" 2>/dev/null)" ] && break
	sleep 1
done
[ -z "$(squeue -h -j "$jid,$rid" 2>/dev/null)" ] || die "the jobs did not finish in 300 s"
cat "$tmp/work"/*.out
state=$(scontrol show job "$rid" 2>/dev/null | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
[ "$state" = COMPLETED ] || die "the reduce job ended $state"
[ "$(ls "$tmp/sums" | wc -l)" = 64 ] || die "$(ls "$tmp/sums" | wc -l) summaries, not 64"

# the cluster's report is the one-machine report
pass=0
for fmt in text md json; do
	ext=$fmt
	[ $fmt = text ] && ext=txt
	"$bin" diagnose "$tmp/ranks" --format $fmt >"$tmp/one.$ext"
	if cmp -s "$tmp/one.$ext" "$tmp/report.$ext"; then
		pass=$((pass + 1))
	else
		diff "$tmp/one.$ext" "$tmp/report.$ext" | head -20
		die "the reduced $fmt report differs from tracedoc diagnose DIR"
	fi
done
grep -q "Rank 41 holds up the job" "$tmp/report.txt" || die "the straggler is not rank 41"
fail=0
echo "slurm test: $pass reports equal, 64 ranks summarized by an 8-task array on $host"
