#!/bin/bash
# Reproduces the pid-reuse race of the orphan reaper (src/subreaper.ts): a descendant the reaper's
# sweep has read from /proc exits, its pid goes to a process that is not the reaper's, and the
# sweep's SIGKILL must not reach that one. Needs root (a pid namespace whose next pid it sets
# through ns_last_pid), perl, unshare and taskset; takes ~30 s a round on a loaded 2-core machine.
#   scripts/reaper-pid-reuse.sh [rounds] [reaper.pl]   (default: the built package's reaper)
# Prints, per round, whether the stranger was killed. Measured here (2026-11-29, load 2–8): the
# reaper before the pidfd fix killed it in 3 of 5 rounds, the fixed one in none of 7. Timing-bound,
# so not part of the test suite.
set -euo pipefail
rounds=${1:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
reaper=${2:-}
if [ -z "$reaper" ]; then
  reaper=$(mktemp /tmp/reaper.XXXXXX.pl)
  node -e 'import(process.argv[1]).then((m) => process.stdout.write(m.subreaperSource))' \
    "$here/dist/index.js" > "$reaper"
fi
prctl=157
[ "$(uname -m)" = aarch64 ] && prctl=167
round_script=$(mktemp /tmp/reaper-round.XXXXXX.sh)
cat > "$round_script" <<'ROUND'
#!/bin/bash
# pid 1 of a fresh pid namespace: $1 the reaper, $2 prctl's number.
dir=$(mktemp -d)
# 1,500 idle processes with high pids: a sweep of /proc takes a while.
echo 1000 > /proc/sys/kernel/ns_last_pid
perl -e 'for (1 .. 1500) { exit 0 if !fork() && sleep 1000 }'
echo 9 > /proc/sys/kernel/ns_last_pid
# The reaper, slowed (nice 19 on the one CPU this runs on), over a command that leaves a descendant
# (a sleep, whose shell waits for it) and exits when told to.
nice -n 19 perl "$1" "$2" /bin/sh -c "/bin/sh -c 'sleep 1000 & echo \$! > $dir/d; wait; exec sleep 1000' & until [ -e $dir/go ]; do sleep 0.01; done" &
reaper=$!
until [ -s "$dir/d" ]; do sleep 0.01; done
d=$(cat "$dir/d")
reads() { sed -n 's/^syscr: //p' "/proc/$reaper/io"; }
base=$(reads)
touch "$dir/go"
# The sweep has read the first 20 entries of /proc (the descendant among them): end the
# descendant, let its shell reap it, and start a stranger with its pid.
until [ $(($(reads) - base)) -ge 20 ]; do :; done
kill "$d" 2> /dev/null || { echo "skipped: the sweep ended the descendant first"; exit 0; }
while [ -e "/proc/$d" ]; do :; done
echo $((d - 1)) > /proc/sys/kernel/ns_last_pid
sleep 5 &
stranger=$!
wait "$reaper" || true
if [ "$stranger" != "$d" ]; then echo "skipped: the stranger got pid $stranger, not $d"; exit 0; fi
if kill -0 "$stranger" 2> /dev/null; then echo "stranger with the descendant's pid $d: alive"; else echo "stranger with the descendant's pid $d: KILLED by the reaper"; fi
ROUND
chmod +x "$round_script"
for round in $(seq "$rounds"); do
  timeout 120 taskset -c 0 unshare --pid --fork --mount-proc "$round_script" "$reaper" "$prctl" 2> /dev/null | tail -1
done
rm -f "$round_script"
