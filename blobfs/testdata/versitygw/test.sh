#!/usr/bin/env bash
# Runs the blobfs tests against a real S3-compatible server: the Versity S3
# Gateway (Apache-2.0), pinned in this folder's go.mod and go.sum. It builds
# the gateway, serves a temporary directory on a loopback port, and runs
# go test ./blobfs with LRO_TEST_S3_URL pointing at it (see s3_test.go);
# arguments go to go test (-run, -v, ...). .ci/run calls it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="$here/bin/versitygw"
(cd "$here" && go build -o "$bin" github.com/versity/versitygw/cmd/versitygw)

data="$(mktemp -d)"
log="$data.log"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$data" "$log"
}
trap cleanup EXIT

# Test keys of this throwaway server, not secrets.
export AWS_ACCESS_KEY_ID=lro-test-key AWS_SECRET_ACCESS_KEY=lro-test-secret
export AWS_SESSION_TOKEN= AWS_PROFILE= AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true

# A port that no other server holds: try a few at random.
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 20000))
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi # taken
  ROOT_ACCESS_KEY="$AWS_ACCESS_KEY_ID" ROOT_SECRET_KEY="$AWS_SECRET_ACCESS_KEY" \
    "$bin" --port "127.0.0.1:$port" posix "$data" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break 2; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""
done
if [ -z "$pid" ]; then
  echo "versitygw did not start:"; cat "$log"; exit 1
fi

cd "$root"
LRO_TEST_S3_URL="s3://lro-test/ci?endpoint=http://127.0.0.1:$port&use_path_style=true&region=us-east-1" \
  go test -count=1 "$@" ./blobfs
