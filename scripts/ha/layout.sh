#!/usr/bin/env bash
# The production database layout of docs/operations.md on one machine: one etcd, two PostgreSQL
# members (a primary and a synchronous standby) managed by Patroni, HAProxy in front routing to the
# current primary through Patroni's REST health check, PgBouncer in front of HAProxy pooling the
# application's connections (transaction mode), and pgBackRest archiving the WAL. Each
# "machine" is a set of ports and a directory under HA_DIR; nothing outside HA_DIR is written, and
# the machine's own PostgreSQL, etcd or HAProxy (default ports) are never touched.
#
# Locked down as on three machines (docs/operations.md): passwords generated at `up` into
# HA_DIR/credentials (owned by postgres, mode 600), pg_hba peer on the machine and scram-sha-256
# on the network, Patroni's REST API over TLS with a password for its actions, etcd over TLS
# taking only clients with a certificate of the layout's CA (HA_DIR/tls, scripts/ha/certs.sh).
# The application's role is `app` (it may create databases, for tests and benchmarks).
#
#   scripts/ha/layout.sh up            start everything, wait until the standby is synchronous
#   scripts/ha/layout.sh down          stop everything it started (also after a failed up), remove HA_DIR
#                                      (HA_KEEP_LOGS=dir copies the logs there first)
#   scripts/ha/layout.sh status        the members, their roles and HAProxy's view
#   scripts/ha/layout.sh backup [full|diff|incr]   a pgBackRest backup from the current primary
#   scripts/ha/layout.sh start NAME    start one component again: etcd, haproxy, pgbouncer, pg1, pg2
#   scripts/ha/layout.sh stop NAME     SIGKILL one component (and, for pg1/pg2, its PostgreSQL): a machine lost
#   scripts/ha/layout.sh single up|down   a lone PostgreSQL with the members' settings, for comparison
#   scripts/ha/layout.sh restore TARGET_TIME DIR PORT   point-in-time restore into DIR, started on PORT
#   scripts/ha/layout.sh url [app|postgres] [direct|pooled]   the connection URL with the role's password:
#                                      through HAProxy (direct, the default: LISTEN, migrations, operators)
#                                      or through PgBouncer (pooled: the app's DATABASE_URL; app only)
#   scripts/ha/layout.sh ctl ARGS...   patronictl with pg1's configuration (e.g. `ctl list`, `ctl switchover`)
#
# Debian packages: postgresql-15, patroni, etcd-server, haproxy, pgbouncer, pgbackrest. Run as root (PostgreSQL,
# Patroni and pgBackRest run as the postgres user) or as the postgres user itself.
set -euo pipefail

