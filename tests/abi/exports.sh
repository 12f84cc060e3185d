#!/bin/sh
# exports.sh LIB HEADER...: the dynamic symbols LIB defines are exactly the
# functions the installed HEADERs declare (rpcrdma/librpcrdma.map keeps the
# rest local).  Prints what is exported but not declared, and what is
# declared but not exported; exit 0 when the two sets are equal.
set -u
prog=exports.sh
if [ $# -lt 2 ]; then
    echo "usage: $prog LIB HEADER..." >&2
    exit 2
fi
lib=$1
shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A declaration: a line starting a type, ending its name with "(".
sed -n 's/^[A-Za-z_][A-Za-z_0-9 *]*[ *]\([a-z_][a-z_0-9]*\)(.*/\1/p' "$@" | sort -u >"$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ { print $3 }' | sed 's/@.*//' | sort -u >"$tmp/exported"
nm -D --defined-only "$lib" | awk '$2 !~ /^[TWA]$/ { print "  " $3 " (" $2 ")" }' >"$tmp/other"
if [ ! -s "$tmp/declared" ] || [ ! -s "$tmp/exported" ]; then
    echo "$prog: FAIL: no declarations in $* or no exports in $lib" >&2
    exit 1
fi
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
rc=0
if [ -n "$extra" ]; then
    echo "$prog: FAIL: $lib exports functions no installed header declares:" >&2
    echo "$extra" | sed 's/^/  /' >&2
    rc=1
fi
if [ -n "$missing" ]; then
    echo "$prog: FAIL: declared in $* but not exported by $lib:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    rc=1
fi
if [ -s "$tmp/other" ]; then
    echo "$prog: FAIL: $lib exports data or other symbols:" >&2
    cat "$tmp/other" >&2
    rc=1
fi
[ $rc = 0 ] && echo "$prog: $lib exports the $(wc -l <"$tmp/exported") functions of $*"
exit $rc
