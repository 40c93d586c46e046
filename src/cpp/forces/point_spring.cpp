// PFAFF_FORCE(PointSpring, 2, 0)
// A spring between two points (pfaff.simulate.forces_point.PointSpring): s = |p1 - p2| - L0,
// T = k s + k3 s^3,  Q = -(J1 - J2)^T e T,  V = k s^2 / 2 + k3 s^4 / 4  (L0 = 0, k3 = 0:
// Q = -k (J1 - J2)^T d, defined at d = 0 too). With d = p1 - p2, r = |d|, Q = -(T/r) J^T d:
//   dQ_k = -(T/r)(dJ_k^T d + J^T J_k) - (T'/r - T/r^2)(e . J_k) J^T d
#include "algorithms/force_element.hpp"

namespace pfaff::force_elements
{
  void check_PointSpring(const Model &, const ForceSpec &, const Check &) {}

  bool PointSpring(const ForceSpec & s, const State & x, ForceTerms & out)
  {
    two_points(x.frames, s, out);
    const double r = out.d.norm();
    if (s.L0 == 0.0 && s.k3 == 0.0)
    {
      out.Q.noalias() -= s.k * (out.J.transpose() * out.d);
      out.V += 0.5 * s.k * r * r;
      return true;
    }
    if (r == 0.0)
      return false; // direction undefined (the NumPy engine raises)
    const double e = r - s.L0;
    const double T = s.k * e + s.k3 * e * e * e;
    out.V += 0.5 * s.k * e * e + 0.25 * s.k3 * e * e * e * e;
    out.Q.noalias() -= (T / r) * (out.J.transpose() * out.d);
    return true;
  }

  void partials_PointSpring(const ForceSpec & s, Partials & p)
  {
    const int nv = int(p.J.cols());
    Vec3 d = p.d;
    if (!p.two)
      d -= s.target;
    const double r = d.norm();
    double a = s.k, b = 0.0; // Q = -a J^T d; b = d a / d r / r
    if (!(s.L0 == 0.0 && s.k3 == 0.0))
    {
      if (r == 0.0)
      {
        p.dQq(0, 0) = std::numeric_limits<double>::quiet_NaN();
        return;
      }
      const double e = r - s.L0;
      const double T = s.k * e + s.k3 * e * e * e, Tp = s.k + 3.0 * s.k3 * e * e;
      a = T / r;
      b = (Tp / r - T / (r * r)) / r;
    }
    const VecX JTd = p.J.transpose() * d;
    for (int k = 0; k < nv; ++k)
    {
      const Vec3 Jk = p.J.col(k);
      p.dQq.col(k) -= a * (p.dJ(k).transpose() * d + p.J.transpose() * Jk) + b * d.dot(Jk) * JTd;
    }
  }
} // namespace pfaff::force_elements
