# HipstackHip.cmake: build one HIP source for AMD (hipcc) or NVIDIA (nvcc with hipstack's portability
# headers, validation/hip/include). docs/validation.md describes it.
#
# Cache variables:
#   HIPSTACK_HIP_PLATFORM    nvidia | amd | none. Default: nvidia when nvcc is found, else amd when hipcc
#                            is found, else none.
#   HIPSTACK_CUDA_ARCHS      NVIDIA architectures (CMake CUDA_ARCHITECTURES form), default 90.
#   HIPSTACK_AMDGPU_TARGETS  AMD targets, each passed as --offload-arch, default gfx90a;gfx908;gfx1030.
#   HIPSTACK_NVCC, HIPSTACK_HIPCC  the compilers found (or given).
#
# After include(): call hipstack_hip_enable_language() at directory scope (it enables CMake's CUDA
# language for the nvidia platform), then:
#   hipstack_add_hip_executable(NAME SOURCES a.hip ... [INCLUDE_DIRECTORIES dir ...] [DEFINITIONS D=1 ...]
#                               [INSTALL_DESTINATION dir])
#   hipstack_hip_target_file(OUT_VAR NAME)   the program's path, for add_test (works for both platforms).
#   hipstack_hip_install(NAME DESTINATION dir [COMPONENT c])   installs the program. In a packaging
#   build for AMD, give hipstack_add_hip_executable the same INSTALL_DESTINATION: the program is then
#   linked with the RUNPATH it needs there ($ORIGIN-relative, to the release's lib/).
include_guard(GLOBAL)

set(HIPSTACK_HIP_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../hip/include)
cmake_path(NORMAL_PATH HIPSTACK_HIP_INCLUDE_DIR)

find_program(HIPSTACK_NVCC nvcc HINTS ENV CUDA_PATH PATHS /usr/local/cuda/bin PATH_SUFFIXES bin
             DOC "nvcc, for the nvidia HIP platform")
find_program(HIPSTACK_HIPCC hipcc HINTS ENV ROCM_PATH PATHS /opt/rocm/bin PATH_SUFFIXES bin
             DOC "hipcc, for the amd HIP platform")

if(HIPSTACK_NVCC)
  set(_hipstack_hip_default nvidia)
elseif(HIPSTACK_HIPCC)
  set(_hipstack_hip_default amd)
else()
  set(_hipstack_hip_default none)
endif()
set(HIPSTACK_HIP_PLATFORM ${_hipstack_hip_default} CACHE STRING "HIP platform to build for: nvidia, amd or none")
set_property(CACHE HIPSTACK_HIP_PLATFORM PROPERTY STRINGS nvidia amd none)
set(HIPSTACK_CUDA_ARCHS 90 CACHE STRING "NVIDIA architectures for HIP sources (CUDA_ARCHITECTURES form)")
set(HIPSTACK_AMDGPU_TARGETS gfx90a gfx908 gfx1030 CACHE STRING "AMD GPU targets for HIP sources (--offload-arch)")

if(HIPSTACK_HIP_PLATFORM STREQUAL "nvidia" AND NOT HIPSTACK_NVCC)
  message(FATAL_ERROR "HIPSTACK_HIP_PLATFORM=nvidia but nvcc was not found (set HIPSTACK_NVCC)")
elseif(HIPSTACK_HIP_PLATFORM STREQUAL "amd" AND NOT HIPSTACK_HIPCC)
  message(FATAL_ERROR "HIPSTACK_HIP_PLATFORM=amd but hipcc was not found (set HIPSTACK_HIPCC)")
elseif(NOT HIPSTACK_HIP_PLATFORM MATCHES "^(nvidia|amd|none)$")
  message(FATAL_ERROR "HIPSTACK_HIP_PLATFORM must be nvidia, amd or none, not '${HIPSTACK_HIP_PLATFORM}'")
endif()

# CMake's CUDA language drives nvcc (dependency scanning, static cudart); it has to be enabled at
# directory scope, hence a macro.
macro(hipstack_hip_enable_language)
  if(HIPSTACK_HIP_PLATFORM STREQUAL "nvidia")
    if(NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER ${HIPSTACK_NVCC})
    endif()
    enable_language(CUDA)
    # CMake 3.25 knows nvcc's dialect flags only up to C++17; nvcc 12 and newer take -std=c++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
  endif()
endmacro()

function(hipstack_add_hip_executable name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "INSTALL_DESTINATION" "SOURCES;INCLUDE_DIRECTORIES;DEFINITIONS")
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "hipstack_add_hip_executable(${name}): no SOURCES")
  endif()
  if(HIPSTACK_HIP_PLATFORM STREQUAL "nvidia")
    _hipstack_add_nvidia(${name})
  elseif(HIPSTACK_HIP_PLATFORM STREQUAL "amd")
    _hipstack_add_amd(${name})
  else()
    message(FATAL_ERROR "hipstack_add_hip_executable(${name}): HIPSTACK_HIP_PLATFORM is none")
  endif()
endfunction()

function(hipstack_hip_target_file out name)
  if(HIPSTACK_HIP_PLATFORM STREQUAL "amd")
    get_target_property(file ${name} HIPSTACK_HIP_FILE)
    set(${out} ${file} PARENT_SCOPE)
  else()
    set(${out} $<TARGET_FILE:${name}> PARENT_SCOPE)
  endif()
