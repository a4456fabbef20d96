"""The CUDA 12 check's readers (scripts/gpubench_tools): ptxas -v output per kernel, the judge of a
CUDA 12 build against the reference build, and NVRTC name expressions from demangled kernels."""

from __future__ import annotations

from gpubench_tools import ptxas_report
from gpubench_tools.nvrtc import name_expression

# ptxas -v as nvcc 13's and 12.0's print it (two kernels; the advisory from CUDA 12.0's ptxas on
# the wgmma GEMM before its accumulators were zeroed).
REFERENCE = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm' for 'sm_90a'
ptxas info    : Function properties for gemm
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers
ptxas info    : Compile time = 109.794 ms
ptxas info    : Compiling entry function 'copy' for 'sm_90a'
ptxas info    : Function properties for copy
    0 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 32 registers
"""
ADVISORY = ("ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized "
            "due to non wgmma instructions defining accumulator registers of a wgmma between start and end of "
            "the pipeline stage in the function 'gemm'\n")


def test_every_kernel_is_read_with_its_registers_spills_and_stack():
    r = ptxas_report.parse(REFERENCE)
    assert set(r.kernels) == {"gemm", "copy"}
    assert (r.kernels["gemm"].registers, r.kernels["gemm"].spill_bytes, r.kernels["gemm"].stack_bytes) == (168, 0, 0)
    assert (r.kernels["copy"].registers, r.kernels["copy"].spill_bytes) == (32, 8)
    assert r.advisories == []


def test_the_same_build_passes_and_an_advisory_fails_it():
    ref = ptxas_report.parse(REFERENCE)
    assert ptxas_report.judge(ptxas_report.parse(REFERENCE), ref, {"gemm"}) == []
    found = ptxas_report.judge(ptxas_report.parse(ADVISORY + REFERENCE), ref, {"gemm"})
    assert len(found) == 1 and found[0].startswith("ptxas advisory: (C7515) Potential Performance Loss")
    # Without a reference build the advisory still fails it.
    assert len(ptxas_report.judge(ptxas_report.parse(ADVISORY), None, set())) == 1


def test_more_spills_a_new_stack_frame_and_a_missing_kernel_fail():
    ref = ptxas_report.parse(REFERENCE)
    worse = REFERENCE.replace("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
                              "16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads")
    found = ptxas_report.judge(ptxas_report.parse(worse), ref, set())
    assert found == ["gemm: 16 bytes of spills, 0 in the reference build",
                     "gemm: a stack frame of 16 bytes, none in the reference build"]
    fewer_spills = REFERENCE.replace("4 bytes spill stores, 4 bytes spill loads", "0 bytes spill stores, 0 bytes spill loads")
    assert ptxas_report.judge(ptxas_report.parse(fewer_spills), ref, set()) == []
    only_copy = REFERENCE[REFERENCE.index("ptxas info    : Compiling entry function 'copy'"):]
    assert ptxas_report.judge(ptxas_report.parse(only_copy), ref, set()) == ["gemm: not built"]


def test_registers_matter_only_for_kernels_that_set_their_own():
    ref = ptxas_report.parse(REFERENCE)
    other = ptxas_report.parse(REFERENCE.replace("Used 168 registers", "Used 154 registers")
                               .replace("Used 32 registers", "Used 40 registers"))
    assert ptxas_report.judge(other, ref, set()) == []
    found = ptxas_report.judge(other, ref, {"gemm"})
    assert found == ["gemm: 154 registers at entry, 168 in the reference build (its setmaxnreg targets need exactly those)"]


def test_name_expressions_from_demangled_kernels():
    assert name_expression("void gpubench::kernels::copy_kernel<4>(unsigned char const*, unsigned char*, "
                           "unsigned long, int, int, unsigned long)") == "&gpubench::kernels::copy_kernel<4>"
    assert name_expression("gpubench::kernels::chase_ring_fill_kernel(unsigned int*, gpubench::kernels::ChaseRing)") \
        == "&gpubench::kernels::chase_ring_fill_kernel"
    assert name_expression("void gpubench::kernels::hgemm_sm90::hgemm_wgmma_kernel<gpubench::kernels::hopper::F16, 2, "
                           "(gpubench::kernels::hgemm_sm90::Epilogue)0>(CUtensorMap_st, CUtensorMap_st, "
                           "CUtensorMap_st, float*, int, int, int)") == (
        "&gpubench::kernels::hgemm_sm90::hgemm_wgmma_kernel<gpubench::kernels::hopper::F16, 2, "
        "(gpubench::kernels::hgemm_sm90::Epilogue)0>")
    assert name_expression("gpubench::kernels::(anonymous namespace)::spin(void (*)(int), int)") \
        == "&gpubench::kernels::spin"
    assert name_expression("k") == "&k"


# nvdisasm -c, cut down: a pipelined kernel (nvcc 13) and the same serialised (CUDA 12.0's ptxas).
PIPELINED = """//--------------------- .text.k                   --------------------------
\t.section\t.text.k,"ax",@progbits
.text.k:
        /*00a0*/                   WARPGROUP.ARRIVE ;
        /*00e0*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8].tnspB, R24, UP0 ;
        /*0140*/                   HGMMA.64x64x16.F32 R24, gdesc[UR12].tnspB, R24, gsb0 ;
        /*0150*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
//--------------------- .text._ZN8gpubench7kernels11copy_kernelILi4EEEvPKhPhmiim --------------------------
        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
"""
SERIALISED = PIPELINED.replace("""        /*00e0*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8].tnspB, R24, UP0 ;
""", """        /*00e0*/                   HGMMA.64x64x16.F32 R24, gdesc[UR8].tnspB, R24, UP0, gsb0 ;
        /*00f0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0100*/                   WARPGROUP.ARRIVE ;
""")


def test_the_warpgroup_synchronisation_of_each_kernel_is_counted():
    shapes = ptxas_report.sass_shape(PIPELINED)
    assert set(shapes) == {"k", "_ZN8gpubench7kernels11copy_kernelILi4EEEvPKhPhmiim"}
    assert dict(shapes["k"]) == {"WARPGROUP.ARRIVE": 1, "WARPGROUP.DEPBAR": 1, "HGMMA closing a group (gsb0)": 1}
    assert not shapes["_ZN8gpubench7kernels11copy_kernelILi4EEEvPKhPhmiim"]


def test_serialised_wgmma_fail_the_sass_judge_and_the_same_shape_passes():
    reference = ptxas_report.sass_shape(PIPELINED)
    assert ptxas_report.judge_sass(ptxas_report.sass_shape(PIPELINED), reference) == []
    assert ptxas_report.judge_sass(ptxas_report.sass_shape(SERIALISED), reference) == [
        "k: SASS WARPGROUP.ARRIVE 2 (reference 1), WARPGROUP.DEPBAR 2 (reference 1), "
        "HGMMA closing a group (gsb0) 2 (reference 1)"]
    assert ptxas_report.judge_sass({}, reference) == [
        "k: SASS WARPGROUP.ARRIVE 0 (reference 1), WARPGROUP.DEPBAR 0 (reference 1), "
        "HGMMA closing a group (gsb0) 0 (reference 1)"]
