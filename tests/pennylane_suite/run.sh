#!/usr/bin/env bash
# PennyLane's own device test suite (pl-device-test) on tyxonq's two devices, analytic and with
# 10000 shots: four runs, two at a time, then a tally. Fails if any test fails.
#
#   tests/pennylane_suite/run.sh [VENV]        (VENV defaults to .venv)
#
# Needs pennylane, pytest, pytest-mock and flaky in VENV (pl-device-test refuses to start without
# the last two), and tyxonq installed there (its entry points register the devices).
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$(cd "${1:-$ROOT/.venv}" && pwd)"
export PATH="$VENV/bin:$PATH"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/pennylane_suite.XXXXXX")"
cd "$ROOT"

if ! "$VENV/bin/python" -c "import importlib.util as u, sys; m = [n for n in ('pennylane', 'pytest', 'pytest_mock', 'flaky', 'tyxonq') if u.find_spec(n) is None]; print(*m, file=sys.stderr); sys.exit(bool(m))" 2>"$LOGS/imports"; then
    echo "pennylane_suite: missing packages in $VENV:"; cat "$LOGS/imports"
    echo "install them with: $VENV/bin/python -m pip install pennylane pytest-mock flaky"
    exit 2
fi

run() {  # run NAME DEVICE [--shots N]
    local name=$1 device=$2; shift 2
    local start=$SECONDS
    pl-device-test --device "$device" "$@" -q -rsx -p no:cacheprovider -W ignore --tb=short \
        >"$LOGS/$name.log" 2>&1
    echo $? >"$LOGS/$name.rc"
    echo $((SECONDS - start)) >"$LOGS/$name.seconds"
}

START=$SECONDS
run qubit tyxonq.qubit & run qubit_shots tyxonq.qubit --shots 10000 & wait
run mixed tyxonq.mixed & run mixed_shots tyxonq.mixed --shots 10000 & wait

status=0
printf '%-12s %-40s %s\n' run summary seconds
for name in qubit qubit_shots mixed mixed_shots; do
    summary="$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$LOGS/$name.log" | tail -1 | tr -d '=')"
    printf '%-12s %-40s %s\n' "$name" "${summary:-no summary (see $LOGS/$name.log)}" "$(cat "$LOGS/$name.seconds")"
    if [ "$(cat "$LOGS/$name.rc")" != 0 ] || [ -z "$summary" ] || echo "$summary" | grep -qE '[0-9]+ (failed|errors?)\b'; then
        status=1
        grep -E '^(FAILED|ERROR)' "$LOGS/$name.log" | head -20
    fi
done
echo "total $((SECONDS - START)) s; logs (with skip and xfail reasons, -rsx) in $LOGS"
exit $status
