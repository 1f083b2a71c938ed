# Whether the Python module (python/) can be built: Python 3 with its headers and pybind11
# (CONFIG). Sets SPMV_PYTHON_DEPS_FOUND; searched quietly, only for a top-level build or when
# SPMV_BUILD_PYTHON is asked for.
set(SPMV_PYTHON_DEPS_FOUND OFF)
if((PROJECT_IS_TOP_LEVEL AND NOT DEFINED SPMV_BUILD_PYTHON) OR SPMV_BUILD_PYTHON)
  # The first python3 on PATH that has numpy and scipy, which the module and its tests use (a pyenv
  # or conda shim ahead of the system Python may lack them); -DPython3_EXECUTABLE=... overrides.
  if(NOT Python3_EXECUTABLE)
    string(REPLACE ":" ";" _spmv_path "$ENV{PATH}")
    foreach(_dir IN LISTS _spmv_path)
      if(EXISTS "${_dir}/python3")
        execute_process(COMMAND "${_dir}/python3" -c "import numpy, scipy"
          RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
        if(_rc EQUAL 0)
          set(Python3_EXECUTABLE "${_dir}/python3" CACHE FILEPATH "Python for the spmv module")
          break()
        endif()
      endif()
    endforeach()
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(SPMV_PYTHON_DEPS_FOUND ON)
  endif()
endif()
