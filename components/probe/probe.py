"""GPU probe: is this node's driver the pinned one, and does a CUDA kernel built for the workload's CUDA run?

The smoke-test Job (components/smoke_test.py) mounts this very file and runs

    python probe.py check --pool NAME --driver 580.159.04 --cuda 13.0

It reads the driver from `nvidia-smi`, compiles a vector-add kernel with NVRTC to PTX (JIT-compiled by
the driver at load time) and to SASS for the GPU's own architecture, loads both through the CUDA
runtime, runs them and compares every element with the answer computed on the host. NVRTC and the
CUDA runtime come from NVIDIA's Python wheels (components/probe/requirements/cuda-<x.y>.txt), loaded
with ctypes, so no toolkit is installed on the node. Standard library only: it runs in a plain
Python image.

    python probe.py build --cuda 13.2 --arch 90 --out DIR     # PTX and SASS only, no GPU needed
    python probe.py check ... --image-dir DIR                  # run images built elsewhere

Exit status: 0 pass, 1 the node fails (driver not the pinned one, or a kernel does not run or gives a
wrong answer), 2 bad arguments or the probe's own libraries missing. One JSON document on stdout with
`--json`; otherwise one line per finding and a last `verdict:` line.

Sources:
- NVRTC API (nvrtcCreateProgram, nvrtcGetPTX, nvrtcGetCUBIN): https://docs.nvidia.com/cuda/nvrtc/index.html
- Runtime library management (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel with a
  cudaKernel_t): https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__LIBRARY.html
- Error codes (35 cudaErrorInsufficientDriver, 222 cudaErrorUnsupportedPtxVersion):
  https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html
- Minor version compatibility (a newer 13.x runtime runs SASS on an older 13.x driver; PTX from the
  newer toolkit does not JIT): https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
- nvidia-smi --query-gpu fields: https://docs.nvidia.com/deploy/nvidia-smi/index.html
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
from array import array
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_USAGE = 2

KERNEL_NAME = "vadd"
KERNEL_SOURCE = """
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { c[i] = a[i] + b[i]; }
}
"""
ELEMENTS = 1 << 20
THREADS = 256
CODE_KINDS = ("sass", "ptx")
NVIDIA_SMI_QUERY = ["nvidia-smi", "--query-gpu=index,name,driver_version,compute_cap", "--format=csv,noheader"]

# Where NVIDIA's wheels put the libraries, by CUDA major (nvidia-cuda-nvrtc-cu12 / nvidia-cuda-nvrtc 13.x).
# Source: the wheels' RECORD files (https://pypi.org/project/nvidia-cuda-nvrtc/,
# https://pypi.org/project/nvidia-cuda-nvrtc-cu12/).
WHEEL_LIBS = {
    12: {"nvrtc": "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "cudart": "nvidia/cuda_runtime/lib/libcudart.so.12"},
    13: {"nvrtc": "nvidia/cu13/lib/libnvrtc.so.13", "cudart": "nvidia/cu13/lib/libcudart.so.13"},
}
CUDA_MEMCPY_HOST_TO_DEVICE = 1
CUDA_MEMCPY_DEVICE_TO_HOST = 2
CUDA_DEV_ATTR_CC_MAJOR = 75
CUDA_DEV_ATTR_CC_MINOR = 76


class ProbeError(Exception):
    """The probe cannot run (bad argument, library missing): exit 2, one line."""


@dataclass(frozen=True)
class Gpu:
    """One row of `nvidia-smi --query-gpu=index,name,driver_version,compute_cap`."""

    index: int
    name: str
    driver: str
    compute_cap: str


@dataclass
class KernelRun:
    """One image of the kernel (SASS or PTX) loaded, launched and checked."""

    code: str
    built_with: str
    ptx_isa: str | None
    passed: bool
    error: str | None = None
    wrong_elements: int = 0


@dataclass
class Report:
    """Everything the probe found; `verdict` is pass or fail, `problems` says why it failed."""

    pool: str
    expected_driver: str
    expected_cuda: str
    gpus: list[Gpu] = field(default_factory=list)
    runtime: str | None = None
    driver_cuda: str | None = None
    runtime_error: str | None = None
    kernels: list[KernelRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "fail" if self.problems else "pass"


# ------------------------------------------------------------------------------------------------- driver
def parse_nvidia_smi(text: str) -> list[Gpu]:
    """The GPUs of `nvidia-smi --query-gpu=index,name,driver_version,compute_cap --format=csv,noheader`."""
    gpus = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != 4 or not cells[0].isdigit() or not re.fullmatch(r"\d+(\.\d+)+", cells[2]):
            raise ProbeError(
                f"unexpected nvidia-smi line {line!r}; expected 'index, name, driver_version, compute_cap'")
        gpus.append(Gpu(int(cells[0]), cells[1], cells[2], cells[3]))
    if not gpus:
        raise ProbeError("nvidia-smi listed no GPU: the container got none (is nvidia.com/gpu requested?)")
    return gpus


def driver_matches(found: str, expected: str) -> bool:
    """A full pin (580.159.04) must match exactly; a bare branch (580, baked images) matches its releases."""
    if "." in expected:
        return found == expected
    return found.split(".", maxsplit=1)[0] == expected


def driver_problems(pool: str, gpus: Sequence[Gpu], expected: str) -> list[str]:
    """One message per distinct wrong driver, naming the pool, the driver found and the driver expected."""
    wrong = sorted({gpu.driver for gpu in gpus if not driver_matches(gpu.driver, expected)})
    pinned = f"branch R{expected}" if "." not in expected else expected
    return [
        f"pool {pool}: node driver {found} is not the pinned driver {pinned} "
        f"(GPU {', '.join(sorted({g.name for g in gpus if g.driver == found}))}); the node was not built from the "
        f"pool's pinned driver: check the pool's AMI or the GPU Operator's driver.version"
        for found in wrong
    ]


def read_nvidia_smi(recorded: Path | None) -> str:
    if recorded is not None:
        return recorded.read_text()
    try:
        done = subprocess.run(NVIDIA_SMI_QUERY, capture_output=True, text=True, check=False, timeout=60)
    except FileNotFoundError as err:
        raise ProbeError("nvidia-smi is not in the container: set NVIDIA_DRIVER_CAPABILITIES=compute,utility") from err
    if done.returncode != 0:
        raise ProbeError(f"nvidia-smi failed (exit {done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


# ------------------------------------------------------------------------------------------------- libraries
def parse_cuda(value: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", value)
    if not match:
        raise ProbeError(f"--cuda {value!r} is not a CUDA version; use major.minor, e.g. 13.0")
    return int(match[1]), int(match[2])


def find_library(kind: str, major: int) -> Path:
    """The wheel's library on sys.path (PYTHONPATH or site-packages)."""
    if major not in WHEEL_LIBS:
        raise ProbeError(f"no wheel layout known for CUDA {major}.x; known: {', '.join(map(str, WHEEL_LIBS))}")
    relative = WHEEL_LIBS[major][kind]
    for entry in sys.path:
        candidate = Path(entry or ".") / relative
        if candidate.is_file():
            return candidate
    package = "nvidia-cuda-nvrtc" if kind == "nvrtc" else "nvidia-cuda-runtime"
    suffix = "-cu12" if major == 12 else ""
    raise ProbeError(f"{relative} not found on sys.path: install {package}{suffix} (components/probe/requirements/)")


