# Findlibdeflate: the target libdeflate::libdeflate. libdeflate 1.15 and later install a CMake
# package (libdeflate::libdeflate_shared / _static), used when found; older ones (Debian 12's
# libdeflate-dev 1.14) only a header and a library. Installed beside spmvConfig.cmake for
# find_dependency(libdeflate).
find_package(libdeflate CONFIG QUIET)
if(NOT TARGET libdeflate::libdeflate)
  if(TARGET libdeflate::libdeflate_shared OR TARGET libdeflate::libdeflate_static)
    add_library(libdeflate::libdeflate INTERFACE IMPORTED)
    target_link_libraries(libdeflate::libdeflate INTERFACE
      $<IF:$<TARGET_EXISTS:libdeflate::libdeflate_shared>,libdeflate::libdeflate_shared,libdeflate::libdeflate_static>)
    set(LIBDEFLATE_LIBRARY libdeflate::libdeflate)
    set(LIBDEFLATE_INCLUDE_DIR libdeflate::libdeflate)
  else()
    find_path(LIBDEFLATE_INCLUDE_DIR libdeflate.h)
    find_library(LIBDEFLATE_LIBRARY deflate)
    if(LIBDEFLATE_INCLUDE_DIR AND LIBDEFLATE_LIBRARY)
      add_library(libdeflate::libdeflate UNKNOWN IMPORTED)
      set_target_properties(libdeflate::libdeflate PROPERTIES IMPORTED_LOCATION "${LIBDEFLATE_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${LIBDEFLATE_INCLUDE_DIR}")
    endif()
  endif()
else()
  set(LIBDEFLATE_LIBRARY libdeflate::libdeflate)
  set(LIBDEFLATE_INCLUDE_DIR libdeflate::libdeflate)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(libdeflate REQUIRED_VARS LIBDEFLATE_LIBRARY LIBDEFLATE_INCLUDE_DIR)
