# deb and rpm packages of the in-tree components, made by CPack (docs/packaging.md).
#
#   cmake -S . -B build-pkg -G Ninja -DHIPSTACK_PACKAGING=ON && cmake --build build-pkg && (cd build-pkg && cpack)
#
# HIPSTACK_PACKAGING=ON lays the build out for packages: the prefix /opt/hipstack-X.Y.Z (/opt/hipstack is
# an alternatives link to the newest installed release), the system's files (systemd unit, sysusers,
# tmpfiles, D-Bus policy, /etc/hipstack) at the system's own absolute paths, and compiler flags that keep
# build paths out of the binaries, so two builds give identical packages. Such a build is for cpack: its
# `cmake --install` writes to those system paths. Included before GNUInstallDirs; the top-level
# CMakeLists.txt calls hipstack_packaging_configure() once every folder has made its install rules.
include_guard(GLOBAL)

option(HIPSTACK_PACKAGING "Lay the build out for deb/rpm packages made by cpack (docs/packaging.md)" OFF)
# Metapackages made outside this build that `hipstack` also depends on (comma-separated, same release):
# the superbuild passes the ones it makes of the AMD runtime (superbuild/components.json, metapackages).
set(HIPSTACK_PACKAGE_META_ALL_EXTRA "" CACHE STRING "More unversioned packages the hipstack metapackage depends on")
# The HIP runtime the validation kernels link to, when it is packaged outside this build (the superbuild's
# relocated libamdhip64 in hipstack-amd-runtimeX.Y.Z): the validation package depends on that package
# by name, and dpkg-shlibdeps finds the library in its staged folder (a private folder: no Debian
# package is named for it). Empty: the kernels link to the system's HIP and shlibdeps names its package.
set(HIPSTACK_PACKAGE_HIP_RUNTIME "" CACHE STRING "The package of this release holding the HIP runtime the validation kernels use")
set(HIPSTACK_PACKAGE_HIP_RUNTIME_LIBDIR "" CACHE PATH "Where that package's libraries are staged while cpack runs")
# A release track other than the default one (the superbuild's --track, docs/superbuild.md) adds its
# suffix to the version in the versioned packages' names and in the prefix: hipstack-smi-lib0.1.0-rocm7.2
# in /opt/hipstack-0.1.0-rocm7.2, so that the two tracks' releases co-install.
set(HIPSTACK_PACKAGE_TRACK_SUFFIX "" CACHE STRING "What the release track adds to the version in package names and the prefix (e.g. -rocm7.2)")
if(NOT HIPSTACK_PACKAGE_TRACK_SUFFIX MATCHES "^(-[a-z0-9][a-z0-9.]*)?$")
  message(FATAL_ERROR "HIPSTACK_PACKAGE_TRACK_SUFFIX '${HIPSTACK_PACKAGE_TRACK_SUFFIX}': empty, or '-' then lower case letters, digits and dots")
endif()
set(HIPSTACK_PACKAGE_NAME_VERSION ${PROJECT_VERSION}${HIPSTACK_PACKAGE_TRACK_SUFFIX})
set(HIPSTACK_PACKAGE_LINK /opt/hipstack)
set(HIPSTACK_PACKAGE_PREFIX ${HIPSTACK_PACKAGE_LINK}-${HIPSTACK_PACKAGE_NAME_VERSION})

if(HIPSTACK_PACKAGING)
  # The packages' prefix is part of their design (alternatives, the unit's ExecStart): not a choice.
  if(NOT CMAKE_INSTALL_PREFIX STREQUAL HIPSTACK_PACKAGE_PREFIX)
    message(STATUS "HIPSTACK_PACKAGING: install prefix ${HIPSTACK_PACKAGE_PREFIX}")
    set(CMAKE_INSTALL_PREFIX ${HIPSTACK_PACKAGE_PREFIX} CACHE PATH "Install prefix" FORCE)
  endif()
endif()
include(GNUInstallDirs)
# Where the hipstack Python package installs (smi-lib/python), relative to the prefix.
set(HIPSTACK_PYTHON_DIR ${CMAKE_INSTALL_LIBDIR}/python3/dist-packages)

