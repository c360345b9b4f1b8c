#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for tests/workflow/test_slurm.py (run as root, Debian):
#
#   tests/workflow/slurm/local_slurm.sh start STATE_DIR   # install slurm-wlm + munge if missing, start
#   tests/workflow/slurm/local_slurm.sh stop STATE_DIR    # stop the daemons it started, remove its config
#
# It writes /etc/slurm/slurm.conf and gres.conf (the plugin's job steps drop SLURM_CONF, so
# the config must be at the default path; it refuses to replace a config it did not write) and
# everything else under STATE_DIR: munge key and socket, spool, state, logs, pid files.
# The node advertises two GPUs backed by null devices: SLURM schedules `--gpus` requests and
# sets CUDA_VISIBLE_DEVICES as on a real GPU node, and torch, finding no CUDA, runs on CPU.
set -euo pipefail

action=${1:?usage: $0 start|stop STATE_DIR}
state=$(realpath -m "${2:?usage: $0 start|stop STATE_DIR}")

stop() {
  for daemon in slurmd slurmctld munged; do
    if [[ -s $state/$daemon.pid ]]; then
      pid=$(cat "$state/$daemon.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do  # gone (or a zombie of our caller) within 5 s
        [[ $(ps -o stat= -p "$pid" 2>/dev/null) =~ ^[^Z] ]] || break
        sleep 0.1
      done
      rm -f "$state/$daemon.pid"
    fi
  done
}

marker="# written by oscbo's tests/workflow/slurm/local_slurm.sh"
if [[ $action == stop ]]; then
  stop
  for conf in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
    if [[ -e $conf ]] && grep -qxF "$marker" "$conf"; then rm "$conf"; fi
  done
  exit 0
fi
[[ $action == start ]] || { echo "unknown action $action (start or stop)" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

stop  # a previous run's daemons, if any
mkdir -p "$state"/{spool,ctld,gpu}
chmod 700 "$state"
node=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
for gpu in 0 1; do  # character devices, as slurmd requires; these behave as /dev/null
  [[ -c $state/gpu/nvidia$gpu ]] || mknod "$state/gpu/nvidia$gpu" c 1 3
done

if [[ ! -s $state/munge.key ]]; then
  dd if=/dev/urandom of="$state/munge.key" bs=1024 count=1 status=none
  chmod 400 "$state/munge.key"
fi
munged --force --key-file="$state/munge.key" --socket="$state/munge.socket" \
  --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munged.seed"

conf=/etc/slurm/slurm.conf
if [[ -e $conf ]] && ! grep -qxF "$marker" "$conf"; then
  echo "$conf exists and was not written by this script: not replacing a real cluster's config" >&2
  exit 1
fi
mkdir -p /etc/slurm
cat >/etc/slurm/gres.conf <<CONF
$marker
NodeName=$node Name=gpu File=$state/gpu/nvidia[0-1]
CONF
cat >"$conf" <<CONF
$marker
ClusterName=oscbo-test
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge.socket
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=3600
GresTypes=gpu
NodeName=$node CPUs=$cpus RealMemory=$memory Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld
slurmd
for _ in $(seq 60); do
  if [[ $(sinfo -h -o %t 2>/dev/null) == idle ]]; then
    sinfo
    exit 0
  fi
  sleep 1
done
echo "the node did not come up; logs in $state" >&2
tail -n 20 "$state"/slurmctld.log "$state"/slurmd.log "$state"/munged.log >&2 || true
exit 1
