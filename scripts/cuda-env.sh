# shellcheck shell=bash
# Gives this shell a CUDA compiler for the `cuda` feature (building needs no GPU):
#
#   source scripts/cuda-env.sh
#   cargo build --release --features cuda
#
# It takes, in order:
#   1. $CUDA_HOME, if it holds bin/nvcc (a CUDA toolkit install);
#   2. the nvcc on PATH (CUDA_HOME is the folder above its bin/);
#   3. CUDA 13.0's nvcc from PyPI, installed once (about 330 MB) into a venv at
#      $CUZK_CUDA_VENV (default ${XDG_CACHE_HOME:-~/.cache}/cuzk-cuda). The wheels are
#      pinned together: an unpinned nvidia-nvvm or nvidia-cuda-crt pulls a newer
#      release that does not match nvcc 13.0. Binaries built with it need an NVIDIA
#      driver for CUDA 13.0 or newer (580+) where they run.
# and exports CUDA_HOME, CUDA_PATH, PATH (nvcc first) and LIBRARY_PATH (the folder holding
# libcudart_static.a; build.rs finds it from nvcc for cargo's links, without RUSTFLAGS, so
# cuda builds share the dependencies' artifacts with CPU builds). When none of the three works it prints one line on stderr
# and returns 1.

__cuzk_cuda_env() {
  local home="" nvcc venv log lib d
  # 1. CUDA_HOME
  if [ -n "${CUDA_HOME:-}" ]; then
    if [ -x "$CUDA_HOME/bin/nvcc" ]; then
      home=$CUDA_HOME
    else
      echo "cuda-env: CUDA_HOME=$CUDA_HOME has no bin/nvcc: looking further" >&2
    fi
  fi
  # 2. nvcc on PATH (through symlinks, e.g. /usr/bin/nvcc -> /usr/local/cuda-13.0/bin/nvcc)
  if [ -z "$home" ] && nvcc=$(command -v nvcc 2>/dev/null) && [ -n "$nvcc" ]; then
    nvcc=$(readlink -f "$nvcc" 2>/dev/null || echo "$nvcc")
    home=$(cd "$(dirname "$nvcc")/.." && pwd)
  fi
  # 3. the pinned nvcc from PyPI, in a venv outside the repo
  if [ -z "$home" ]; then
    venv=${CUZK_CUDA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cuzk-cuda}
    for d in "$venv"/lib/python3*/site-packages/nvidia/cu13; do
      if [ -x "$d/bin/nvcc" ]; then home=$d; fi
    done
    if [ -z "$home" ]; then
      echo "cuda-env: installing CUDA 13.0's nvcc from PyPI into $venv (about 330 MB, once)" >&2
      log=$(mktemp "${TMPDIR:-/tmp}/cuda-env.XXXXXX")
      if command -v python3 >/dev/null 2>&1 &&
        python3 -m venv "$venv" >"$log" 2>&1 &&
        "$venv/bin/pip" install -q --disable-pip-version-check \
          nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 \
          nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 >>"$log" 2>&1; then
        for d in "$venv"/lib/python3*/site-packages/nvidia/cu13; do
          if [ -x "$d/bin/nvcc" ]; then home=$d; fi
        done
      fi
      if [ -z "$home" ]; then
        echo "cuda-env: no nvcc: set CUDA_HOME or put nvcc on PATH (installing the PyPI nvcc into $venv failed: see $log)" >&2
        return 1
      fi
      rm -f "$log"
    fi
  fi

  # The library folder: lib64 in NVIDIA's toolkit, lib in the PyPI wheel, the
  # multiarch folder for a distribution's package (CUDA_HOME=/usr).
  lib=""
  for d in "$home/lib64" "$home/lib" "$home/targets/$(uname -m)-linux/lib" "$home/lib/$(uname -m)-linux-gnu"; do
    if [ -z "$lib" ] && [ -f "$d/libcudart_static.a" ]; then lib=$d; fi
  done
  if [ -z "$lib" ]; then
    echo "cuda-env: no libcudart_static.a under $home/lib64 or $home/lib: linking may fail" >&2
  fi

  export CUDA_HOME=$home CUDA_PATH=$home
  case ":$PATH:" in *":$home/bin:"*) ;; *) export PATH="$home/bin:$PATH" ;; esac
  if [ -n "$lib" ]; then
    case ":${LIBRARY_PATH:-}:" in *":$lib:"*) ;; *) export LIBRARY_PATH="$lib${LIBRARY_PATH:+:$LIBRARY_PATH}" ;; esac
  fi
  echo "cuda-env: $("$home/bin/nvcc" --version | sed -n 's/^Cuda compilation tools, //p') at $home" >&2
}

if __cuzk_cuda_env; then
  unset -f __cuzk_cuda_env
else
  unset -f __cuzk_cuda_env
  # Sourced: back to the caller with 1. Run as a program: exit 1.
  # shellcheck disable=SC2317
  return 1 2>/dev/null || exit 1
fi