if(HIPSTACK_PACKAGING)
  set(HIPSTACK_SYSTEMD_UNITDIR /usr/lib/systemd/system)
  set(HIPSTACK_SYSUSERSDIR /usr/lib/sysusers.d)
  set(HIPSTACK_TMPFILESDIR /usr/lib/tmpfiles.d)
  set(HIPSTACK_DBUS_SYSTEMDIR /usr/share/dbus-1/system.d)
  set(HIPSTACK_CONFDIR /etc/hipstack)
  set(HIPSTACK_CONFDIR_FULL /etc/hipstack)
  # The unit starts the release /opt/hipstack points at, so one unit serves every installed release.
  set(HIPSTACK_SMID_EXEC ${HIPSTACK_PACKAGE_LINK}/${CMAKE_INSTALL_SBINDIR}/hipstack-smid)
  # Debug information names a fixed path for this checkout instead of the source and build folders, so
  # binaries (and their build IDs) do not depend on the build folder. cpack makes that path a link to
  # the sources (cpack-project-config.cmake), where CPack's rpm debuginfo step finds and packages them;
  # it must be longer than the rpm's /usr/src/debug/hipstack-X.Y.Z/src_0, hence the hash. The build
  # folder's mapping comes last, so it wins where the build folder is inside the source tree.
  # Build-tree RUNPATHs relative to the binary ($ORIGIN/../smi-lib) rather than the build folder's path,
  # which would otherwise be linked into the binary (and its build ID) before install rewrites it.
  set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
  # Folders that install() creates are 0755 whatever the builder's umask (002 and 027 are common),
  # so the packages' folder modes do not depend on who built them.
  set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
      WORLD_READ WORLD_EXECUTE)
  string(SHA1 source_hash "${PROJECT_SOURCE_DIR}")
  string(SUBSTRING ${source_hash} 0 16 source_hash)
  set(HIPSTACK_DEBUG_SOURCE_DIR /tmp/hipstack-${PROJECT_VERSION}-source-${source_hash})
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-ffile-prefix-map=${PROJECT_SOURCE_DIR}=${HIPSTACK_DEBUG_SOURCE_DIR}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-ffile-prefix-map=${PROJECT_BINARY_DIR}=${HIPSTACK_DEBUG_SOURCE_DIR}/build>)
else()
  set(HIPSTACK_SYSTEMD_UNITDIR lib/systemd/system)
  set(HIPSTACK_SYSUSERSDIR lib/sysusers.d)
  set(HIPSTACK_TMPFILESDIR lib/tmpfiles.d)
  set(HIPSTACK_DBUS_SYSTEMDIR ${CMAKE_INSTALL_DATADIR}/dbus-1/system.d)
  set(HIPSTACK_CONFDIR ${CMAKE_INSTALL_SYSCONFDIR}/hipstack)
  set(HIPSTACK_CONFDIR_FULL ${CMAKE_INSTALL_FULL_SYSCONFDIR}/hipstack)
  set(HIPSTACK_SMID_EXEC ${CMAKE_INSTALL_FULL_SBINDIR}/hipstack-smid)
endif()

# The project states no licence (no LICENSE file): the packages say so rather than name one
# (superbuild/packaging/copyright, docs/packaging.md).
set(HIPSTACK_PACKAGE_LICENSE "LicenseRef-hipstack-no-license-stated")
set(_hipstack_packaging_dir ${CMAKE_CURRENT_LIST_DIR}/../packaging)
include(${CMAKE_CURRENT_LIST_DIR}/HipstackPackagingFiles.cmake)

