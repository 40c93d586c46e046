// The binding of the derivatives of the projection dynamics (derivatives.hpp): the
// Python face is System.forward_dynamics_derivatives(..., engine="core") via pfaff.core.
#include <cmath>
#include <string>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "bindings/bind.hpp"
#include "algorithms/dense_product.hpp"
#include "algorithms/derivatives.hpp"
#include "sim/system.hpp"

namespace nb = nanobind;
using namespace nb::literals;

void pfaff::bind_derivatives(nb::module_ & m)
{
  // the result: each field a NumPy view of the struct's own array (kept alive by it),
  // matrices column-major as Eigen holds them
  auto view = [](auto member) {
    return [member](DynamicsDerivatives & d) -> auto & { return d.*member; };
  };
  nb::class_<DynamicsDerivatives> r(m, "DynamicsDerivatives",
    "the projection dynamics at (q, v, tau) and their derivatives in q (tangent), v, tau "
    "(pfaff.derivatives.DynamicsDerivatives is the Python face)");
  r.def_prop_ro("rank", [](const DynamicsDerivatives & d) { return d.rank; })
    .def_prop_ro("rank_radius", [](const DynamicsDerivatives & d) { return d.radius; });
#define PFAFF_FIELD(name)                                                                   \
  r.def_prop_ro(#name, view(&DynamicsDerivatives::name), nb::rv_policy::reference_internal);
  PFAFF_FIELD(a) PFAFF_FIELD(lam) PFAFF_FIELD(F) PFAFF_FIELD(sigma)
#undef PFAFF_FIELD
  // the derivatives: views of the blocks of da, dlam, dF (q, v, tau side by side)
  auto block = [](MatX DynamicsDerivatives::*field, int which) {
    return [field, which](DynamicsDerivatives & d) {
      return DynamicsDerivatives::block(d.*field, which);
    };
  };
#define PFAFF_BLOCKS(field)                                                                 \
  r.def_prop_ro(#field "_dq", block(&DynamicsDerivatives::field, 0),                         \
                nb::rv_policy::reference_internal)                                          \
    .def_prop_ro(#field "_dv", block(&DynamicsDerivatives::field, 1),                        \
                 nb::rv_policy::reference_internal)                                         \
    .def_prop_ro(#field "_dtau", block(&DynamicsDerivatives::field, 2),                      \
                 nb::rv_policy::reference_internal);
  PFAFF_BLOCKS(da) PFAFF_BLOCKS(dF) PFAFF_BLOCKS(dlam)
#undef PFAFF_BLOCKS

  // the derivatives' dense product alone, for its tests against NumPy's
  m.def("fma_kernel", &detail::fma_kernel,
        "whether the derivatives' dense products run on the AVX2 + FMA kernel (the CPU has "
        "both and PFAFF_NO_AVX2 is unset) or on Eigen's");
  m.def(
    "dense_product",
    [](const GMat & l, const GMat & r, const GMat & c, double alpha, bool accumulate) {
      const Check ck{"dense_product"};
      ck.mat(l, -1, -1, "l", "m x k").mat(r, l.x.cols(), -1, "r", "k x n, k = l's columns");
      if (accumulate)
        ck.mat(c, l.x.rows(), r.x.cols(), "c", "m x n, accumulated into");
      else
        ck.mat(c, -1, -1, "c", "any shape: overwritten");
      MatX out = c.x, scratch;
      detail::product(out, l.x, r.x, alpha, accumulate, scratch);
      MatX out_t = c.x; // the same product with l given transposed (evaluated first)
      const MatX lt = l.x.transpose();
      detail::product(out_t, lt.transpose(), r.x, alpha, accumulate, scratch);
      return std::make_pair(out, out_t);
    },
    "l"_a, "r"_a, "c"_a, "alpha"_a, "accumulate"_a,
    "(c + alpha l r or alpha l r, the same with l passed as a transpose) by the "
    "derivatives' dense product (pfaff's tests hold it to NumPy's)");

  nb::class_<Differentiator>(m, "Differentiator")
    .def(
      "__init__",
      [](Differentiator * self, System & s) {
        new (self) Differentiator(s.mo(), s.d());
      },
      "system"_a, nb::keep_alive<1, 2>(),
      "derivatives of the projection dynamics of `system` (its Model, its Data for the "
      "terms; a held control law's torque is the caller's tau)")
    .def(
      "compute",
      [](Differentiator & d, const GVec & q, const GVec & v, const GVec & tau) {
        const Check c{"Differentiator.compute"};
        const Model & s = d.model();
        c.vec(q, s.nq(), "q", "nq").vec(v, s.nv(), "v", "nv").vec(tau, s.nv(), "tau", "nv");
        c.number(s.opt.rank_tol, "options.rank_tol", 0.0, false);
        d.compute(q, v, tau);
        return d.take(); // its own arrays, moved out: the next call makes new ones
      },
      "q"_a, "v"_a, "tau"_a,
      "a DynamicsDerivatives: a, lam, F, sigma, rank, rank_radius and the derivatives "
      "da_dq, da_dv, da_dtau, dF_*, dlam_* (q in the tangent space)");
}
