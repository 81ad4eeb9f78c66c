# GPU-free check of the real CUDA build (CTest entry cuda_fatbin_arches), in place of
# `cuobjdump --list-elf` (not part of this toolkit installation): extracts the `.nv_fatbin`
# section of each nvcc object of OBJECTS (comma-separated; objects not built from a .cu file are
# skipped) with objcopy and lists its entries with LISTER (tests/fatbin_list.cpp), failing unless
# every object holds ELF code for each architecture of ARCHS (comma-separated, e.g. 80,90).
# First, so the check cannot pass falsely, a one-kernel object compiled by NVCC for sm_80 alone must
# be refused for lacking sm_90.
#   cmake -DNVCC=... -DOBJCOPY=... -DLISTER=... -DOBJECTS=a.cu.o,b.cu.o -DARCHS=80,90 -DWORK=<dir> -P cuda_fatbin.cmake
string(REPLACE "," ";" _objects "${OBJECTS}")
file(MAKE_DIRECTORY "${WORK}")

file(WRITE "${WORK}/only_sm80.cu" "__global__ void only_sm80(float* x) { x[threadIdx.x] = 1.0f; }\n")
execute_process(COMMAND "${NVCC}" -c -arch=sm_80 -o "${WORK}/only_sm80.cu.o" "${WORK}/only_sm80.cu"
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "nvcc of the sm_80-only probe failed (${_rc}): ${_err}")
endif()
execute_process(COMMAND "${OBJCOPY}" -O binary --only-section=.nv_fatbin "${WORK}/only_sm80.cu.o" "${WORK}/only_sm80.bin")
execute_process(COMMAND "${LISTER}" "${WORK}/only_sm80.bin" --require-elf 80,90
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(_rc EQUAL 0 OR NOT _err MATCHES "no ELF entry for sm_90" OR NOT _out MATCHES "ELF sm_80")
    message(FATAL_ERROR "the lister does not refuse an sm_80-only object (${_rc}): ${_out}${_err}")
endif()
set(_checked 0)
foreach(_object IN LISTS _objects)
    if(NOT _object MATCHES "\\.cu\\.o$")
        continue()
    endif()
    get_filename_component(_name "${_object}" NAME)
    set(_section "${WORK}/${_name}.nv_fatbin")
    file(REMOVE "${_section}")
    execute_process(COMMAND "${OBJCOPY}" -O binary --only-section=.nv_fatbin "${_object}" "${_section}"
                    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0 OR NOT EXISTS "${_section}")
        message(FATAL_ERROR "objcopy of the .nv_fatbin section of ${_object} failed (${_rc}): ${_err}")
    endif()
    file(SIZE "${_section}" _bytes)
    if(_bytes EQUAL 0)
        message(FATAL_ERROR "${_name} has no .nv_fatbin section: no device code")
    endif()
    execute_process(COMMAND "${LISTER}" "${_section}" --require-elf "${ARCHS}"
                    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    string(STRIP "${_out}" _out)
    string(REPLACE "\n" ", " _list "${_out}")
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "${_name}: ${_err}entries: ${_list}")
    endif()
    message(STATUS "${_name}: ${_list}")
    math(EXPR _checked "${_checked} + 1")
endforeach()
if(_checked EQUAL 0)
    message(FATAL_ERROR "no nvcc object (*.cu.o) among ${OBJECTS}")
endif()
