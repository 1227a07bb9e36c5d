# Sourced by the .ci/gpu_*.sh device calls: an uninstalled checkout on a GPU machine, set up as an install.
#   source .ci/gpu_env.sh OUTDIR     (sets $out, makes it; run from the repository root)
out=${1:-reports}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 TRITON_INTERPRET=0
export VGPRSCOPE_CACHE_DIR=${VGPRSCOPE_CACHE_DIR:-/tmp/vgprscope-cache}
# The bundled kernels install as vgprscope.kernels (pyproject's package-dir); map them the same way here, so
# PYTHONPATH=$PWD finds them where an install would put them.
[ -e vgprscope/kernels/__init__.py ] || { rm -rf vgprscope/kernels; ln -s ../kernels vgprscope/kernels; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
