# forces.def, the list of the compiled core's force elements, from their files: each
# src/cpp/forces/<snake_case>.cpp begins with its declaration
# "// PFAFF_FORCE(Name, points, gravity)" (src/cpp/model/forces.hpp says what the
# columns mean), Name its file's name in CamelCase. forces.def is those lines, in the order of
# `sources` (the ForceKind enum's order: nothing depends on it), written only when it
# changes. CMakeLists.txt includes this file; as a script it writes FORCES_DEF from the
# files in FORCES_DIR: cmake -DFORCES_DIR=... -DFORCES_DEF=... -P cmake/forces_def.cmake
function(pfaff_forces_def out)
  set(def "// Generated from the first line of each src/cpp/forces/*.cpp (cmake/forces_def.cmake)\n")
  foreach(source ${ARGN})
    file(STRINGS "${source}" declaration LIMIT_COUNT 1)
    get_filename_component(file_name "${source}" NAME_WE)
    string(REGEX MATCH "^// PFAFF_FORCE\\(([A-Za-z0-9]+), [0-2], [01]\\)$" found "${declaration}")
    string(REGEX REPLACE "([a-z0-9])([A-Z])" "\\1_\\2" snake "${CMAKE_MATCH_1}")
    string(TOLOWER "${snake}" snake)
    if(NOT found OR NOT snake STREQUAL file_name)
      message(FATAL_ERROR "pfaff: ${source} must begin with its declaration "
                          "'// PFAFF_FORCE(Name, points, gravity)': Name the file's name in "
                          "CamelCase, points 0, 1 or 2, gravity 0 or 1 "
                          "(src/cpp/model/forces.hpp); its first line is '${declaration}'")
    endif()
    string(SUBSTRING "${declaration}" 3 -1 declaration)
    string(APPEND def "${declaration}\n")
  endforeach()
  file(CONFIGURE OUTPUT "${out}" CONTENT "${def}" @ONLY)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  file(GLOB sources "${FORCES_DIR}/*.cpp")
  pfaff_forces_def("${FORCES_DEF}" ${sources})
endif()
