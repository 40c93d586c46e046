// PFAFF_FORCE(PointForce, 1, 0)
// A constant world force F on a body point (pfaff.simulate.forces_point.PointForce):
// Q = J_p^T F,  V = -F . p;  dQ_k = dJ_k^T F
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_PointForce(const Model &, const ForceSpec &, const Check &) {}

  bool PointForce(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    Vec3 p;
    point(x.frames[s.s1], s.has_p1, s.p1, p, out.J);
    out.Q.noalias() += out.J.transpose() * s.F;
    out.V -= s.F.dot(p);
    return true;
  }

  void partials_PointForce(const ForceSpec & s, Partials & p)
  {
    const int nv = int(p.J.cols());
    for (int k = 0; k < nv; ++k)
      p.dQq.col(k) += p.dJ(k).transpose() * s.F;
  }
} // namespace pfaff::force_elements
