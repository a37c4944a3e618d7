# Sourced by the GPU scripts (gpu_checks.sh, gpu_kernels.sh), after they set OUT.
#
# stage NAME SECONDS COMMAND...: run COMMAND with a limit (SIGTERM, then SIGKILL 15 s later),
# its output into $OUT/NAME.log, its exit status and wall time into $OUT/stages.txt
stage() {
    local name=$1 limit=$2 t0 rc
    shift 2
    t0=$(date +%s)
    timeout -s TERM -k 15 "$limit" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    echo "$name rc=$rc seconds=$(($(date +%s) - t0)) limit=$limit" | tee -a "$OUT/stages.txt"
}
