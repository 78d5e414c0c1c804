# Run by cpack after it made the packages (CPACK_POST_BUILD_SCRIPTS). CMake 3.25's -dbgsym .ddeb files
# list their files in DEBIAN/md5sums by the absolute path of cpack's staging folder instead of the
# path in the package: wrong for dpkg --verify, and different for every build folder. This writes the
# right paths into a new control member and puts the package together again with ar, keeping its
# data member as cpack compressed it: packing it again with dpkg-deb compressed the debug files a
# second time, about a minute of the two-core machine (docs/testing.md, "Margins"). Reproducible:
# the control member's times are SOURCE_DATE_EPOCH's, owners root, names sorted, and ar writes its
# headers deterministically (D).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
if(NOT "$ENV{SOURCE_DATE_EPOCH}" MATCHES "^[0-9]+$")
  message(FATAL_ERROR "cpack-post-build.cmake: SOURCE_DATE_EPOCH is not set (cpack-project-config.cmake sets it)")
endif()
foreach(package IN LISTS CPACK_PACKAGE_FILES)
  if(NOT package MATCHES "\\.ddeb$")
    continue()
  endif()
  set(tree ${CPACK_TOPLEVEL_DIRECTORY}/ddeb-repack)
  file(REMOVE_RECURSE ${tree})
  file(MAKE_DIRECTORY ${tree}/control)
  execute_process(COMMAND ar x ${package} WORKING_DIRECTORY ${tree} COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ar t ${package} OUTPUT_VARIABLE members COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX REPLACE "\n$" "" members "${members}")
  string(REPLACE "\n" ";" members "${members}")
  if(NOT members MATCHES "^debian-binary;control\\.tar\\.(gz|xz);data\\.tar\\.[a-z]+$")
    message(FATAL_ERROR "cpack-post-build.cmake: ${package} holds '${members}', not debian-binary, control.tar.gz or .xz, data.tar.*")
  endif()
  set(control_compression ${CMAKE_MATCH_1})  # written again the same way: CPack's is gzip
  execute_process(COMMAND tar -xf ${tree}/control.tar.${control_compression} -C ${tree}/control COMMAND_ERROR_IS_FATAL ANY)
  file(READ ${tree}/control/md5sums sums)
  string(REGEX REPLACE "  [^\n]*/usr/lib/debug/" "  usr/lib/debug/" fixed "${sums}")
  if(NOT fixed STREQUAL sums)
    file(WRITE ${tree}/control/md5sums "${fixed}")
    file(REMOVE ${tree}/control.tar.${control_compression})
    execute_process(COMMAND tar --format=gnu --sort=name --mtime=@$ENV{SOURCE_DATE_EPOCH} --owner=0 --group=0
                            --numeric-owner --mode=u=rwX,go=rX -cf ${tree}/control.tar -C ${tree}/control .
                    COMMAND_ERROR_IS_FATAL ANY)
    if(control_compression STREQUAL "gz")
      execute_process(COMMAND gzip -9 --no-name ${tree}/control.tar COMMAND_ERROR_IS_FATAL ANY)
    else()
      execute_process(COMMAND xz -6 --threads=1 ${tree}/control.tar COMMAND_ERROR_IS_FATAL ANY)
    endif()
    file(REMOVE ${package})
    execute_process(COMMAND ar rcD ${package} ${members} WORKING_DIRECTORY ${tree} COMMAND_ERROR_IS_FATAL ANY)
  endif()
  file(REMOVE_RECURSE ${tree})
endforeach()
