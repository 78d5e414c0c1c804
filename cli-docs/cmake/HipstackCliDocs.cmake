# Man page and shell completions of a program, made at build time by running it with
# `--generate-docs KIND` (cli-docs/src/cli_docs.hpp), so they say what its --help says; installed with
# the program's component. docs/cli.md, "Man pages and completion".
#
#   hipstack_cli_docs(TARGET SECTION 1|8 COMPONENT component SYSTEM_COMPONENT component)
#
# A packaging build installs them under the release's prefix (COMPONENT, a versioned package) and
# links where man, bash-completion, zsh and fish look (/usr/share/...) to the same files through
# /opt/hipstack, in SYSTEM_COMPONENT (an unversioned package): the links serve whichever release the
# alternative points at, as the systemd unit does.
function(hipstack_cli_docs target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SECTION;COMPONENT;SYSTEM_COMPONENT" "")
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cli-docs)
  set(man ${dir}/${target}.${arg_SECTION}.gz)
  set(bash ${dir}/bash/${target})
  set(zsh ${dir}/zsh/_${target})
  set(fish ${dir}/fish/${target}.fish)
  set(script ${PROJECT_SOURCE_DIR}/cli-docs/cmake/generate_cli_docs.cmake)
  set(outputs "")
  foreach(kind_file IN ITEMS "man|${man}" "bash|${bash}" "zsh|${zsh}" "fish|${fish}")
    string(REPLACE "|" ";" kind_file "${kind_file}")
    list(GET kind_file 0 kind)
    list(GET kind_file 1 file)
    add_custom_command(OUTPUT ${file}
                       COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${target}> -DKIND=${kind} -DOUT=${file} -P ${script}
                       DEPENDS ${target} ${script}
                       COMMENT "${target} --generate-docs ${kind}"
                       VERBATIM)
    list(APPEND outputs ${file})
  endforeach()
  add_custom_target(${target}-cli-docs ALL DEPENDS ${outputs})
  install(FILES ${man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${arg_SECTION} COMPONENT ${arg_COMPONENT})
  install(FILES ${bash} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT ${arg_COMPONENT})
  install(FILES ${zsh} DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT ${arg_COMPONENT})
  install(FILES ${fish} DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT ${arg_COMPONENT})
  if(NOT HIPSTACK_PACKAGING)
    return()
  endif()
  foreach(entry IN ITEMS "${CMAKE_INSTALL_MANDIR}/man${arg_SECTION}|${target}.${arg_SECTION}.gz"
                         "${CMAKE_INSTALL_DATADIR}/bash-completion/completions|${target}"
                         "${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions|_${target}"
                         "${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d|${target}.fish")
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 folder)
    list(GET entry 1 name)
    file(MAKE_DIRECTORY ${dir}/system/${folder})
    file(CREATE_LINK ${HIPSTACK_PACKAGE_LINK}/${folder}/${name} ${dir}/system/${folder}/${name} SYMBOLIC)
    install(FILES ${dir}/system/${folder}/${name} DESTINATION /usr/${folder} COMPONENT ${arg_SYSTEM_COMPONENT})
  endforeach()
endfunction()
