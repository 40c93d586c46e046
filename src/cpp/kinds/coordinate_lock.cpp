// sum_j c_j q_j - value = 0: a linear combination of one-dof joint coordinates held at a
// value (constraints.tendon.CoordinateLock; a fixed tendon's length held at its limit)
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(CoordinateLock, 1, 0, 1)
#include <cmath>
#include <string>

#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  void check_CoordinateLock(const Model & mo, const Spec & s, const Check & c)
  {
    if (s.coefs.empty() || s.iqs.size() != s.coefs.size() || s.ivs.size() != s.coefs.size())
      c.fail("spec.iqs, spec.ivs, spec.coefs: one q index, v index and coefficient each, "
             "at least one (got " + std::to_string(s.iqs.size()) + ", "
             + std::to_string(s.ivs.size()) + ", " + std::to_string(s.coefs.size()) + ")");
    bool any = false;
    for (size_t j = 0; j < s.coefs.size(); ++j)
    {
      c.index(s.iqs[j], mo.model.nq, "spec.iqs[j]", "a q index (nq)");
      c.index(s.ivs[j], mo.model.nv, "spec.ivs[j]", "a v index (nv)");
      c.number(s.coefs[j], "spec.coefs[j]", -HUGE_VAL, false);
      any = any || s.coefs[j] != 0.0;
    }
    if (!any)
      c.fail("spec.coefs are all 0: the combination constrains nothing");
    c.number(s.value, "spec.value", -HUGE_VAL, false);
  }

  void CoordinateLock(const Model &, Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row;
    double phi = -s.value;
    d.A.row(row).setZero();
    for (size_t j = 0; j < s.coefs.size(); ++j)
    {
      phi += s.coefs[j] * out.q(s.iqs[j]);
      d.A(row, s.ivs[j]) += s.coefs[j];
    }
    d.phi(out.hrow) = phi;
    d.drift(row) = 0.0;
  }

  // A constant, drift identically zero: no derivative rows
  void derive_CoordinateLock(KindDerivatives &, const Spec &, int) {}
} // namespace pfaff::kinds
