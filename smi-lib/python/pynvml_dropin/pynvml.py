"""pynvml, answered by hipstack.pynvml (docs/python.md): installed by the opt-in package
python3-hipstack-pynvml, or put on a virtualenv's path, so that programs written for NVIDIA's pynvml
(gpustat, nvitop, scripts) run unchanged on AMD and NVIDIA GPUs alike."""
import sys

import hipstack.pynvml as _module

sys.modules[__name__] = _module