# Install components and the packages they make. Versioned packages (name ends in X.Y.Z) hold the
# release's files under /opt/hipstack-X.Y.Z, so releases co-install; the unversioned ones depend on
# the versioned packages of their own release and pull the newest when upgraded.
#   component      package                    contents
#   smi_lib        hipstack-smi-libX.Y.Z      libhipstack-smi.so.*; owns the /opt/hipstack alternative
#   devel          hipstack-smi-devX.Y.Z      headers, CMake package, pkg-config, the .so link
#   runtime        hipstack-smi-cliX.Y.Z      hipstack-smi, hipstack-smi-remote (and hipstack-info)
#   daemon         hipstack-monitorX.Y.Z      hipstack-smid, the gRPC .proto
#   validation     hipstack-validationX.Y.Z   hipstack-validate, thresholds, kernel programs
#   hip_headers    hipstack-hip-portabilityX.Y.Z  the HIP portability headers (include/hipstack-hip)
#   python         python3-hipstackX.Y.Z      the hipstack Python package (lib/python3/dist-packages/hipstack)
#   daemon_system  hipstack-monitor           unit, sysusers, tmpfiles, D-Bus policy, /etc/hipstack
#   meta_smi       hipstack-smi               links to hipstack-smi and hipstack-info man pages, completions
#   meta_dev       hipstack-smi-dev           (depends only: devel, hip_headers)
#   meta_validation hipstack-validation       links to hipstack-validate man page, completions
#   meta_python    python3-hipstack           hipstack.pth: /opt/hipstack's Python package on every Python's path
#   meta_all       hipstack                   (depends only: smi, monitor, validation, python3-hipstack)
# Opt-in drop-ins for nodes without NVIDIA's tools (docs/packaging.md, "Drop-ins"); never pulled in by
# another package of ours:
#   meta_pynvml    python3-hipstack-pynvml    pynvml.py: `import pynvml` is hipstack.pynvml (conflicts with
#                                             and provides python3-pynvml)
#   meta_nvidia_smi hipstack-nvidia-smi       /usr/bin/nvidia-smi, an alternative for hipstack-smi, which
#                                             answers as nvidia-smi by that name (conflicts with nvidia-smi)
set(_hipstack_versioned_components smi_lib devel runtime daemon validation hip_headers python)
set(_hipstack_package_smi_lib hipstack-smi-lib${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_devel hipstack-smi-dev${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_runtime hipstack-smi-cli${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_daemon hipstack-monitor${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_validation hipstack-validation${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_hip_headers hipstack-hip-portability${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_python python3-hipstack${HIPSTACK_PACKAGE_NAME_VERSION})
set(_hipstack_package_daemon_system hipstack-monitor)
set(_hipstack_package_meta_smi hipstack-smi)
set(_hipstack_package_meta_dev hipstack-smi-dev)
set(_hipstack_package_meta_validation hipstack-validation)
set(_hipstack_package_meta_python python3-hipstack)
set(_hipstack_package_meta_all hipstack)
set(_hipstack_package_meta_pynvml python3-hipstack-pynvml)
set(_hipstack_package_meta_nvidia_smi hipstack-nvidia-smi)

set(_hipstack_summary_smi_lib "GPU telemetry library of hipstack ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_devel "Headers, CMake and pkg-config files of libhipstack-smi ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_runtime "GPU management command line of hipstack ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_daemon "GPU monitoring daemon of hipstack ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_validation "GPU node validation of hipstack ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_hip_headers "HIP portability headers (HIP on CUDA) of hipstack ${HIPSTACK_PACKAGE_NAME_VERSION}")
set(_hipstack_summary_python "Python package of libhipstack-smi ${HIPSTACK_PACKAGE_NAME_VERSION} (import hipstack)")
set(_hipstack_summary_daemon_system "System service of the hipstack GPU monitoring daemon")
set(_hipstack_summary_meta_smi "GPU management command line of hipstack (metapackage)")
set(_hipstack_summary_meta_dev "Development files of libhipstack-smi (metapackage)")
set(_hipstack_summary_meta_validation "GPU node validation of hipstack (metapackage)")
set(_hipstack_summary_meta_python "Python package of libhipstack-smi (import hipstack)")
set(_hipstack_summary_meta_all "Open GPU compute stack for AMD and NVIDIA GPUs (metapackage)")
set(_hipstack_summary_meta_pynvml "Python module pynvml answered by hipstack for AMD and NVIDIA GPUs")
set(_hipstack_summary_meta_nvidia_smi "Command nvidia-smi answered by hipstack-smi for AMD and NVIDIA GPUs")

# Package descriptions: lines under 80 characters (lintian, rpmlint).
set(_hipstack_description_common
    "hipstack is an open GPU compute stack for AMD and NVIDIA GPUs.\nVersioned packages install under /opt/hipstack-X.Y.Z, so releases\nco-install; /opt/hipstack points at the newest installed release\n(update-alternatives --config hipstack picks another).")
set(_hipstack_description_meta "\nThis metapackage depends on the packages of its own release.")

function(hipstack_packaging_configure)
  # Every install component must map to a package, or its files would silently be left out.
  get_cmake_property(components COMPONENTS)
  set(known ${_hipstack_versioned_components} daemon_system meta_smi meta_validation meta_python meta_pynvml)
  foreach(component IN LISTS components)
    if(NOT component IN_LIST known)
      message(FATAL_ERROR "install component '${component}' has no package: add it to the table in "
                          "superbuild/cmake/HipstackPackaging.cmake (or install into a known component)")
    endif()
  endforeach()
  if(NOT HIPSTACK_PACKAGING)
    return()
  endif()

  _hipstack_packaging_common()
  _hipstack_packaging_files("${components}")
  include(CPack)
endfunction()