HA_DIR=${HA_DIR:-/var/tmp/commerce-ha}
TLS_DIR=$HA_DIR/tls
CREDENTIALS=$HA_DIR/credentials
HA_SCOPE=${HA_SCOPE:-commerce}
ETCD_PORT=${HA_ETCD_PORT:-2479}
ETCD_PEER_PORT=${HA_ETCD_PEER_PORT:-2480}
HAPROXY_PORT=${HA_HAPROXY_PORT:-5440}
HAPROXY_STATS_PORT=${HA_HAPROXY_STATS_PORT:-8440}
SINGLE_PORT=${HA_SINGLE_PORT:-5443}
PGBOUNCER_PORT=${HA_PGBOUNCER_PORT:-5446}
# The server connections PgBouncer opens per database, at most, whatever the number of clients.
PGBOUNCER_SERVER_CONNECTIONS=${HA_PGBOUNCER_SERVER_CONNECTIONS:-50}
# Member N: PostgreSQL on 5440+N, Patroni's REST API on 8440+N.
MEMBERS=(pg1 pg2)
pg_port() { echo $((5440 + ${1#pg})); }
rest_port() { echo $((8440 + ${1#pg})); }

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# In /usr/sbin, outside the postgres user's PATH below.
PGBOUNCER_BIN=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
PG_USER=postgres

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# How to run a command as the postgres user (PostgreSQL refuses to run as root). setpriv and env
# both exec, so `exec "${AS_PG[@]}" cmd` leaves the command itself with the pid.
AS_PG=(env PATH="$PG_BIN:/usr/bin:/bin" HOME="$HA_DIR" LC_ALL=C.UTF-8)
if [ "$(id -u)" = 0 ]; then
  AS_PG=(setpriv --reuid="$PG_USER" --regid="$PG_USER" --init-groups --reset-env -- "${AS_PG[@]}")
fi
as_pg() { "${AS_PG[@]}" "$@"; }

# Starts a long-running component in the background, its pid in HA_DIR/pids/NAME.pid and its
# output in HA_DIR/log/NAME.log. AS=pg runs it as the postgres user.
spawn() {
  local name=$1
  shift
  local pidfile="$HA_DIR/pids/$name.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    log "$name already runs (pid $(cat "$pidfile"))"
    return
  fi
  if [ "${AS:-}" = pg ]; then
    # shellcheck disable=SC2016 # $$ is the inner shell's pid, which exec hands to the command.
    setsid bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$HERE/layout.sh" as-pg "$@" \
      >>"$HA_DIR/log/$name.log" 2>&1 </dev/null &
  else
    # shellcheck disable=SC2016
    setsid bash -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >>"$HA_DIR/log/$name.log" 2>&1 </dev/null &
  fi
  local waited=0
  until [ -s "$pidfile" ]; do
    sleep 0.05
    waited=$((waited + 1))
    [ $waited -lt 100 ] || die "$name did not start"
  done
  log "$name started (pid $(cat "$pidfile"))"
}

# Stops a component by its pid file: SIGTERM (SIGINT, a fast shutdown, for a PostgreSQL of its
# own), or the signal given, then SIGKILL after 30 s.
reap() {
  local name=$1 signal=${2:-}
  case $name in single-postgres | restored-*) signal=${signal:-INT} ;; *) signal=${signal:-TERM} ;; esac
  local pidfile="$HA_DIR/pids/$name.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -s "$signal" "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null; do
      sleep 0.1
      waited=$((waited + 1))
      if [ $waited -eq 300 ]; then kill -s KILL "$pid" 2>/dev/null || true; fi
    done
  fi
  rm -f "$pidfile"
}

# Waits until a command succeeds, at most $1 seconds.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "timed out after ${seconds}s waiting for $what"
    sleep 0.2
  done
}

# Patroni's REST API over TLS, its certificate checked against the layout's CA.
rest_ok() { curl -fsS -o /dev/null --max-time 2 --cacert "$TLS_DIR/ca.crt" "$1"; }
# etcd asks for a client certificate: the operator's.
etcd_ok() {
  curl -fsS -o /dev/null --max-time 2 --cacert "$TLS_DIR/ca.crt" --cert "$TLS_DIR/operator.crt" \
    --key "$TLS_DIR/operator.key" "https://127.0.0.1:$ETCD_PORT/health"
}

credential() { sed -n "s/^$1=//p" "$CREDENTIALS"; }

# Each password generated once, at `up`, into a file only its owner reads; the CA and the
# certificates of etcd, each member and the operator (layout.sh's own checks, etcdctl). The CA's
# key is deleted once they are issued: nothing else can be signed.
make_secrets() {
  # Made already (by `single up`): kept, the single server's passwords with them.
  if [ -f "$CREDENTIALS" ] && [ -f "$TLS_DIR/operator.crt" ]; then return; fi
  mkdir -p "$HA_DIR"
  (
    umask 077
    for role in SUPERUSER REPLICATION REWIND RESTAPI APP; do
      printf '%s_PASSWORD=%s\n' "$role" "$(openssl rand -hex 24)"
    done >"$CREDENTIALS"
  )
  bash "$HERE/certs.sh" ca "$TLS_DIR"
  for name in etcd "${MEMBERS[@]}" operator; do bash "$HERE/certs.sh" issue "$TLS_DIR" "$name" 127.0.0.1; done
  rm -f "$TLS_DIR/ca.key"
}

# The application's role, with its generated password (through psql's standard input: never on a
# command line), on the server whose socket directory and port are given.
create_app_role() {
  printf "CREATE ROLE app LOGIN CREATEDB PASSWORD '%s';\n" "$(credential APP_PASSWORD)" |
    as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$1" -p "$2" -U postgres -d postgres
}

write_configs() {
  make_secrets
  mkdir -p "$HA_DIR"/{pids,log,etcd,backups,spool}
  for member in "${MEMBERS[@]}"; do mkdir -p "$HA_DIR/$member"; done
  # The settings every PostgreSQL of the layout shares, the lone comparison server's included.
  cp "$HERE/postgresql.conf" "$HA_DIR/postgresql.common.conf"

  for member in "${MEMBERS[@]}"; do
    cat >"$HA_DIR/$member/pgbackrest.conf" <<EOF
# This member's pgBackRest: archive-push / archive-get of its own WAL into the shared repository.
[global]
repo1-path=$HA_DIR/backups
log-path=$HA_DIR/log
lock-path=$HA_DIR/$member
spool-path=$HA_DIR/spool
log-level-console=warn
log-level-file=info
compress-type=lz4

[$HA_SCOPE]
pg1-path=$HA_DIR/$member/data
pg1-port=$(pg_port "$member")
pg1-socket-path=$HA_DIR/$member
EOF
  done
  cat >"$HA_DIR/pgbackrest.conf" <<EOF
# Backups: pgBackRest finds which of the members is the primary and backs it up.
[global]
repo1-path=$HA_DIR/backups
repo1-retention-full=2
log-path=$HA_DIR/log
lock-path=$HA_DIR
spool-path=$HA_DIR/spool
log-level-console=warn
log-level-file=info
compress-type=lz4
start-fast=y

[$HA_SCOPE]
pg1-path=$HA_DIR/pg1/data
pg1-port=$(pg_port pg1)
pg1-socket-path=$HA_DIR/pg1
pg2-path=$HA_DIR/pg2/data
pg2-port=$(pg_port pg2)
pg2-socket-path=$HA_DIR/pg2
EOF

  for member in "${MEMBERS[@]}"; do
    local port rest
    port=$(pg_port "$member")
    rest=$(rest_port "$member")
    sed -e "s|@SCOPE@|$HA_SCOPE|g" -e "s|@NAME@|$member|g" -e "s|@DIR@|$HA_DIR|g" \
      -e "s|@PG_BIN@|$PG_BIN|g" -e "s|@PG_PORT@|$port|g" -e "s|@REST_PORT@|$rest|g" \
      -e "s|@ETCD@|127.0.0.1:$ETCD_PORT|g" -e "s|@HOST@|127.0.0.1|g" \
      -e "s|@NETWORK@|127.0.0.1/32|g" -e "s|@TLS@|$TLS_DIR|g" \
      "$HERE/patroni.yml.in" >"$HA_DIR/$member/patroni.yml"
    chmod 600 "$HA_DIR/$member/patroni.yml"
    # The passwords: sed's script on its standard input (printf is the shell's), not its command line.
    for role in SUPERUSER REPLICATION REWIND RESTAPI; do
      printf 's|@%s_PASSWORD@|%s|g\n' "$role" "$(credential "${role}_PASSWORD")"
    done | sed -i -f - "$HA_DIR/$member/patroni.yml"
  done

  mkdir -p "$HA_DIR/pgbouncer"
  sed -e "s|@DIR@|$HA_DIR/pgbouncer|g" -e "s|@PORT@|$PGBOUNCER_PORT|g" -e "s|@HAPROXY_PORT@|$HAPROXY_PORT|g" \
    -e "s|@MAX_SERVER@|$PGBOUNCER_SERVER_CONNECTIONS|g" "$HERE/pgbouncer.ini.in" >"$HA_DIR/pgbouncer/pgbouncer.ini"
  chmod 600 "$HA_DIR/pgbouncer/pgbouncer.ini"

  sed -e "s|@DIR@|$HA_DIR|g" -e "s|@PORT@|$HAPROXY_PORT|g" -e "s|@STATS_PORT@|$HAPROXY_STATS_PORT|g" \
    -e "s|@CA@|$TLS_DIR/ca.crt|g" "$HERE/haproxy.cfg" >"$HA_DIR/haproxy.cfg"
  for member in "${MEMBERS[@]}"; do
    printf '  server %s 127.0.0.1:%s check port %s\n' "$member" "$(pg_port "$member")" "$(rest_port "$member")" \
      >>"$HA_DIR/haproxy.cfg"
  done

  if [ "$(id -u)" = 0 ]; then chown -R "$PG_USER:$PG_USER" "$HA_DIR"; fi
  # The backups, the keys and the credentials: the postgres user's only.
  chmod 700 "$HA_DIR" "$HA_DIR"/pg1 "$HA_DIR"/pg2 "$HA_DIR"/pgbouncer
}

# TLS for clients and peers; a client without a certificate of the layout's CA is refused.
start_etcd() {
  spawn etcd etcd --name ha-etcd --data-dir "$HA_DIR/etcd/data" \
    --listen-client-urls "https://127.0.0.1:$ETCD_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
    --cert-file "$TLS_DIR/etcd.crt" --key-file "$TLS_DIR/etcd.key" \
    --trusted-ca-file "$TLS_DIR/ca.crt" --client-cert-auth \
    --listen-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
    --peer-cert-file "$TLS_DIR/etcd.crt" --peer-key-file "$TLS_DIR/etcd.key" \
    --peer-trusted-ca-file "$TLS_DIR/ca.crt" --peer-client-cert-auth \
    --initial-cluster "ha-etcd=https://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
  wait_for 30 "etcd" etcd_ok
}

start_member() { AS=pg spawn "$1" patroni "$HA_DIR/$1/patroni.yml"; }

start_haproxy() {
  haproxy -c -q -f "$HA_DIR/haproxy.cfg" || die "haproxy.cfg does not check"
  spawn haproxy haproxy -db -f "$HA_DIR/haproxy.cfg"
}

# PgBouncer's auth file: the application role's SCRAM secret as PostgreSQL stores it (pg_authid),
# never its password; read through the primary's socket as postgres, written for postgres only.
write_pgbouncer_users() {
  local file="$HA_DIR/pgbouncer/userlist.txt"
  (
    umask 077
    as_pg psql -X -q -tA -v ON_ERROR_STOP=1 -h "$1" -p "$2" -U postgres -d postgres \
      -c "SELECT '\"' || rolname || '\" \"' || rolpassword || '\"' FROM pg_authid WHERE rolname = 'app'" \
      >"$file"
  )
  if [ "$(id -u)" = 0 ]; then chown "$PG_USER:$PG_USER" "$file"; fi
  grep -q '^"app" "SCRAM-SHA-256\$' "$file" || die "no SCRAM secret for app in $file"
}

start_pgbouncer() {
  AS=pg spawn pgbouncer "$PGBOUNCER_BIN" "$HA_DIR/pgbouncer/pgbouncer.ini"
  wait_for 30 "PgBouncer" pg_isready -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" -U app -d postgres
}

role_of() {
  curl -fsS --max-time 2 --cacert "$TLS_DIR/ca.crt" "https://127.0.0.1:$(rest_port "$1")/patroni" 2>/dev/null || true
}

cmd_up() {
  [ -n "$PG_BIN" ] && [ -x "$PG_BIN/postgres" ] || die "no PostgreSQL binaries (apt-get install postgresql-15)"
  for tool in patroni etcd haproxy pgbackrest curl setpriv openssl; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
  done
  [ -x "$PGBOUNCER_BIN" ] || die "pgbouncer is not installed"
  if [ -d "$HA_DIR/pg1/data" ] || [ -d "$HA_DIR/pg2/data" ]; then
    die "$HA_DIR holds a layout already: scripts/ha/layout.sh down first"
  fi
  write_configs
  start_etcd
  start_member pg1
  wait_for 120 "pg1 to lead" rest_ok "https://127.0.0.1:$(rest_port pg1)/primary"
  create_app_role "$HA_DIR/pg1" "$(pg_port pg1)"
  # The stanza before the second member: its clone and the first WAL segments archive at once.
  as_pg pgbackrest --config="$HA_DIR/pgbackrest.conf" --stanza="$HA_SCOPE" stanza-create
  start_member pg2
  wait_for 180 "pg2 to be the synchronous standby" rest_ok "https://127.0.0.1:$(rest_port pg2)/sync"
  start_haproxy
  wait_for 30 "HAProxy to reach the primary" pg_isready -q -h 127.0.0.1 -p "$HAPROXY_PORT" -U postgres
  write_pgbouncer_users "$HA_DIR/pg1" "$(pg_port pg1)"
  start_pgbouncer
  log "up: DATABASE_URL=\$(scripts/ha/layout.sh url app pooled): postgres://app:...@127.0.0.1:$PGBOUNCER_PORT/postgres (PgBouncer), DATABASE_LISTEN_URL=\$(scripts/ha/layout.sh url): postgres://app:...@127.0.0.1:$HAPROXY_PORT/postgres (HAProxy), the password in $CREDENTIALS (primary pg1, synchronous standby pg2)"
}

cmd_down() {
  # PgBouncer and HAProxy first (clients see the database go), then the members (Patroni stops its
  # PostgreSQL), then etcd. Whatever a pid file names, whatever is left in a data directory.
  reap pgbouncer
  reap haproxy
  local pidfile name
  for pidfile in "$HA_DIR"/pids/*.pid; do
    [ -e "$pidfile" ] || continue
    name=$(basename "$pidfile" .pid)
    if [ "$name" != etcd ]; then reap "$name"; fi
  done
  for data in "$HA_DIR"/*/data; do
    if [ -f "$data/postmaster.pid" ]; then
      as_pg pg_ctl -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
  done
  reap etcd
  # HA_KEEP_LOGS=dir: the components' logs copied there first (a benchmark reads what went wrong).
  if [ -n "${HA_KEEP_LOGS:-}" ] && [ -d "$HA_DIR/log" ]; then
    rm -rf "$HA_KEEP_LOGS" && mkdir -p "$HA_KEEP_LOGS" && cp -r "$HA_DIR/log/." "$HA_KEEP_LOGS/"
  fi
  if [ -d "$HA_DIR" ]; then rm -rf "$HA_DIR"; fi
  log "down: $HA_DIR removed"
}

cmd_status() {
  for member in "${MEMBERS[@]}"; do
    printf '%s: %s\n' "$member" "$(role_of "$member" | tr -d '\n' | cut -c1-400)"
  done
  printf 'haproxy: %s\n' "$(curl -fsS --max-time 2 "http://127.0.0.1:$HAPROXY_STATS_PORT/;csv" 2>/dev/null |
    awk -F, '$1 == "primary" && $2 ~ /^pg/ { printf "%s=%s ", $2, $18 }')"
  if [ -f "$HA_DIR/pids/pgbouncer.pid" ] && kill -0 "$(cat "$HA_DIR/pids/pgbouncer.pid")" 2>/dev/null; then
    printf 'pgbouncer: running on %s, at most %s server connections per database\n' "$PGBOUNCER_PORT" "$PGBOUNCER_SERVER_CONNECTIONS"
  else
    printf 'pgbouncer: not running\n'
  fi
}

cmd_backup() {
  local type=${1:-full}
  as_pg pgbackrest --config="$HA_DIR/pgbackrest.conf" --stanza="$HA_SCOPE" --type="$type" backup
  log "backup ($type) done"
}

# A component lost as a machine is: SIGKILL, no chance to clean up. For a member, Patroni and its
# PostgreSQL both.
cmd_stop() {
  local name=${1:?name: etcd, haproxy, pgbouncer, pg1 or pg2}
  local postmaster=""
  if [ -f "$HA_DIR/$name/data/postmaster.pid" ]; then postmaster=$(head -n 1 "$HA_DIR/$name/data/postmaster.pid"); fi
  reap "$name" KILL
  if [ -n "$postmaster" ]; then
    kill -s KILL "$postmaster" 2>/dev/null || true
    while kill -0 "$postmaster" 2>/dev/null; do sleep 0.05; done
  fi
  log "$name stopped (SIGKILL)"
}

cmd_start() {
  case ${1:?name: etcd, haproxy, pgbouncer, pg1 or pg2} in
    etcd) start_etcd ;;
    haproxy) start_haproxy ;;
    pgbouncer) start_pgbouncer ;;
    pg1 | pg2) start_member "$1" ;;
    *) die "unknown component $1" ;;
  esac
}

