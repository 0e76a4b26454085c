#!/usr/bin/env bash
# A single-node SLURM cluster with accounting on this machine, to run the workflow through
# `snakemake --workflow-profile workflow/profiles/slurm` as on a real cluster (CI runs it so).
#
#   sudo scripts/slurm_cluster.sh install  # the Debian packages, if missing
#   sudo scripts/slurm_cluster.sh start    # install if missing, configure, start (idempotent)
#   scripts/slurm_cluster.sh status        # daemons, partitions, node, accounts
#   sudo scripts/slurm_cluster.sh stop
#
# Debian/Ubuntu, as root, without systemd (containers, CI): the daemons are started directly.
# What it sets up, and what a cluster's admin does instead:
# - munge authenticates the daemons and commands. Here: the key the package made. A cluster
#   shares one key across all nodes.
# - MariaDB + slurmdbd keep the accounting the SLURM executor plugin reads job states from
#   (`sacct`). Here: a local database with a generated password. A cluster has one slurmdbd
#   for all its clusters, on its own host.
# - slurmctld schedules; slurmd runs the jobs on the one node, sized from `slurmd -C` (this
#   machine's CPUs and memory). A cluster has many nodes, grouped in node sets.
# - Two partitions on the one node: `cpu` (the default) and `gpu`. With no GPU here, the GPUs
#   are a fake generic resource (GRES) `gpu` of SLURM_FAKE_GPUS units (default 2) whose device
#   files are null devices, so `--gpus=N` is scheduled and accounted like on GPU nodes; nothing
#   runs on a GPU. A cluster declares its real GPUs in gres.conf (`AutoDetect=nvml`) and puts
#   only GPU nodes in its GPU partitions.
# - Accounting: cluster `selfreflect`, account `selfreflect`, the calling user in it as its
#   default account. A cluster's admin gives each user their accounts (`sacctmgr add user`);
#   the account goes into the profile as `slurm_account`.
# - Root runs it all and jobs run as the submitting user without cgroups (proctrack/linuxproc,
#   task/none): memory is scheduled but not enforced. A cluster uses cgroups to confine jobs.
set -euo pipefail

CLUSTER=selfreflect
ACCOUNT=selfreflect
FAKE_GPUS=${SLURM_FAKE_GPUS:-2}
CONF=/etc/slurm
STATE=/var/lib/slurm
LOGS=/var/log/slurm
RUN=/run/slurm
DB_PASSWORD_FILE=$CONF/.dbpass
PACKAGES=(munge slurmctld slurmd slurmdbd slurm-client mariadb-server)

log() { echo "slurm_cluster: $*" >&2; }

install_packages() {
  local cmd missing=0
  for cmd in munged slurmctld slurmd slurmdbd sbatch sacct mariadbd; do
    command -v $cmd >/dev/null || missing=1
  done
  ((missing)) || return 0
  log "installing ${PACKAGES[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
}

