# The check-list helpers of the shell tests that report each check on a line (sourced, not run):
#   pass DESCRIPTION, fail DESCRIPTION (counts into $failures), check DESCRIPTION COMMAND...
# (passes when COMMAND succeeds; its output is discarded).
failures=0
pass() { echo "ok   - $1"; }
fail() { echo "FAIL - $1"; failures=$((failures + 1)); }
check() {
  local what=$1; shift
  if "$@" > /dev/null 2>&1; then pass "$what"; else fail "$what"; fi
}
