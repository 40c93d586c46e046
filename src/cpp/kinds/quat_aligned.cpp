// vec(q_e) = 0, MuJoCo's weld orientation residual (constraints.quat_aligned)
#include <cmath>

#include "../check.hpp"
#include "../core.hpp"

namespace pfaff::kinds
{
  void check_QuatAligned(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.s1, long(mo.frame_slots.size()), "spec.s1", "a frame slot of add_frame");
  }

  void QuatAligned(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    quat_rows(d, s, out);
  }
} // namespace pfaff::kinds