class Nvrtc:
    """NVRTC through ctypes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # NVRTC 13.0 dlopens libnvrtc-builtins by soname, which the loader does not look for beside
        # libnvrtc in a wheel; loading it first (by path) makes that dlopen find it.
        for builtins in sorted(path.parent.glob("libnvrtc-builtins.so.*")):
            if ".alt." not in builtins.name:
                ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(str(path))
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def version(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._call("nvrtcVersion", ctypes.byref(major), ctypes.byref(minor))
        return f"{major.value}.{minor.value}"

    def _call(self, name: str, *args: object) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            raise ProbeError(f"{name} failed: {self.lib.nvrtcGetErrorString(status).decode()}")

    def compile(self, code: str, arch: str) -> bytes:
        """SASS (a cubin for sm_<arch>) or PTX (for compute_<arch>) of the vector-add kernel."""
        program = ctypes.c_void_p()
        self._call("nvrtcCreateProgram", ctypes.byref(program), KERNEL_SOURCE.encode(), b"vadd.cu", 0, None, None)
        target = f"--gpu-architecture={'sm' if code == 'sass' else 'compute'}_{arch}".encode()
        options = (ctypes.c_char_p * 1)(target)
        try:
            status = self.lib.nvrtcCompileProgram(program, 1, options)
            if status != 0:
                size = ctypes.c_size_t()
                self.lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                self.lib.nvrtcGetProgramLog(program, log)
                raise ProbeError(f"NVRTC could not compile the kernel for {target.decode()}: {log.value.decode()}")
            getter = "CUBIN" if code == "sass" else "PTX"
            size = ctypes.c_size_t()
            self._call(f"nvrtcGet{getter}Size", program, ctypes.byref(size))
            image = ctypes.create_string_buffer(size.value)
            self._call(f"nvrtcGet{getter}", program, image)
            return image.raw
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(program))


class CudaError(Exception):
    """A CUDA runtime call returned an error: its name (cudaErrorUnsupportedPtxVersion) is the message."""


class Cudart:
    """The CUDA runtime through ctypes: just what loading and launching one kernel needs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.cudaGetErrorName.restype = ctypes.c_char_p

    def call(self, name: str, *args: object) -> None:
        status = getattr(self.lib, name)(*args)
        if status != 0:
            raise CudaError(f"{name}: {self.lib.cudaGetErrorName(status).decode()} ({status})")

    def version(self, which: str) -> str:
        value = ctypes.c_int()
        self.call(f"cuda{which}GetVersion", ctypes.byref(value))
        return f"{value.value // 1000}.{value.value % 1000 // 10}"

    def compute_capability(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.call("cudaDeviceGetAttribute", ctypes.byref(major), CUDA_DEV_ATTR_CC_MAJOR, 0)
        self.call("cudaDeviceGetAttribute", ctypes.byref(minor), CUDA_DEV_ATTR_CC_MINOR, 0)
        return f"{major.value}{minor.value}"

    def run_vadd(self, image: bytes) -> int:
        """Load an image, run c = a + b over ELEMENTS floats, return how many elements are wrong."""
        library, kernel = ctypes.c_void_p(), ctypes.c_void_p()
        self.call("cudaLibraryLoadData", ctypes.byref(library), image, None, None, 0, None, None, 0)
        buffers = [ctypes.c_void_p() for _ in range(3)]
        nbytes = ELEMENTS * 4
        try:
            self.call("cudaLibraryGetKernel", ctypes.byref(kernel), library, KERNEL_NAME.encode())
            a = array("f", (float(i) for i in range(ELEMENTS)))
            b = array("f", (float(2 * i) for i in range(ELEMENTS)))
            out = array("f", bytes(nbytes))
            for buffer in buffers:
                self.call("cudaMalloc", ctypes.byref(buffer), ctypes.c_size_t(nbytes))
            for buffer, host in zip(buffers[:2], (a, b), strict=True):
                address = host.buffer_info()[0]
                self.call("cudaMemcpy", buffer, ctypes.c_void_p(address), ctypes.c_size_t(nbytes),
                          CUDA_MEMCPY_HOST_TO_DEVICE)
            count = ctypes.c_int(ELEMENTS)
            args = (ctypes.c_void_p * 4)(*(ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in (*buffers, count)))
            grid = Dim3((ELEMENTS + THREADS - 1) // THREADS, 1, 1)
            block = Dim3(THREADS, 1, 1)
            self.call("cudaLaunchKernel", kernel, grid, block, args, ctypes.c_size_t(0), None)
            self.call("cudaDeviceSynchronize")
            self.call("cudaMemcpy", ctypes.c_void_p(out.buffer_info()[0]), buffers[2], ctypes.c_size_t(nbytes),
                      CUDA_MEMCPY_DEVICE_TO_HOST)
            return sum(1 for x, y, z in zip(a, b, out, strict=True) if x + y != z)
        finally:
            for buffer in buffers:
                if buffer.value:
                    self.lib.cudaFree(buffer)
            self.lib.cudaLibraryUnload(library)


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def ptx_isa(image: bytes) -> str | None:
    match = re.search(rb"^\.version\s+(\d+\.\d+)", image, re.MULTILINE)
    return match[1].decode() if match else None


# ------------------------------------------------------------------------------------------------- commands
def build(cuda: str, arch: str, out: Path) -> dict[str, str]:
    """Write vadd.cubin and vadd.ptx built by the installed NVRTC, and build.json naming that NVRTC."""
    major, _ = parse_cuda(cuda)
    nvrtc = Nvrtc(find_library("nvrtc", major))
    out.mkdir(parents=True, exist_ok=True)
    made = {"nvrtc": nvrtc.version(), "arch": arch}
    for code in CODE_KINDS:
        (out / f"vadd.{'cubin' if code == 'sass' else 'ptx'}").write_bytes(nvrtc.compile(code, arch))
    (out / "build.json").write_text(json.dumps(made) + "\n")
    return made


def check(
    *, pool: str, driver: str, cuda: str, codes: Sequence[str], nvidia_smi: Path | None, image_dir: Path | None
) -> Report:
    report = Report(pool=pool, expected_driver=driver, expected_cuda=cuda)
    report.gpus = parse_nvidia_smi(read_nvidia_smi(nvidia_smi))
    report.problems += driver_problems(pool, report.gpus, driver)
    if not codes:
        return report
    major, minor = parse_cuda(cuda)
    cudart = Cudart(find_library("cudart", major))
    try:
        report.runtime = cudart.version("Runtime")
        report.driver_cuda = cudart.version("Driver")
        arch = cudart.compute_capability()
    except CudaError as err:
        report.runtime_error = str(err)
        report.problems.append(f"pool {pool}: the CUDA {cuda} runtime does not start on driver "
                               f"{report.gpus[0].driver}: {err}")
        return report
    if report.runtime != f"{major}.{minor}":
        report.problems.append(
            f"pool {pool}: the probe loaded CUDA runtime {report.runtime}, not the workload's {cuda}")
    images, built_with = _images(cuda, major, arch, image_dir)
    for code in codes:
        image = images[code]
        run = KernelRun(code=code, built_with=built_with, ptx_isa=ptx_isa(image) if code == "ptx" else None,
                        passed=False)
        try:
            run.wrong_elements = cudart.run_vadd(image)
            run.passed = run.wrong_elements == 0
            if not run.passed:
                run.error = f"{run.wrong_elements} of {ELEMENTS} elements wrong"
        except CudaError as err:
            run.error = str(err)
        if not run.passed:
            what = f"PTX ISA {run.ptx_isa}" if code == "ptx" else f"sm_{arch} SASS"
            report.problems.append(
                f"pool {pool}: a vector-add kernel built by NVRTC {built_with} as {what} failed on driver "
                f"{report.gpus[0].driver} (CUDA {report.driver_cuda} driver API): {run.error}"
            )
        report.kernels.append(run)
    return report


def _images(cuda: str, major: int, arch: str, image_dir: Path | None) -> tuple[dict[str, bytes], str]:
    if image_dir is not None:
        made = json.loads((image_dir / "build.json").read_text())
        if made["arch"] != arch:
            raise ProbeError(f"{image_dir} holds sm_{made['arch']} images; this GPU is sm_{arch}")
        return {"sass": (image_dir / "vadd.cubin").read_bytes(), "ptx": (image_dir / "vadd.ptx").read_bytes()}, str(
            made["nvrtc"]
        )
    nvrtc = Nvrtc(find_library("nvrtc", major))
    version = nvrtc.version()
    if version != ".".join(map(str, parse_cuda(cuda))):
        raise ProbeError(f"NVRTC {version} is installed, not the workload's CUDA {cuda}: install its wheel")
    return {code: nvrtc.compile(code, arch) for code in CODE_KINDS}, version


def _print(report: Report, as_json: bool) -> None:
    if as_json:
        document = {**asdict(report), "verdict": report.verdict}
        print(json.dumps(document, indent=2))
        return
    for gpu in report.gpus:
        print(f"gpu {gpu.index}: {gpu.name}, driver {gpu.driver}, compute capability {gpu.compute_cap}")
    if report.runtime:
        print(f"cuda runtime {report.runtime} on a CUDA {report.driver_cuda} driver")
    for run in report.kernels:
        isa = f" (PTX ISA {run.ptx_isa})" if run.ptx_isa else ""
        print(f"kernel {run.code}{isa} built by NVRTC {run.built_with}: {'ok' if run.passed else run.error}")
    for problem in report.problems:
        print(f"error: {problem}", file=sys.stderr)
    print(f"verdict: {report.verdict} (pool {report.pool}, driver expected {report.expected_driver}, "
          f"found {', '.join(sorted({g.driver for g in report.gpus}))})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probe.py", description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("check", help="check the node's driver and run the kernel")
    run.add_argument("--pool", required=True)
    run.add_argument("--driver", required=True, help="the pool's pinned driver (580.159.04) or branch (580)")
    run.add_argument("--cuda", required=True, help="the workload's CUDA (13.0)")
    run.add_argument("--code", default=",".join(CODE_KINDS), help="sass,ptx (default), sass, ptx, or none")
    run.add_argument("--image-dir", type=Path, help="run vadd.cubin / vadd.ptx from `build` instead of NVRTC")
    run.add_argument("--nvidia-smi-output", type=Path, help="read recorded nvidia-smi --query-gpu output")
    run.add_argument("--json", action="store_true")
    made = commands.add_parser("build", help="build the kernel's PTX and SASS (no GPU needed)")
    made.add_argument("--cuda", required=True)
    made.add_argument("--arch", required=True, help="compute capability without the dot (90)")
    made.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(json.dumps(build(args.cuda, args.arch, args.out)))
            return EXIT_PASS
        codes = [] if args.code == "none" else args.code.split(",")
        if unknown := [c for c in codes if c not in CODE_KINDS]:
            raise ProbeError(f"--code {','.join(unknown)}: choose from {', '.join(CODE_KINDS)} or none")
        if not re.fullmatch(r"\d+(\.\d+)*", args.driver):
            raise ProbeError(f"--driver {args.driver!r} is not a driver version (580.159.04) or branch (580)")
        parse_cuda(args.cuda)
        report = check(pool=args.pool, driver=args.driver, cuda=args.cuda, codes=codes,
                       nvidia_smi=args.nvidia_smi_output, image_dir=args.image_dir)
    except ProbeError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    _print(report, args.json)
    return EXIT_FAIL if report.problems else EXIT_PASS


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
