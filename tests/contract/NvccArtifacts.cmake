# Script mode (cmake -P): nvcc's own output for one kernel source and one architecture, for the
# instruction-contract tests. Writes <PREFIX>.ptx (nvcc --ptx, with a depfile <PREFIX>.d),
# <PREFIX>.cubin and <PREFIX>.ptxas.txt (ptxas -v on that PTX: what nvcc -Xptxas -v reports).
# Inputs: NVCC, PTXAS, SOURCE, ARCH (e.g. 90), PREFIX, FLAGS (;-list of extra nvcc flags).
execute_process(
  COMMAND ${NVCC} ${FLAGS} --ptx -arch=compute_${ARCH} -MD -MF ${PREFIX}.d ${SOURCE} -o ${PREFIX}.ptx
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc --ptx for sm_${ARCH} failed on ${SOURCE}:\n${out}${err}")
endif()
execute_process(
  COMMAND ${PTXAS} -arch=sm_${ARCH} -O3 -v ${PREFIX}.ptx -o ${PREFIX}.cubin
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas for sm_${ARCH} failed on ${PREFIX}.ptx:\n${out}${err}")
endif()
file(WRITE ${PREFIX}.ptxas.txt "${out}${err}")
