// The binding of the derivatives of the projection dynamics (derivatives.hpp): the
// Python face is System.forward_dynamics_derivatives(..., engine="core") via pfaff.core.
#include <cmath>
#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "bind.hpp"
#include "derivatives.hpp"

namespace nb = nanobind;
using namespace nb::literals;

void pfaff::bind_derivatives(nb::module_ & m)
{
  nb::class_<Differentiator>(m, "Differentiator")
    .def(nb::init<System &>(), "system"_a, nb::keep_alive<1, 2>(),
         "derivatives of the projection dynamics of `system` (analytic kinds only)")
    .def(
      "compute",
      [](Differentiator & d, const GVec & q, const GVec & v, const GVec & tau) {
        const Check c{"Differentiator.compute"};
        System & s = d.system();
        c.vec(q, s.nq(), "q", "nq").vec(v, s.nv(), "v", "nv").vec(tau, s.nv(), "tau", "nv");
        c.number(s.opt.rank_tol, "options.rank_tol", 0.0, false);
        d.compute(q, v, tau);
        const DynamicsDerivatives & out = d.result();
        // one array (a single conversion to NumPy): a, lam, F, sigma, then the matrices,
        // each row by row: da_dq, da_dv, da_dtau, dF_dq, dF_dv, dF_dtau (nv x nv),
        // dlam_dq, dlam_dv, dlam_dtau (m x nv)
        const Eigen::Index n = out.a.size(), r = out.lam.size(), k = out.sigma.size();
        VecX blob(2 * n + r + k + 6 * n * n + 3 * r * n);
        Eigen::Index at = 0;
        auto put = [&](const auto & x) {
          Eigen::Map<RowMat>(blob.data() + at, x.rows(), x.cols()) = x;
          at += x.size();
        };
        put(out.a), put(out.lam), put(out.F), put(out.sigma);
        put(out.da_dq), put(out.da_dv), put(out.da_dtau);
        put(out.dF_dq), put(out.dF_dv), put(out.dF_dtau);
        put(out.dlam_dq), put(out.dlam_dv), put(out.dlam_dtau);
        return nb::make_tuple(blob, out.rank, out.radius);
      },
      "q"_a, "v"_a, "tau"_a,
      "(blob, rank, rank_radius): a, lam, F, sigma and the derivatives in q (tangent), v, "
      "tau, packed (pfaff.core.differentiate unpacks them)");
}
