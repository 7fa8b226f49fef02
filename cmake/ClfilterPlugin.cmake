# clf_embed_kernels(<target> <symbol-prefix> <files...>): compiles each .cl/.clh into <target> as a
# string constant named <prefix>_<basename> (dots become underscores), rebuilt when the file changes.
function(clf_embed_kernels target prefix)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs "${src}" ABSOLUTE)
    get_filename_component(base "${src}" NAME)
    string(MAKE_C_IDENTIFIER "${prefix}_${base}" symbol)
    set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.cpp")
    add_custom_command(OUTPUT "${out}"
      COMMAND ${CMAKE_COMMAND} -DINPUT=${abs} -DOUTPUT=${out} -DSYMBOL=${symbol}
              -P "${CLF_EMBED_SCRIPT}"
      DEPENDS "${abs}" "${CLF_EMBED_SCRIPT}" VERBATIM)
    target_sources(${target} PRIVATE "${out}")
  endforeach()
endfunction()

# clf_add_plugin(<name> SOURCES <cpp...> KERNELS <cl...>): one filter plugin, a self-contained
# shared module placed where the core finds it (<libdir>/clfilter/plugins).
function(clf_add_plugin name)
  cmake_parse_arguments(P "" "" "SOURCES;KERNELS" ${ARGN})
  add_library(clf_plugin_${name} MODULE ${P_SOURCES})
  set_target_properties(clf_plugin_${name} PROPERTIES OUTPUT_NAME ${name} PREFIX "libclf_"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(CLF_PLUGIN_OUTPUT_DIR)
    set_target_properties(clf_plugin_${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CLF_PLUGIN_OUTPUT_DIR})
  endif()
  target_link_libraries(clf_plugin_${name} PRIVATE clfilter::core)
  if(P_KERNELS)
    clf_embed_kernels(clf_plugin_${name} ${name} ${P_KERNELS})
  endif()
  if(CLF_PLUGIN_INSTALL_DIR)
    # <prefix>/lib/clfilter/plugins -> <prefix>/lib, where libclfilter lives.
    set_target_properties(clf_plugin_${name} PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
    install(TARGETS clf_plugin_${name} LIBRARY DESTINATION ${CLF_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
