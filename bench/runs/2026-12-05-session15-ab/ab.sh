#!/usr/bin/env bash
# The A/B as run for this directory (see NOTES.md): the shared script with this run's binaries.
exec bash "$(dirname "$0")/../../ab_two_binaries.sh" /tmp/old-target/release/tierdb /tmp/tierdb-new
