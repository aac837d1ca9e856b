# whd_reuse_cuda_objects(FROM): link the CUDA objects of the build folder FROM (a
# build of this same source tree) in place of compiling each .cu file again.
#
# For the sanitizer build (WHD_SANITIZE): its instrumentation reaches host C++ code
# only, and nvcc's objects are linked in uninstrumented, so compiling them a second
# time (about a fifth of that build's time) buys nothing. FROM must be built first
# (scripts/sanitize.sh builds it); each target's link then depends on FROM's object,
# so a .cu file rebuilt there is relinked here. A .cu file whose object FROM lacks is
# compiled here as before.

# Every target defined in directory DIR and below.
function(_whd_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _whd_targets_below(${sub} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(whd_reuse_cuda_objects from)
  get_filename_component(from "${from}" ABSOLUTE)
  if(from STREQUAL CMAKE_BINARY_DIR)
    message(FATAL_ERROR "WHD_CUDA_OBJECTS_FROM names this build folder itself (${from})")
  endif()
  _whd_targets_below(${CMAKE_SOURCE_DIR} targets)
  set(nof_reused 0)
  set(compiled)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    get_target_property(source_dir ${t} SOURCE_DIR)
    get_target_property(binary_dir ${t} BINARY_DIR)
    file(RELATIVE_PATH bin_rel ${CMAKE_BINARY_DIR} ${binary_dir})
    set(new_sources)
    set(changed FALSE)
    foreach(s IN LISTS sources)
      if(s MATCHES "\\.cu$")
        get_filename_component(abs "${s}" ABSOLUTE BASE_DIR ${source_dir})
        file(RELATIVE_PATH rel ${source_dir} ${abs})
        # CMake names a source's object after its path under the target's folder.
        set(object "${from}/${bin_rel}/CMakeFiles/${t}.dir/${rel}.o")
        if(NOT rel MATCHES "^\\.\\./" AND EXISTS "${object}")
          list(APPEND new_sources "${object}")
          set(changed TRUE)
          math(EXPR nof_reused "${nof_reused} + 1")
          continue()
        endif()
        list(APPEND compiled "${t}:${rel}")
      endif()
      list(APPEND new_sources "${s}")
    endforeach()
    if(changed)
      set_property(TARGET ${t} PROPERTY SOURCES ${new_sources})
    endif()
  endforeach()
  message(STATUS "CUDA objects: ${nof_reused} linked from ${from}")
  if(compiled)
    list(JOIN compiled ", " compiled)
    message(STATUS "CUDA objects not found there, compiled here: ${compiled}")
  endif()
endfunction()
