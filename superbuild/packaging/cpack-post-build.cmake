# Run by cpack after it made the packages (CPACK_POST_BUILD_SCRIPTS). CMake 3.25's -dbgsym .ddeb files
# list their files in DEBIAN/md5sums by the absolute path of cpack's staging folder instead of the
# path in the package: wrong for dpkg --verify, and different for every build folder. This writes the
# right paths and packs the .ddeb again with dpkg-deb (reproducible: SOURCE_DATE_EPOCH is set).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
foreach(package IN LISTS CPACK_PACKAGE_FILES)
  if(NOT package MATCHES "\\.ddeb$")
    continue()
  endif()
  set(tree ${CPACK_TOPLEVEL_DIRECTORY}/ddeb-repack)
  file(REMOVE_RECURSE ${tree})
  execute_process(COMMAND dpkg-deb --raw-extract ${package} ${tree} COMMAND_ERROR_IS_FATAL ANY)
  file(READ ${tree}/DEBIAN/md5sums sums)
  string(REGEX REPLACE "  [^\n]*/usr/lib/debug/" "  usr/lib/debug/" fixed "${sums}")
  if(NOT fixed STREQUAL sums)
    file(WRITE ${tree}/DEBIAN/md5sums "${fixed}")
    execute_process(COMMAND dpkg-deb --root-owner-group -Zxz --build ${tree} ${package}
                    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  endif()
  file(REMOVE_RECURSE ${tree})
endforeach()
