#!/usr/bin/env bash
# Session 41's first call as it was tried (its starts failed; short.sh ran instead): on an H200, the sweep of the
# rows last measured on an H100 (sweep.sh); on any other card, bincount's range-first and cached-facts changes against
# main (docs/results/2026-12-07e/next-call.sh, whose patches main now holds).
#   device: docs/results/2026-12-07f/first-call.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash docs/results/2026-12-07f/sweep.sh "$1"
fi
exec bash docs/results/2026-12-07e/next-call.sh
