# Prints the Debian packages of the manifest's system components of a release track (TRACK; empty: the
# default one), one a line (the first of
# alternatives), for scripts/deps.sh superbuild:
#   cmake -DMANIFEST=superbuild/components.json [-DTRACK=name] -P superbuild/cmake/system_packages.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/HipstackManifest.cmake)
hipstack_manifest_load(${MANIFEST} "${TRACK}")
set(names)
foreach(name ${HS_COMPONENTS})
  if(HS_${name}_KIND STREQUAL "system")
    hipstack_manifest_get(deb ${name} origin deb)
    hipstack_json_array(entries "${deb}")
    foreach(entry ${entries})
      string(REGEX REPLACE "\\|.*$" "" first "${entry}")
      hipstack_system_names(n "${first}")
      list(APPEND names ${n})
    endforeach()
  endif()
endforeach()
list(REMOVE_DUPLICATES names)
list(JOIN names "\n" text)
execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${text}")
