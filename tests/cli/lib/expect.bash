# Shared by the CLI tests (sourced; not a test itself).
# expect_bad <substring> <args...>: runs "$bin" "${prefix[@]}" <args...> and checks the bad-input
# contract: exit status 2, exactly one line on stderr starting "meshcast: " and containing
# <substring>, nothing on stdout. Needs $bin, $tmp and the array prefix; sets failed=1 on a
# mismatch and says why.
expect_bad() {
    local want=$1
    shift
    "$bin" "${prefix[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || [ -s "$tmp/out" ] ||
        ! grep -q '^meshcast: ' "$tmp/err" || ! grep -qF -- "$want" "$tmp/err"; then
        echo "FAIL: meshcast ${prefix[*]} $* -> rc=$rc, $lines stderr lines: $(cat "$tmp/err"); want '$want'" >&2
        failed=1
    fi
}
