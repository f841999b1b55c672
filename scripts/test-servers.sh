#!/usr/bin/env bash
# Installs the object-store servers the backend tests run against, all on
# 127.0.0.1 and started by the tests themselves:
#
#   versitygw v1.8.0          S3      (go install; about 5 minutes cold)
#   fake-gcs-server v1.56.1   GCS     (go install)
#   azurite 3.37.0            Azure   (npm, into .tools/azurite)
#
#   scripts/test-servers.sh install   install whatever is missing
#   scripts/test-servers.sh env       print the variables the tests read
#
# The tests find the servers through GODELTA_VERSITYGW, GODELTA_FAKE_GCS
# and GODELTA_AZURITE, or at the paths this script installs to.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
gobin=$(go env GOPATH)/bin
tools="$root/.tools"

versitygw="$gobin/versitygw"
fakegcs="$gobin/fake-gcs-server"
azurite="$tools/azurite/node_modules/.bin/azurite-blob"

install() {
  local pids=()
  if [ ! -x "$versitygw" ]; then
    echo "installing versitygw v1.8.0"
    go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 & pids+=($!)
  fi
  if [ ! -x "$fakegcs" ]; then
    echo "installing fake-gcs-server v1.56.1"
    go install github.com/fsouza/fake-gcs-server@v1.56.1 & pids+=($!)
  fi
  if [ ! -x "$azurite" ]; then
    echo "installing azurite 3.37.0"
    mkdir -p "$tools/azurite"
    (cd "$tools/azurite" && npm install --no-audit --no-fund --loglevel=error azurite@3.37.0 >/dev/null) & pids+=($!)
  fi
  for p in "${pids[@]}"; do wait "$p"; done
}

case "${1:-install}" in
  install) install ;;
  env)
    echo "export GODELTA_VERSITYGW=$versitygw"
    echo "export GODELTA_FAKE_GCS=$fakegcs"
    echo "export GODELTA_AZURITE=$azurite"
    # The tests give the S3 client its endpoint and keys; never let the
    # AWS SDK look for credentials on the EC2 metadata address.
    echo "export AWS_EC2_METADATA_DISABLED=true"
    ;;
  *) echo "usage: $0 [install|env]" >&2; exit 2 ;;
esac
