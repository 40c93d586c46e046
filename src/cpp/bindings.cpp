#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include "core.hpp"
namespace nb = nanobind;
NB_MODULE(_core, m)
{
  m.def("nv_of", [](const std::string & s) { return pfaff::load_model(s).nv; });
}
