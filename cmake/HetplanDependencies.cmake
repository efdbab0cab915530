# hetplan_require(<package> <min version or ""> <debian package> [extra find_package args...])
# Finds a dependency and, when it is missing, stops at configure time naming the Debian package.
macro(hetplan_require pkg version debian)
  find_package(${pkg} ${version} QUIET ${ARGN})
  if(NOT ${pkg}_FOUND)
    if("${version}" STREQUAL "")
      set(_hetplan_need "${pkg}")
    else()
      set(_hetplan_need "${pkg} >= ${version}")
    endif()
    message(FATAL_ERROR "hetplan needs ${_hetplan_need}. On Debian 12: apt-get install ${debian} "
                        "(or run scripts/install-deps.sh).")
  endif()
endmacro()
