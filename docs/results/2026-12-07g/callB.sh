#!/usr/bin/env bash
# Session 42's device call B: the whole suite with the GPU tests required (scripts/gpu-check.sh test), on the build
# call A left on the warm machine (built again if the machine is a fresh one).
#   device: docs/results/2026-12-07g/callB.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
stages=test
[ -f build/gpu/build.ninja ] || stages="build test"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader
GPU_CHECK_BUDGET_S=570 LOG_DIR=${OUT:-/tmp/out} GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh $stages
