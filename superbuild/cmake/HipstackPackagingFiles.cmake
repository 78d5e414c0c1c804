# The CPack settings and generated files behind HipstackPackaging.cmake: versions, SOURCE_DATE_EPOCH,
# changelogs, maintainer scripts and the per-package settings.

# Settings every package shares.
macro(_hipstack_packaging_common)
  set(HIPSTACK_PACKAGE_RELEASE 1)
  set(HIPSTACK_PACKAGE_FULL_VERSION ${PROJECT_VERSION}-${HIPSTACK_PACKAGE_RELEASE})
  # The newest release wins /opt/hipstack: major, minor and patch each get three decimal digits.
  math(EXPR HIPSTACK_ALTERNATIVES_PRIORITY
       "${PROJECT_VERSION_MAJOR} * 1000000 + ${PROJECT_VERSION_MINOR} * 1000 + ${PROJECT_VERSION_PATCH}")
  if(PROJECT_VERSION_MINOR GREATER 999 OR PROJECT_VERSION_PATCH GREATER 999 OR PROJECT_VERSION_MAJOR GREATER 2000)
    message(FATAL_ERROR "version ${PROJECT_VERSION}: the alternatives priority allows minor and patch up to 999")
  endif()

  # SOURCE_DATE_EPOCH: the environment's, else the last commit's time; every date in the packages is it.
  if(DEFINED ENV{SOURCE_DATE_EPOCH})
    set(HIPSTACK_SOURCE_DATE_EPOCH $ENV{SOURCE_DATE_EPOCH})
  else()
    find_package(Git QUIET)
    if(GIT_FOUND)
      execute_process(COMMAND ${GIT_EXECUTABLE} log -1 --format=%ct WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                      OUTPUT_VARIABLE HIPSTACK_SOURCE_DATE_EPOCH OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE git_rc ERROR_QUIET)
    endif()
    if(NOT GIT_FOUND OR NOT git_rc EQUAL 0)
      message(FATAL_ERROR "HIPSTACK_PACKAGING: set SOURCE_DATE_EPOCH (not a git checkout, so no commit time)")
    endif()
  endif()
  if(NOT HIPSTACK_SOURCE_DATE_EPOCH MATCHES "^[0-9]+$")
    message(FATAL_ERROR "SOURCE_DATE_EPOCH must be seconds since 1970, not '${HIPSTACK_SOURCE_DATE_EPOCH}'")
  endif()

  _hipstack_changelogs()

  set(CPACK_GENERATOR DEB RPM)
  set(CPACK_PACKAGE_NAME hipstack)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
  set(CPACK_PACKAGE_VENDOR hipstack)
  set(CPACK_PACKAGE_CONTACT "${HIPSTACK_PACKAGE_MAINTAINER}")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
  set(CPACK_PACKAGING_INSTALL_PREFIX ${HIPSTACK_PACKAGE_PREFIX})
  set(CPACK_PACKAGE_RELOCATABLE OFF)
  set(CPACK_RPM_PACKAGE_RELOCATABLE OFF)
  set(CPACK_OUTPUT_FILE_PREFIX packages)  # relative to the folder cpack runs in
  set(CPACK_DEB_COMPONENT_INSTALL ON)
  set(CPACK_RPM_COMPONENT_INSTALL ON)
  set(CPACK_COMPONENTS_GROUPING IGNORE)
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/packaging/cpack-project-config.cmake)
  set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_BINARY_DIR}/packaging/cpack-pre-build.cmake)
  set(CPACK_POST_BUILD_SCRIPTS ${_hipstack_packaging_dir}/cpack-post-build.cmake)

  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_RELEASE ${HIPSTACK_PACKAGE_RELEASE})
  set(CPACK_DEBIAN_PACKAGE_SECTION utils)
  set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
  set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # Our own library is found in the build tree; its dependency is declared by name below.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/smi-lib)
  if(HIPSTACK_PACKAGE_HIP_RUNTIME_LIBDIR)
    list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${HIPSTACK_PACKAGE_HIP_RUNTIME_LIBDIR})
  endif()
  set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

  set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
  set(CPACK_RPM_PACKAGE_RELEASE ${HIPSTACK_PACKAGE_RELEASE})
  set(CPACK_RPM_PACKAGE_LICENSE "${HIPSTACK_PACKAGE_LICENSE}")
  set(CPACK_RPM_PACKAGE_GROUP "System Environment/Base")
  set(CPACK_RPM_CHANGELOG_FILE ${PROJECT_BINARY_DIR}/packaging/rpm-changelog)
  set(CPACK_RPM_PACKAGE_AUTOREQ ON)
  set(CPACK_RPM_PACKAGE_AUTOPROV ON)
  set(CPACK_RPM_DEBUGINFO_PACKAGE ON)
  # The debug information names HIPSTACK_DEBUG_SOURCE_DIR (HipstackPackaging.cmake), a link to the
  # sources while cpack runs: the rpm debuginfo packages get the sources under this prefix.
  set(CPACK_BUILD_SOURCE_DIRS ${HIPSTACK_DEBUG_SOURCE_DIR})
  set(CPACK_RPM_BUILD_SOURCE_DIRS_PREFIX /usr/src/debug/hipstack-${PROJECT_VERSION})
  # Directories other packages own (the filesystem, systemd, D-Bus, man, the shells): never ours to list.
  set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
      /opt /usr/lib/systemd /usr/lib/systemd/system /usr/lib/sysusers.d /usr/lib/tmpfiles.d
      /usr/share/dbus-1 /usr/share/dbus-1/system.d /usr/share/doc /usr/lib/debug /usr/lib/debug/.build-id
      /usr/src/debug /usr/share/man /usr/share/man/man1 /usr/share/man/man8 /usr/share/bash-completion
      /usr/share/bash-completion/completions /usr/share/zsh /usr/share/zsh/vendor-completions /usr/share/fish
      /usr/share/fish/vendor_completions.d)
  # Reproducible rpms: fixed build host, build time and file times from SOURCE_DATE_EPOCH.
  set(CPACK_RPM_SPEC_MORE_DEFINE
      "%define _buildhost reproducible
%define use_source_date_epoch_as_buildtime 1
%define clamp_mtime_to_source_date_epoch 1
%define source_date_epoch_from_changelog 0
%define _build_id_links none")
endmacro()

# Debian changelogs (one per package, named after it) and the rpm %changelog, both from
# superbuild/packaging/changelog (Debian's format, package name "hipstack"). A version the file does not
# list (HIPSTACK_VERSION_OVERRIDE) gets an entry of its own saying what it is.
function(_hipstack_changelogs)
  file(READ ${_hipstack_packaging_dir}/changelog text)
  if(NOT text MATCHES "^hipstack \\(([0-9.]+)-[0-9]+\\) ")
    message(FATAL_ERROR "superbuild/packaging/changelog: the first entry is not in Debian's format")
  endif()
  set(top_version ${CMAKE_MATCH_1})
  string(REGEX MATCH "\n -- ([^<\n]+ <[^>\n]+>)  " _ "${text}")  # the first entry's maintainer
  set(maintainer "${CMAKE_MATCH_1}")
  set(HIPSTACK_PACKAGE_MAINTAINER "${maintainer}" PARENT_SCOPE)
  if(NOT top_version VERSION_EQUAL PROJECT_VERSION)
    set(ENV{SOURCE_DATE_EPOCH} ${HIPSTACK_SOURCE_DATE_EPOCH})  # string(TIMESTAMP) reads it
    string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
    set(text "hipstack (${HIPSTACK_PACKAGE_FULL_VERSION}) unstable; urgency=medium\n\n  * Build of version ${PROJECT_VERSION} (HIPSTACK_VERSION_OVERRIDE) from the ${top_version} sources.\n\n -- ${maintainer}  ${date}\n\n${text}")
  endif()
  file(WRITE ${PROJECT_BINARY_DIR}/packaging/changelog "${text}")

  # rpm: "* Sun Nov 22 2026 Name <mail> - 0.1.0-1" then the entry's "- item" lines. Line by line, with
  # the text's semicolons set aside (they would split CMake lists).
  string(REPLACE ";" "<semicolon>" lines "${text}")
  string(REPLACE "\n" ";" lines "${lines}")
  set(rpm "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^hipstack \\(([^)]+)\\)")
      set(version ${CMAKE_MATCH_1})
      set(items "")
    elseif(line MATCHES "^  \\* (.*)$")
      string(APPEND items "- ${CMAKE_MATCH_1}\n")
    elseif(line MATCHES "^    (.*)$")
      string(APPEND items "  ${CMAKE_MATCH_1}\n")
    elseif(line MATCHES "^ -- (.+>)  ([A-Z][a-z][a-z]), ([0-9]+) ([A-Z][a-z][a-z]) ([0-9]+) ")
      string(APPEND rpm "* ${CMAKE_MATCH_2} ${CMAKE_MATCH_4} ${CMAKE_MATCH_3} ${CMAKE_MATCH_5} ${CMAKE_MATCH_1} - ${version}\n"
                        "${items}\n")
    endif()
  endforeach()
  string(REPLACE "<semicolon>" ";" rpm "${rpm}")
  file(WRITE ${PROJECT_BINARY_DIR}/packaging/rpm-changelog "${rpm}")
endfunction()

# Per package: name, summary, dependencies, documentation files, maintainer scripts.
function(_hipstack_packaging_files components)
  set(out ${PROJECT_BINARY_DIR}/packaging)
  set(cpack_components "")
  foreach(component IN LISTS _hipstack_versioned_components)
    if(component IN_LIST components)
      list(APPEND cpack_components ${component})
    endif()
  endforeach()
  if(NOT smi_lib IN_LIST cpack_components)
    message(FATAL_ERROR "HIPSTACK_PACKAGING: the library (component smi_lib) is not built")
  endif()
  # Unversioned packages exist where the versioned package they stand for does.
  if(daemon IN_LIST cpack_components)
    list(APPEND cpack_components daemon_system)
  endif()
  if(runtime IN_LIST cpack_components)
    list(APPEND cpack_components meta_smi)
  endif()
  list(APPEND cpack_components meta_dev)
  if(validation IN_LIST cpack_components)
    list(APPEND cpack_components meta_validation)
  endif()
  if(python IN_LIST cpack_components)
    list(APPEND cpack_components meta_python meta_pynvml)
  endif()
  if(runtime IN_LIST cpack_components)
    list(APPEND cpack_components meta_nvidia_smi)
  endif()
  list(APPEND cpack_components meta_all)

  set(v "${HIPSTACK_PACKAGE_FULL_VERSION}")
  set(lib "${_hipstack_package_smi_lib}")
  # What each package depends on by name (the same in both formats); shlibdeps and rpm's autoreq add
  # the system libraries.
  set(depends_devel "${lib} (= ${v})")
  set(depends_runtime "${lib} (= ${v})")
  set(depends_daemon "${lib} (= ${v})")
  set(depends_validation "${lib} (= ${v})")
  if(HIPSTACK_PACKAGE_HIP_RUNTIME)
    string(APPEND depends_validation ", ${HIPSTACK_PACKAGE_HIP_RUNTIME} (= ${v})")
  endif()
  set(depends_hip_headers "${lib} (= ${v})")  # the /opt/hipstack alternative comes with the library
  set(depends_python "${lib} (= ${v}), python3")
  set(depends_meta_python "${_hipstack_package_python} (= ${v}), python3")
  set(depends_daemon_system "${_hipstack_package_daemon} (= ${v})")
  set(depends_meta_smi "${_hipstack_package_runtime} (= ${v})")
  set(depends_meta_dev "${_hipstack_package_devel} (= ${v})")
  if(hip_headers IN_LIST cpack_components)
    string(APPEND depends_meta_dev ", ${_hipstack_package_hip_headers} (= ${v})")
  endif()
  set(depends_meta_validation "${_hipstack_package_validation} (= ${v})")
  # The drop-ins work with any release (they go through /opt/hipstack and its Python package), so an
  # upgrade of hipstack does not need them upgraded with it.
  set(depends_meta_pynvml "${_hipstack_package_meta_python}, python3")
  set(depends_meta_nvidia_smi "${_hipstack_package_meta_smi}")
  set(depends_meta_all "")
  foreach(meta daemon_system meta_smi meta_validation meta_python)
    if(meta IN_LIST cpack_components)
      list(APPEND depends_meta_all "${_hipstack_package_${meta}} (= ${v})")
    endif()
  endforeach()
  string(REPLACE "," ";" extra "${HIPSTACK_PACKAGE_META_ALL_EXTRA}")
  foreach(package IN LISTS extra)
    list(APPEND depends_meta_all "${package} (= ${v})")
  endforeach()
  list(JOIN depends_meta_all ", " depends_meta_all)

  # Maintainer scripts (superbuild/packaging/deb and rpm).
  foreach(script deb/lib.postinst deb/lib.prerm deb/monitor.postinst deb/monitor.prerm deb/monitor.postrm deb/python.prerm
                 deb/pynvml.prerm deb/nvidia_smi.postinst deb/nvidia_smi.prerm
                 rpm/lib.post rpm/lib.postun rpm/monitor.post rpm/monitor.preun rpm/monitor.postun rpm/python.preun
                 rpm/pynvml.preun rpm/nvidia_smi.post rpm/nvidia_smi.postun)
    get_filename_component(dir ${script} DIRECTORY)
    get_filename_component(name ${script} NAME)
    string(REGEX REPLACE "^[a-z_]+\\." "" control_name ${name})
    set(target ${out}/${dir}/${name})
    if(dir STREQUAL deb)
      set(target ${out}/deb/${name}/${control_name})  # CONTROL_EXTRA wants the control file's own name
    endif()
    configure_file(${_hipstack_packaging_dir}/${script}.in ${target} @ONLY
                   FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
  file(WRITE ${out}/deb/monitor.conffiles/conffiles "${HIPSTACK_CONFDIR_FULL}/hipstack-smid.conf\n")

  set(deb_extra ${out}/deb-extra)
  file(REMOVE_RECURSE ${deb_extra})
  foreach(component IN LISTS cpack_components)
    string(TOUPPER ${component} C)
    set(package ${_hipstack_package_${component}})
    set(CPACK_DEBIAN_${C}_PACKAGE_NAME ${package} PARENT_SCOPE)
    set(CPACK_RPM_${C}_PACKAGE_NAME ${package} PARENT_SCOPE)
    set(CPACK_COMPONENT_${C}_DESCRIPTION "${_hipstack_summary_${component}}" PARENT_SCOPE)
    set(description "${_hipstack_description_common}")
    if(component MATCHES "^meta_")
      string(APPEND description "${_hipstack_description_meta}")
      set(CPACK_DEBIAN_${C}_PACKAGE_SECTION metapackages PARENT_SCOPE)
    endif()
    set(CPACK_DEBIAN_${C}_DESCRIPTION "${_hipstack_summary_${component}}\n${description}" PARENT_SCOPE)
    set(CPACK_RPM_${C}_PACKAGE_SUMMARY "${_hipstack_summary_${component}}" PARENT_SCOPE)
    set(CPACK_RPM_${C}_PACKAGE_DESCRIPTION "${description}" PARENT_SCOPE)
    if(DEFINED depends_${component})
      set(CPACK_DEBIAN_${C}_PACKAGE_DEPENDS "${depends_${component}}" PARENT_SCOPE)
      string(REPLACE "(= " "= " requires "${depends_${component}}")
      string(REPLACE ")" "" requires "${requires}")
      set(CPACK_RPM_${C}_PACKAGE_REQUIRES "${requires}" PARENT_SCOPE)
    endif()
    if(component MATCHES "^meta_|^daemon_system$|^hip_headers$|^python$")  # no binaries: one package for every arch
      set(CPACK_DEBIAN_${C}_PACKAGE_ARCHITECTURE all PARENT_SCOPE)
      set(CPACK_RPM_${C}_PACKAGE_ARCHITECTURE noarch PARENT_SCOPE)
    endif()
    install(FILES ${_hipstack_packaging_dir}/copyright DESTINATION /usr/share/doc/${package} COMPONENT ${component})
    # Debian-only files, added by cpack-pre-build.cmake to the deb's staging folder.
    file(READ ${out}/changelog text)
    string(REGEX REPLACE "(^|\n\n)hipstack \\(" "\\1${package} (" text "${text}")
    file(WRITE ${out}/changelog.${package} "${text}")
    file(MAKE_DIRECTORY ${deb_extra}/${component}/usr/share/doc/${package})
    execute_process(COMMAND gzip -9nc ${out}/changelog.${package}
                    OUTPUT_FILE ${deb_extra}/${component}/usr/share/doc/${package}/changelog.Debian.gz
                    COMMAND_ERROR_IS_FATAL ANY)
    if(component IN_LIST _hipstack_versioned_components)
      file(MAKE_DIRECTORY ${deb_extra}/${component}/usr/share/lintian/overrides)
      file(READ ${_hipstack_packaging_dir}/lintian-overrides overrides)
      string(REPLACE "@PACKAGE@" "${package}" overrides "${overrides}")
      file(WRITE ${deb_extra}/${component}/usr/share/lintian/overrides/${package} "${overrides}")
    endif()
  endforeach()

  # The library's package owns the /opt/hipstack alternative: every versioned package depends on it.
  set(CPACK_DEBIAN_SMI_LIB_PACKAGE_CONTROL_EXTRA "${out}/deb/lib.postinst/postinst;${out}/deb/lib.prerm/prerm"
      PARENT_SCOPE)
  set(CPACK_RPM_SMI_LIB_POST_INSTALL_SCRIPT_FILE ${out}/rpm/lib.post PARENT_SCOPE)
  set(CPACK_RPM_SMI_LIB_POST_UNINSTALL_SCRIPT_FILE ${out}/rpm/lib.postun PARENT_SCOPE)
  set(CPACK_RPM_SMI_LIB_PACKAGE_REQUIRES_POST /usr/sbin/update-alternatives PARENT_SCOPE)
  set(CPACK_RPM_SMI_LIB_PACKAGE_REQUIRES_POSTUN /usr/sbin/update-alternatives PARENT_SCOPE)
  # The Python package: the bytecode Python wrote beside it goes with it.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_CONTROL_EXTRA "${out}/deb/python.prerm/prerm" PARENT_SCOPE)
  set(CPACK_RPM_PYTHON_PRE_UNINSTALL_SCRIPT_FILE ${out}/rpm/python.preun PARENT_SCOPE)
  # The drop-ins: each takes the place of NVIDIA's own (docs/packaging.md, "Drop-ins"). pynvml.py
  # stands in for python3-pynvml, the dependency of Debian's gpustat and nvitop; nvidia-smi is an
  # alternative in /usr/bin, where NVIDIA's package puts its own program.
  set(CPACK_DEBIAN_META_PYNVML_PACKAGE_CONFLICTS "python3-pynvml" PARENT_SCOPE)
  set(CPACK_DEBIAN_META_PYNVML_PACKAGE_REPLACES "python3-pynvml" PARENT_SCOPE)
  set(CPACK_DEBIAN_META_PYNVML_PACKAGE_PROVIDES "python3-pynvml" PARENT_SCOPE)
  set(CPACK_DEBIAN_META_PYNVML_PACKAGE_CONTROL_EXTRA "${out}/deb/pynvml.prerm/prerm" PARENT_SCOPE)
  set(CPACK_DEBIAN_META_PYNVML_PACKAGE_SECTION python PARENT_SCOPE)
  set(CPACK_RPM_META_PYNVML_PACKAGE_CONFLICTS "python3-pynvml, python3-nvidia-ml-py" PARENT_SCOPE)
  set(CPACK_RPM_META_PYNVML_PACKAGE_PROVIDES "python3-pynvml" PARENT_SCOPE)
  set(CPACK_RPM_META_PYNVML_PRE_UNINSTALL_SCRIPT_FILE ${out}/rpm/pynvml.preun PARENT_SCOPE)
  set(CPACK_DEBIAN_META_NVIDIA_SMI_PACKAGE_CONFLICTS "nvidia-smi" PARENT_SCOPE)
  set(CPACK_DEBIAN_META_NVIDIA_SMI_PACKAGE_CONTROL_EXTRA "${out}/deb/nvidia_smi.postinst/postinst;${out}/deb/nvidia_smi.prerm/prerm"
      PARENT_SCOPE)
  set(CPACK_RPM_META_NVIDIA_SMI_PACKAGE_CONFLICTS "nvidia-smi, nvidia-driver-cuda" PARENT_SCOPE)
  set(CPACK_RPM_META_NVIDIA_SMI_POST_INSTALL_SCRIPT_FILE ${out}/rpm/nvidia_smi.post PARENT_SCOPE)
  set(CPACK_RPM_META_NVIDIA_SMI_POST_UNINSTALL_SCRIPT_FILE ${out}/rpm/nvidia_smi.postun PARENT_SCOPE)
  set(CPACK_RPM_META_NVIDIA_SMI_PACKAGE_REQUIRES_POST /usr/sbin/update-alternatives PARENT_SCOPE)
  set(CPACK_RPM_META_NVIDIA_SMI_PACKAGE_REQUIRES_POSTUN /usr/sbin/update-alternatives PARENT_SCOPE)
  # The system's side of the daemon: its user, systemd's view of the unit, the conffile.
  set(CPACK_DEBIAN_DAEMON_SYSTEM_PACKAGE_CONTROL_EXTRA
      "${out}/deb/monitor.postinst/postinst;${out}/deb/monitor.prerm/prerm;${out}/deb/monitor.postrm/postrm;${out}/deb/monitor.conffiles/conffiles"
      PARENT_SCOPE)
  set(CPACK_RPM_DAEMON_SYSTEM_POST_INSTALL_SCRIPT_FILE ${out}/rpm/monitor.post PARENT_SCOPE)
  set(CPACK_RPM_DAEMON_SYSTEM_PRE_UNINSTALL_SCRIPT_FILE ${out}/rpm/monitor.preun PARENT_SCOPE)
  set(CPACK_RPM_DAEMON_SYSTEM_POST_UNINSTALL_SCRIPT_FILE ${out}/rpm/monitor.postun PARENT_SCOPE)
  set(CPACK_RPM_DAEMON_SYSTEM_USER_FILELIST "%config(noreplace) ${HIPSTACK_CONFDIR_FULL}/hipstack-smid.conf"
      PARENT_SCOPE)
  set(CPACK_COMPONENTS_ALL ${cpack_components} PARENT_SCOPE)

  # The validation kernels' HIP runtime: named by debian/shlibs.local in the deb (the package config's
  # own dependency would come twice), by name in the rpm.
  set(shlibs_local "")
  if(HIPSTACK_PACKAGE_HIP_RUNTIME AND HIPSTACK_PACKAGE_HIP_RUNTIME_LIBDIR AND validation IN_LIST cpack_components)
    set(shlibs_local "if(CPACK_GENERATOR STREQUAL \"DEB\")
  set(hip_runtime_package ${HIPSTACK_PACKAGE_HIP_RUNTIME})
  set(hip_runtime_version ${v})
  set(hip_runtime_libdir ${HIPSTACK_PACKAGE_HIP_RUNTIME_LIBDIR})
  include(${_hipstack_packaging_dir}/cpack-shlibs-local.cmake)
endif()
")
    set(CPACK_DEBIAN_VALIDATION_PACKAGE_DEPENDS "${lib} (= ${v})" PARENT_SCOPE)
  endif()
  file(WRITE ${out}/cpack-pre-build.cmake
"# Generated by superbuild/cmake/HipstackPackagingFiles.cmake. Packages without files under the prefix
# (unversioned ones) do not list its folder, which CPack makes in every package's staging folder.
foreach(component ${cpack_components})
  set(prefix \${CPACK_TEMPORARY_INSTALL_DIRECTORY}/\${component}${HIPSTACK_PACKAGE_PREFIX})
  file(GLOB inside \${prefix}/*)
  if(IS_DIRECTORY \${prefix} AND NOT inside)
    file(REMOVE_RECURSE \${prefix})
    get_filename_component(parent \${prefix} DIRECTORY)
    file(GLOB inside \${parent}/*)
    if(NOT inside)
      file(REMOVE_RECURSE \${parent})
    endif()
  endif()
endforeach()
# rpm: shared libraries executable while rpmbuild runs, as its debuginfo step strips executables only
# (rpm's brp-elfperms then takes the bits off again, as for any rpm; Debian wants 0644 throughout).
if(CPACK_GENERATOR STREQUAL \"RPM\")
  file(GLOB_RECURSE libraries \${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.so.*)
  foreach(library IN LISTS libraries)
    if(NOT IS_SYMLINK \${library})
      file(CHMOD \${library} FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                              WORLD_READ WORLD_EXECUTE)
    endif()
  endforeach()
endif()
# Debian's changelog.Debian.gz and lintian overrides go into the debs only (rpm has its %changelog).
if(CPACK_GENERATOR STREQUAL \"DEB\")
  foreach(component ${cpack_components})
    file(COPY ${deb_extra}/\${component}/ DESTINATION \${CPACK_TEMPORARY_INSTALL_DIRECTORY}/\${component})
  endforeach()
endif()
${shlibs_local}")
  file(WRITE ${out}/cpack-project-config.cmake
"# Generated by superbuild/cmake/HipstackPackagingFiles.cmake: dates in the archives (deb) and the rpm
# headers come from SOURCE_DATE_EPOCH; the configure step's value unless cpack's environment has one.
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  set(ENV{SOURCE_DATE_EPOCH} ${HIPSTACK_SOURCE_DATE_EPOCH})
endif()
# The path the debug information names (HipstackPackaging.cmake) leads to the sources.
# Two cpack runs side by side (tests/packaging/make_packages.sh) may both find it missing: the one
# that loses the race finds the other's link.
if(NOT EXISTS ${HIPSTACK_DEBUG_SOURCE_DIR})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR} ${HIPSTACK_DEBUG_SOURCE_DIR} SYMBOLIC RESULT link_result)
  if(NOT EXISTS ${HIPSTACK_DEBUG_SOURCE_DIR})
    message(FATAL_ERROR \"cannot link ${HIPSTACK_DEBUG_SOURCE_DIR} to the sources: \${link_result}\")
  endif()
endif()
")
endfunction()