endfunction()

function(hipstack_hip_install name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "DESTINATION;COMPONENT" "")
  if(NOT ARG_COMPONENT)
    set(ARG_COMPONENT validation)
  endif()
  if(HIPSTACK_HIP_PLATFORM STREQUAL "amd")
    get_target_property(file ${name} HIPSTACK_HIP_FILE)
    install(PROGRAMS ${file} DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
  else()
    install(TARGETS ${name} RUNTIME DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
  endif()
endfunction()

# NVIDIA: the sources compile as CUDA (nvcc -x cu) against our hip/ headers; cudart is linked statically,
# so the program needs only the driver (libcuda) where it runs.
function(_hipstack_add_nvidia name)
  add_executable(${name} ${ARG_SOURCES})
  set_source_files_properties(${ARG_SOURCES} PROPERTIES LANGUAGE CUDA)
  set_target_properties(${name} PROPERTIES CUDA_ARCHITECTURES "${HIPSTACK_CUDA_ARCHS}" CUDA_STANDARD 20
                                           CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
                                           CUDA_RUNTIME_LIBRARY Static)
  target_include_directories(${name} PRIVATE ${HIPSTACK_HIP_INCLUDE_DIR} ${ARG_INCLUDE_DIRECTORIES})
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
                         $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${HIPSTACK_WERROR}>>:-Werror=all-warnings>)
endfunction()

# AMD: hipcc compiles each source for every target in HIPSTACK_AMDGPU_TARGETS (dependencies from its
# depfile), then links the program against libamdhip64.
function(_hipstack_add_amd name)
  set(flags -std=c++20 -O3 -g -Wall -Wextra)
  if(HIPSTACK_WERROR)
    list(APPEND flags -Werror)
  endif()
  foreach(target ${HIPSTACK_AMDGPU_TARGETS})
    list(APPEND flags --offload-arch=${target})
  endforeach()
  foreach(dir ${HIPSTACK_HIP_INCLUDE_DIR} ${ARG_INCLUDE_DIRECTORIES})
    list(APPEND flags -I${dir})
  endforeach()
  foreach(def ${ARG_DEFINITIONS})
    list(APPEND flags -D${def})
  endforeach()
  if(HIPSTACK_PACKAGING)
    # As for C and C++ (HipstackPackaging.cmake): no build folder in the binaries, so two builds give
    # the same packages; hipcc's own prefix (the superbuild's stage) reads as the installed prefix.
    cmake_path(GET HIPSTACK_HIPCC PARENT_PATH hip_bin)
    cmake_path(GET hip_bin PARENT_PATH hip_prefix)
    list(APPEND flags -ffile-prefix-map=${hip_prefix}=${CMAKE_INSTALL_PREFIX}
                      -ffile-prefix-map=${CMAKE_SOURCE_DIR}=${HIPSTACK_DEBUG_SOURCE_DIR}
                      -ffile-prefix-map=${CMAKE_BINARY_DIR}=${HIPSTACK_DEBUG_SOURCE_DIR}/build)
  endif()
  # Objects and the program go under amd/: ninja's phony target `name` must not share the program's path.
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/amd/${name}.objects)
  set(objects)
  foreach(source ${ARG_SOURCES})
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} OUTPUT_VARIABLE abs)
    cmake_path(GET source FILENAME base)
    set(object ${dir}/${base}.o)
    add_custom_command(OUTPUT ${object}
                       COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
                       COMMAND ${HIPSTACK_HIPCC} ${flags} -MD -MF ${object}.d -c ${abs} -o ${object}
                       DEPENDS ${abs} DEPFILE ${object}.d
                       COMMENT "hipcc ${base} (${HIPSTACK_AMDGPU_TARGETS})" VERBATIM COMMAND_EXPAND_LISTS)
    list(APPEND objects ${object})
  endforeach()
  set(program ${CMAKE_CURRENT_BINARY_DIR}/amd/${name})
  set(link ${HIPSTACK_HIPCC})
  if(HIPSTACK_PACKAGING AND ARG_INSTALL_DESTINATION)
    # The superbuild's hipcc adds -Wl,-rpath,STAGE/lib; that path would stay in the build ID (and
    # the output folder's name with it) even once install rewrote it. Link with the RUNPATH the
    # installed program needs instead: its release's lib/, relative to it.
    file(RELATIVE_PATH to_lib /${ARG_INSTALL_DESTINATION} /${CMAKE_INSTALL_LIBDIR})
    set(link ${CMAKE_COMMAND} -E env HIPSTACK_HIPCC_NO_RPATH=1 ${HIPSTACK_HIPCC} -Wl,-rpath,$ORIGIN/${to_lib})
  endif()
  add_custom_command(OUTPUT ${program} COMMAND ${link} ${flags} ${objects} -o ${program}
                     DEPENDS ${objects} COMMENT "hipcc: linking ${name}" VERBATIM COMMAND_EXPAND_LISTS)
  add_custom_target(${name} ALL DEPENDS ${program})
  set_target_properties(${name} PROPERTIES HIPSTACK_HIP_FILE ${program})
endfunction()
