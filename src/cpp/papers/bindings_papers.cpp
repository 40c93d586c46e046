// pfaff._papers: the compiled laws and plants of papers, kept out of the step core
// pfaff._core (design.md Sec. 1): the controllers' per-sample kernels (control.hpp:
// ControlKernel, TaskBlock, YZKernel, YZGrasp) and the compiled Yoshikawa-Zheng samples
// (yz_sample.hpp: YZRigidBox, YZPinnedPlane, YZServo). A new paper's law is a file here
// and its binding, with no change to the step core. The bindings and their boundary
// checks are in bind_control.cpp; the Python face is pfaff.core (control_kernel, yz_*).
#include <nanobind/nanobind.h>

namespace pfaff
{
  void bind_control(nanobind::module_ & m); // bind_control.cpp
}

NB_MODULE(_papers, m)
{
  m.doc() = "pfaff's compiled laws and plants of papers (controllers' kernels, the "
            "Yoshikawa-Zheng samples); see pfaff.core";
  pfaff::bind_control(m);
}
