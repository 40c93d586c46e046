// A constraint written in Python (constraints.function.FunctionConstraint): its rows A,
// Phi and drift at (q, v) come from a Python callable that the loop calls where it
// writes any kind's rows, as MuJoCo calls its callbacks; the GIL taken around the call
// and what it returns checked (shapes, finite) as every array entering the core is.
// Its derivative rows are central differences of those rows, as the NumPy reference
// takes them (pfaff.derivatives.terms).
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(Python, 0, 0, 1)
#include <algorithm>
#include <memory>
#include <string>

#include <nanobind/stl/string.h>

#include "bindings/bind.hpp"
#include "model/check.hpp"
#include "model/core.hpp"
#include "algorithms/kind_derivatives.hpp"

#include "pinocchio/algorithm/joint-configuration.hpp"

namespace nb = nanobind;

namespace pfaff
{
  namespace kinds
  {
    void check_Python(const Model &, const Spec & s, const Check & c)
    {
      if (!s.law)
        c.fail("spec.law is not set: a Python constraint needs its rows (Spec.set_law)");
    }

    void Python(const Model & mo, Data & d, const Spec & s, const RowOut & out)
    {
      const int nv = mo.model.nv;
      const VecX v = d.vref_ ? *d.vref_ : VecX::Zero(nv);
      MatX A(s.dim, nv);
      VecX phi = VecX::Zero(s.dim), drift = VecX::Zero(s.dim);
      (*s.law)(out.q, v, out.with_drift, A, phi, drift);
      if (!out.rows_stand)
      {
        d.A.middleRows(out.row, s.dim) = A;
        if (!s.pfaffian)
          d.phi.segment(out.hrow, s.dim) = phi;
      }
      d.drift.segment(out.row, s.dim) = out.with_drift ? drift : VecX::Zero(s.dim);
    }

    // central differences of the rows (pfaff.derivatives.terms._fd_rows' steps): q moved
    // as integrate(q, +-h e_k), h = 1e-5; v by +-hv e_k, hv = 1e-3 max(1, |v|_max) (the
    // drift is quadratic in v: its difference is exact but for rounding)
    void derive_Python(KindDerivatives & kd, const Spec & s, int row)
    {
      const auto & model = kd.mo.model;
      const int nv = kd.nv, m = kd.m, dim = s.dim;
      const VecX &q = *kd.q, &v = *kd.v, &a = *kd.a;
      const double h = 1e-5, hv = 1e-3 * std::max(1.0, nv ? v.cwiseAbs().maxCoeff() : 0.0);
      MatX Ap(dim, nv), Am(dim, nv);
      VecX phi(dim), dp(dim), dm(dim), e = VecX::Zero(nv), qp(model.nq), qm(model.nq);
      VecX vp = v, vm = v;
      for (int k = 0; k < nv; ++k)
      {
        e.setZero();
        e(k) = h;
        pinocchio::integrate(model, q, e, qp);
        pinocchio::integrate(model, q, -e, qm);
        (*s.law)(qp, v, true, Ap, phi, dp);
        (*s.law)(qm, v, true, Am, phi, dm);
        kd.dAB.block(k * m + row, 0, dim, nv) = (Ap - Am) / (2.0 * h);
        dp.noalias() += Ap * a;
        dm.noalias() += Am * a;
        kd.X.block(row, k, dim, 1) = (dp - dm) / (2.0 * h);
        vp(k) = v(k) + hv;
        vm(k) = v(k) - hv;
        (*s.law)(q, vp, true, Ap, phi, dp);
        (*s.law)(q, vm, true, Am, phi, dm);
        kd.X.block(row, nv + k, dim, 1) = (dp - dm) / (2.0 * hv);
        vp(k) = vm(k) = v(k);
      }
    }
  } // namespace kinds

  namespace
  {
    /// the rows law of a Python callable (q, v, with_drift) -> (A, Phi, drift), each
    /// checked against its shape and finiteness; `name` names it in messages
    RowsLaw python_rows(nb::callable fn, std::string name)
    {
      const auto held = held_callable(std::move(fn));
      return [held, name](const VecX & q, const VecX & v, bool with_drift, Eigen::Ref<MatX> A,
                          Eigen::Ref<VecX> phi, Eigen::Ref<VecX> drift) {
        nb::gil_scoped_acquire gil;
        nb::object out = (*held)(q, v, with_drift);
        const Check c{name.c_str()};
        nb::tuple t;
        if (!nb::try_cast(out, t) || nb::len(t) != 3)
          c.fail("the rows returned " + std::string(nb::str(nb::type_name(out.type())).c_str())
                 + ", expected a tuple (A, Phi, drift): A (dim, nv), Phi (dim,), drift (dim,)");
        const auto Ag = nb::cast<GMat>(t[0]);
        c.mat(Ag, A.rows(), A.cols(), "A", "(dim, nv): the constraint's rows");
        const auto pg = nb::cast<GVec>(t[1]);
        c.vec(pg, phi.size(), "Phi", "dim: the residual (zeros for a Pfaffian constraint)");
        const auto dg = nb::cast<GVec>(t[2]);
        c.vec(dg, drift.size(), "drift", "dim: A'(q, v) v");
        A = Ag.x;
        phi = pg.x;
        drift = dg.x;
      };
    }
  } // namespace

  void bind_python_rows(nb::class_<Spec> & spec)
  {
    spec.def(
      "set_law",
      [](Spec & s, nb::callable law, bool pfaffian, std::string name) {
        s.law = std::make_shared<const RowsLaw>(python_rows(std::move(law), std::move(name)));
        s.pfaffian = pfaffian;
      },
      nb::arg("law"), nb::arg("pfaffian"), nb::arg("name"),
      "the rows (q, v, with_drift) -> (A, Phi, drift) of a constraint written in Python "
      "(kind Python), called where the loop writes the rows; pfaffian: A v = 0 rows, no Phi");
    spec.def_ro("pfaffian", &Spec::pfaffian);
  }
} // namespace pfaff
