#!/bin/sh
# Builds brain4it's interpreter (brain4it-lang and brain4it-lib-core, from
# the git directory $B4IT_GIT) and Harness.java into $OUT (default
# /tmp/b4j), outside the repository, and runs the harness: warm-up runs
# ($1, default 5), then timed runs ($2, default 10), in Go's benchmark
# format on stdout.
set -e
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/b4j}
: "${B4IT_GIT:?set B4IT_GIT to brain4it's git directory}"
rm -rf "$OUT" && mkdir -p "$OUT/src" "$OUT/classes"
git --git-dir="$B4IT_GIT" archive HEAD brain4it-lang brain4it-lib/brain4it-lib-core | tar -x -C "$OUT/src"
find "$OUT/src" -name '*.java' -path '*/main/*' ! -name HttpFunction.java > "$OUT/files.txt"
echo "$here/Harness.java" >> "$OUT/files.txt"
echo "$here/org/brain4it/lib/core/net/HttpFunction.java" >> "$OUT/files.txt"
javac -nowarn -encoding UTF-8 -d "$OUT/classes" @"$OUT/files.txt"
cp -r "$OUT"/src/brain4it-lib/brain4it-lib-core/src/main/resources/. "$OUT/classes/"
java -cp "$OUT/classes" Harness "${1:-5}" "${2:-10}"
