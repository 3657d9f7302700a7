#!/usr/bin/env bash
# Installs what tierdb's server, tests and benchmarks need, when missing (Debian/Ubuntu).
# Idempotent; run as root or with sudo available.
set -euo pipefail
need=()
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
# The lab (and its quick test) runs MariaDB beside tierdb and checks devices with fio.
command -v mariadbd >/dev/null 2>&1 || need+=(mariadb-server)
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v bc >/dev/null 2>&1 || need+=(bc)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v losetup >/dev/null 2>&1 || need+=(mount)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo (Rust ≥ 1.95) is required: https://rustup.rs" >&2; exit 1; }
