#!/bin/sh
# Installs the torch build for this machine into the active Python environment (README, "Install").
# PyPI's torch is the CUDA build on Linux: several GB with NVIDIA's libraries, of no use without an
# NVIDIA GPU. A Linux machine on which `nvidia-smi -L` lists no GPU gets the CPU build (about 200 MB)
# from PyTorch's CPU index instead. Elsewhere PyPI's build is the right one (CPU; MPS on Apple
# silicon). HAYAI_TORCH=cpu or HAYAI_TORCH=cuda overrides the guess, e.g. where the GPU is not
# visible while installing (a container image being built). docs/install.md says what each costs.
set -eu

TORCH_VERSION=2.13.0
CPU_INDEX=https://download.pytorch.org/whl/cpu

build=${HAYAI_TORCH:-}
why="HAYAI_TORCH=$build"
if [ -z "$build" ]; then
  if [ "$(uname -s)" != Linux ]; then
    build=pypi why="not Linux"
  elif nvidia-smi -L >/dev/null 2>&1; then
    build=cuda why="an NVIDIA GPU found"
  else
    build=cpu why="no NVIDIA GPU found (nvidia-smi -L)"
  fi
fi

case $build in
  cpu)
    echo "install-torch: $why: the CPU build of torch $TORCH_VERSION (about 200 MB) from $CPU_INDEX"
    exec pip install "torch==$TORCH_VERSION" --index-url "$CPU_INDEX"
    ;;
  cuda | pypi)
    echo "install-torch: $why: torch $TORCH_VERSION from PyPI (on Linux the CUDA build, several GB)"
    exec pip install "torch==$TORCH_VERSION"
    ;;
  *)
    echo "install-torch: HAYAI_TORCH must be cpu or cuda, not '$build'" >&2
    exit 2
    ;;
esac
