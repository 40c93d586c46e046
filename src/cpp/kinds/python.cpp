// A constraint written in Python (constraints.function.FunctionConstraint): its rows A,
// Phi and drift at (q, v) come from a Python callable that the loop calls where it
// writes any kind's rows, as MuJoCo calls its callbacks; the GIL taken around the call
// and what it returns checked (shapes, finite) as every array entering the core is.
// Its derivatives are the NumPy engine's (pfaff.derivatives): Differentiator refuses it.
#include <memory>
#include <string>

#include <nanobind/stl/string.h>

#include "../bind.hpp"
#include "../check.hpp"
#include "../core.hpp"

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