# A lone PostgreSQL with the same settings as the members, no replication, for the comparison.
cmd_single() {
  local data="$HA_DIR/single/data"
  case ${1:?up or down} in
    up)
      # The same passwords and authentication as the members (the layout's, if it is up).
      [ -f "$CREDENTIALS" ] || make_secrets
      mkdir -p "$HA_DIR"/{pids,log,single}
      cp "$HERE/postgresql.conf" "$HA_DIR/postgresql.common.conf"
      if [ "$(id -u)" = 0 ]; then chown -R "$PG_USER:$PG_USER" "$HA_DIR"; fi
      chmod 700 "$HA_DIR/single"
      local fresh=""
      if [ ! -d "$data" ]; then
        fresh=1
        (umask 077 && credential SUPERUSER_PASSWORD >"$HA_DIR/single/pwfile")
        if [ "$(id -u)" = 0 ]; then chown "$PG_USER:$PG_USER" "$HA_DIR/single/pwfile"; fi
        as_pg initdb -D "$data" -U postgres --pwfile="$HA_DIR/single/pwfile" --data-checksums -E UTF8 >/dev/null
        rm -f "$HA_DIR/single/pwfile"
        cat >>"$data/postgresql.conf" <<EOF
include '$HA_DIR/postgresql.common.conf'
port = $SINGLE_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$HA_DIR/single'
EOF
        # The members' pg_hba (patroni.yml.in).
        printf 'local all postgres peer\nhost all all 127.0.0.1/32 scram-sha-256\n' >"$data/pg_hba.conf"
      fi
      AS=pg spawn single-postgres postgres -D "$data"
      wait_for 60 "the single server" pg_isready -q -h 127.0.0.1 -p "$SINGLE_PORT" -U postgres
      if [ -n "$fresh" ]; then create_app_role "$HA_DIR/single" "$SINGLE_PORT"; fi
      log "single: postgres://app:...@127.0.0.1:$SINGLE_PORT/postgres, the password in $CREDENTIALS"
      ;;
    down)
      reap single-postgres
      rm -rf "$HA_DIR/single"
      ;;
    *) die "single up or single down" ;;
  esac
}

