"""CUDA's runtime compiler (NVRTC) through ctypes, for the CUDA 12 check of the kernel sources
(scripts/cuda12_device_check.py): NVRTC holds the whole CUDA C++ front end and NVVM, so a PyPI
wheel of it (nvidia-cuda-nvrtc-cu12) compiles the kernels as that CUDA 12 release's nvcc would,
where the nvcc wheels hold ptxas alone."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path

#: The folder of standard headers NVRTC is given first (nvrtc_std/README.md says why).
STD_SHIMS = Path(__file__).resolve().parent / "nvrtc_std"


@dataclass
class Compiled:
    """What one compile gave: PTX (empty on failure), NVRTC's log, and the mangled name each
    name expression was instantiated as (absent for one NVRTC could not lower)."""
    ok: bool
    ptx: str
    log: str
    lowered: dict[str, str] = field(default_factory=dict)


class Nvrtc:
    """libnvrtc.so.12 at `library` (libnvrtc-builtins beside it)."""

    def __init__(self, library: Path) -> None:
        self._lib = ctypes.CDLL(str(library))
        self._lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        self.version = f"{major.value}.{minor.value}"

    def _text(self, program: ctypes.c_void_p, size_fn: str, get_fn: str) -> str:
        size = ctypes.c_size_t()
        getattr(self._lib, size_fn)(program, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(size.value)
        getattr(self._lib, get_fn)(program, buffer)
        return buffer.value.decode(errors="replace")

    def compile(self, source: str, options: list[str], name_expressions: list[str]) -> Compiled:
        """Compiles `source` (named tu.cu) with `options`, instantiating each name expression
        ("&ns::kernel<4>"); NVRTC is thread-safe across programs."""
        program = ctypes.c_void_p()
        r = self._lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"tu.cu", 0, None, None)
        if r != 0:
            return Compiled(False, "", "nvrtcCreateProgram: " + self._lib.nvrtcGetErrorString(r).decode())
        try:
            for name in name_expressions:
                self._lib.nvrtcAddNameExpression(program, name.encode())
            argv = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            r = self._lib.nvrtcCompileProgram(program, len(options), argv)
            log = self._text(program, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog").strip()
            if r != 0:
                return Compiled(False, "", log or self._lib.nvrtcGetErrorString(r).decode())
            lowered = {}
            for name in name_expressions:
                mangled = ctypes.c_char_p()
                if self._lib.nvrtcGetLoweredName(program, name.encode(), ctypes.byref(mangled)) == 0:
                    lowered[name] = mangled.value.decode()
            return Compiled(True, self._text(program, "nvrtcGetPTXSize", "nvrtcGetPTX"), log, lowered)
        finally:
            self._lib.nvrtcDestroyProgram(ctypes.byref(program))


def name_expression(demangled: str) -> str:
    """The NVRTC name expression of a kernel from its demangled entry name:
    "void ns::k<4>(int*, unsigned long)" -> "&ns::k<4>" (an anonymous namespace left out: the
    expression is looked up in the translation unit that defines it)."""
    text = demangled.strip()
    if text.startswith("void "):
        text = text[len("void "):]
    text = text.replace("(anonymous namespace)::", "")
    depth = 0
    for i in range(len(text) - 1, -1, -1):  # cut the parameter list: the last top-level (...)
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                text = text[:i]
                break
    return "&" + text