# slurm.conf for this machine: one node with the CPUs and memory `slurmd -C` finds.
write_config() {
  local host node cpus mem
  host=$(hostname -s)
  node=$(slurmd -C | head -1)  # NodeName=<host> CPUs=.. Boards=.. ... RealMemory=..
  cpus=$(grep -oP 'CPUs=\K\d+' <<<"$node")
  mem=$(grep -oP 'RealMemory=\K\d+' <<<"$node")
  mkdir -p "$CONF" "$STATE/slurmctld" "$STATE/slurmd" "$LOGS" "$RUN"
  chown slurm:slurm "$STATE/slurmctld" "$LOGS" "$RUN"
  cat >"$CONF/slurm.conf" <<EOF
# Written by scripts/slurm_cluster.sh
ClusterName=$CLUSTER
SlurmctldHost=$host
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((mem / cpus))
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment  # sacct shows the rule and wildcards the plugin puts there
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none
MinJobAge=300
$node Gres=gpu:$FAKE_GPUS State=UNKNOWN
PartitionName=cpu Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=$host MaxTime=INFINITE State=UP
EOF
  mkdir -p "$STATE/fake-gpus"
  for ((i = 0; i < FAKE_GPUS; i++)); do
    [[ -c $STATE/fake-gpus/gpu$i ]] || mknod -m 666 "$STATE/fake-gpus/gpu$i" c 1 3  # /dev/null
  done
  echo "NodeName=$host Name=gpu File=$STATE/fake-gpus/gpu[0-$((FAKE_GPUS - 1))]" \
    >"$CONF/gres.conf"
  [[ -s $DB_PASSWORD_FILE ]] || (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=' \
    >"$DB_PASSWORD_FILE")
  (umask 077 && cat >"$CONF/slurmdbd.conf" <<EOF
# Written by scripts/slurm_cluster.sh
AuthType=auth/munge
DbdHost=localhost
SlurmUser=slurm
PidFile=$RUN/slurmdbd.pid
LogFile=$LOGS/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$(cat "$DB_PASSWORD_FILE")
StorageLoc=slurm_acct_db
EOF
  )
  chown slurm:slurm "$CONF/slurmdbd.conf"
}

running() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_for() {  # wait_for <what> <command...>: up to 60 s
  local what=$1
  shift
  for _ in $(seq 120); do
    "$@" >/dev/null 2>&1 && return
    sleep 0.5
  done
  log "$what did not come up; see $LOGS/"
  exit 1
}

start_munge() {
  mkdir -p /run/munge && chown munge:munge /run/munge
  running /run/munge/munged.pid || runuser -u munge -- munged
  wait_for munge bash -c 'munge -n | unmunge'
}

start_database() {
  mkdir -p /run/mysqld /var/log/mysql && chown mysql:mysql /run/mysqld /var/log/mysql
  if ! mariadb-admin ping --silent &>/dev/null; then
    (mariadbd-safe --skip-syslog --log-error=/var/log/mysql/error.log >/dev/null 2>&1 &)
    wait_for MariaDB mariadb-admin ping --silent
  fi
  mariadb <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$(cat "$DB_PASSWORD_FILE")';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF
}

start_slurmdbd() {
  running $RUN/slurmdbd.pid || slurmdbd
  wait_for slurmdbd sacctmgr -nP list cluster
}

# Cluster, account and the calling user in it (an admin's `sacctmgr` work on a real cluster).
add_associations() {
  local user=${SUDO_USER:-$(id -un)}
  sacctmgr -nP list cluster format=cluster | grep -qw $CLUSTER \
    || sacctmgr -i add cluster $CLUSTER >/dev/null
  sacctmgr -nP list account format=account | grep -qw $ACCOUNT \
    || sacctmgr -i add account $ACCOUNT Cluster=$CLUSTER Description=workflow \
      Organization=selfreflect >/dev/null
  sacctmgr -nP list associations user="$user" account=$ACCOUNT format=user | grep -qw "$user" \
    || sacctmgr -i add user "$user" Account=$ACCOUNT >/dev/null
  sacctmgr -i modify user "$user" set DefaultAccount=$ACCOUNT >/dev/null || true  # unchanged: 1
}

start_slurm() {
  if running $RUN/slurmctld.pid; then
    scontrol reconfigure  # picks up the configuration just written
  else
    slurmctld
  fi
  wait_for slurmctld scontrol ping
  running $RUN/slurmd.pid || slurmd
  # A node drained by an earlier configuration stays drained in the saved state: resume it.
  sinfo -h -N -o %t | grep -qE '^(drain|down|inval)' \
    && scontrol update NodeName="$(hostname -s)" State=RESUME
  wait_for "the node" bash -c "sinfo -h -N -o %t | grep -qE '^(idle|mix|alloc)\$'"
}

start() {
  [[ $(id -u) == 0 ]] || { log "start needs root"; exit 1; }
  install_packages
  write_config
  start_munge
  start_database
  start_slurmdbd
  add_associations
  start_slurm
  status
}

stop_daemon() {  # stop_daemon <pidfile>
  running "$1" || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid"
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
}

stop() {
  stop_daemon $RUN/slurmd.pid
  stop_daemon $RUN/slurmctld.pid
  stop_daemon $RUN/slurmdbd.pid
  mariadb-admin ping --silent &>/dev/null && mariadb-admin shutdown
  stop_daemon /run/munge/munged.pid
}

status() {
  scontrol ping
  sinfo -o "%P %a %D %t %c %m %G"
  sacctmgr -nP list associations format=cluster,account,user
}

case ${1:-} in
  install) install_packages ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