# Point-in-time restore from the repository into a new data directory, started on its own port:
# the WAL is replayed up to TARGET_TIME (a timestamp PostgreSQL reads, with its time zone), then
# the server is promoted. The restored server is a plain PostgreSQL, outside Patroni.
cmd_restore() {
  local target=${1:?target time, e.g. '2026-11-27 10:00:00+00'} dir=${2:?new directory} port=${3:?port}
  [ ! -e "$dir/data" ] || die "$dir/data exists already"
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown "$PG_USER:$PG_USER" "$dir"; fi
  chmod 700 "$dir"
  as_pg pgbackrest --config="$HA_DIR/pgbackrest.conf" --stanza="$HA_SCOPE" --pg1-path="$dir/data" \
    --type=time --target="$target" --target-action=promote restore
  # The restored files carry Patroni's postgresql.conf (a member's port, its synchronous standby):
  # settings given on the command line win over it, and a restored server archives nothing.
  AS=pg spawn "restored-$port" postgres -D "$dir/data" -c port="$port" -c listen_addresses=127.0.0.1 \
    -c unix_socket_directories="$dir" -c hba_file="$dir/data/pg_hba.conf" -c synchronous_standby_names= \
    -c archive_mode=off -c cluster_name=restored -c hot_standby=on
  # Through its socket as postgres (pg_hba: peer); the roles and passwords are the backup's.
  wait_for 300 "the restored server to finish recovery" \
    bash -c "[ \"\$($HERE/layout.sh as-pg psql -X -h $dir -p $port -U postgres -d postgres -tAc 'select pg_is_in_recovery()')\" = f ]"
  log "restored to $target: postgres://app:...@127.0.0.1:$port/postgres"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  backup) cmd_backup "${2:-full}" ;;
  stop) cmd_stop "${2:-}" ;;
  start) cmd_start "${2:-}" ;;
  single) cmd_single "${2:-}" ;;
  restore) cmd_restore "${2:-}" "${3:-}" "${4:-}" ;;
  url)
    role=${2:-app}
    case $role in app) password=$(credential APP_PASSWORD) ;; postgres) password=$(credential SUPERUSER_PASSWORD) ;; *) die "url app or url postgres" ;; esac
    [ -n "$password" ] || die "no $CREDENTIALS: scripts/ha/layout.sh up first"
    case ${3:-direct} in
      direct) port=$HAPROXY_PORT ;;
      # PgBouncer knows the application's role only: an operator's work goes direct.
      pooled)
        [ "$role" = app ] || die "PgBouncer takes the app role only"
        port=$PGBOUNCER_PORT
        ;;
      *) die "url ROLE direct or url ROLE pooled" ;;
    esac
    printf 'postgres://%s:%s@127.0.0.1:%s/postgres\n' "$role" "$password" "$port"
    ;;
  ctl)
    shift
    exec "${AS_PG[@]}" patronictl -c "$HA_DIR/pg1/patroni.yml" "$@"
    ;;
  as-pg)
    shift
    exec "${AS_PG[@]}" "$@"
    ;;
  *)
    sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
