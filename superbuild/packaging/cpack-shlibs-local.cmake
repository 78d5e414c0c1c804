# Included by the generated cpack-pre-build.cmake (HipstackPackagingFiles.cmake) for the debs, with
# hip_runtime_package, hip_runtime_version and hip_runtime_libdir set.
#
# The validation kernels link the release's own HIP runtime, staged and owned by no installed package.
# dpkg-shlibdeps reads debian/shlibs.local in the folder it runs in (the component's staging folder,
# whose debian/ CPackDeb makes and removes again before the archive is made) before any other source,
# so each staged runtime library (lib<name>.so.<major>) names the release's runtime package. Without
# it dpkg-shlibdeps falls through to Debian's libamdhip64-5 where that is installed.
file(GLOB libraries RELATIVE ${hip_runtime_libdir} ${hip_runtime_libdir}/lib*.so.*)
set(lines "")
foreach(library IN LISTS libraries)
  if(library MATCHES "^(lib.+)\\.so\\.([0-9]+)$")
    string(APPEND lines "${CMAKE_MATCH_1} ${CMAKE_MATCH_2} ${hip_runtime_package} (= ${hip_runtime_version})\n")
  endif()
endforeach()
if(lines STREQUAL "")
  message(FATAL_ERROR "cpack-shlibs-local.cmake: no lib*.so.<major> in ${hip_runtime_libdir}: the HIP runtime is not staged")
endif()
file(WRITE ${CPACK_TEMPORARY_INSTALL_DIRECTORY}/validation/debian/shlibs.local "${lines}")
