# Small wrappers so every linnet library and tool is declared the same way.

# add_linnet_library(name sources... LINK libs...)
function(add_linnet_library name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wimplicit-fallthrough -Wno-unused-parameter)
endfunction()

# add_linnet_tool(name sources... LINK libs...)
function(add_linnet_tool name)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${ARG_LINK})
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wimplicit-fallthrough -Wno-unused-parameter)
endfunction()
