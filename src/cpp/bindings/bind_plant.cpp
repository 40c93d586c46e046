// A mechanism given in closed form (pfaff.plant): its per-state terms come from a Python
// callable (its Mechanism.compute) that the loop calls where it computes the terms of a
// Pinocchio model (terms.cpp: the dynamics pass, the kinematics pass, M at the
// corrected q, gravity's g), as MuJoCo calls its callbacks; the GIL taken around the
// call and what it returns checked (shapes, finite, M symmetric) as every array
// entering the core is, the messages naming the mechanism and the quantity.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nanobind/stl/string.h>

#include "bindings/bind.hpp"
#include "model/check.hpp"
#include "sim/system.hpp"

namespace nb = nanobind;

namespace pfaff
{
  namespace
  {
    /// the plant law of a Python callable (q, v or None, names, dynamics, extras) ->
    /// (M, h, g, potential, frames), frames one (p, R, J, drift) per name; `name`
    /// names the mechanism in messages
    PlantLaw python_plant(nb::callable fn, std::string name, int nv)
    {
      const auto held = held_callable(std::move(fn));
      return [held, name, nv](
               const VecX & q, const VecX & v, bool with_v, const std::vector<std::string> & names,
               std::vector<FrameKin> * frames, bool dynamics, bool extras, PlantTerms & out) {
        nb::gil_scoped_acquire gil;
        nb::list py_names;
        for (const auto & n : names)
          py_names.append(nb::str(n.c_str()));
        const nb::object vel = with_v ? nb::cast(v) : nb::object(nb::none());
        nb::object r = (*held)(q, vel, py_names, dynamics, extras);
        const Check c{name.c_str()};
        nb::tuple t;
        if (!nb::try_cast(r, t) || nb::len(t) != 5)
          c.fail("the terms returned " + std::string(nb::type_name(r.type()).c_str())
                 + ", expected a tuple (M, h, g, potential, frames)");
        if (dynamics)
        {
          const auto M = nb::cast<GMat>(t[0]);
          c.mat(M, nv, nv, "M", "(nv, nv): the joint-space inertia matrix");
          const auto h = nb::cast<GVec>(t[1]);
          c.vec(h, nv, "h", "nv: the bias C(q, v) v + g(q)");
          const double asym = (M.x - M.x.transpose()).cwiseAbs().maxCoeff();
          if (!(asym <= 1e-9 * std::max(1.0, M.x.cwiseAbs().maxCoeff())))
            c.fail("M is not symmetric: max |M - M^T| = " + std::to_string(asym)
                   + " (the joint-space inertia matrix is symmetric positive definite)");
          out.M = M.x;
          out.h = h.x;
        }
        if (extras)
        {
          const auto g = nb::cast<GVec>(t[2]);
          c.vec(g, nv, "g", "nv: the gravity torque, h at v = 0");
          double V = 0.0;
          const nb::object pot = t[3];
          if (!nb::try_cast(pot, V))
            c.fail("potential is " + std::string(nb::type_name(pot.type()).c_str())
                   + ", expected a number (J)");
          c.number(V, "potential", -HUGE_VAL, false);
          out.g = g.x;
          out.potential = V;
        }
        if (!frames)
          return;
        nb::list fl;
        const nb::object fo = t[4];
        if (!nb::try_cast(fo, fl) || nb::len(fl) != names.size())
          c.fail("frames is not a list of " + std::to_string(names.size())
                 + " (p, R, J, drift), one per frame asked for");
        for (size_t i = 0; i < names.size(); ++i)
        {
          const std::string at = "frame '" + names[i] + "' ";
          nb::tuple ft;
          const nb::object fi = fl[i];
          if (!nb::try_cast(fi, ft) || nb::len(ft) != 4)
            c.fail(at + "is not a tuple (p, R, J, drift)");
          FrameKin & f = (*frames)[i];
          const auto p = nb::cast<GVec>(ft[0]);
          c.vec(p, 3, (at + "p").c_str(), "3: the origin's world position");
          const auto R = nb::cast<GMat>(ft[1]);
          c.mat(R, 3, 3, (at + "R").c_str(), "(3, 3): the frame's axes in the world");
          const auto J = nb::cast<GMat>(ft[2]);
          c.mat(J, 6, nv, (at + "J").c_str(), "(6, nv): world-aligned, linear rows first");
          f.p = p.x;
          f.R = R.x;
          f.J = J.x;
          if (with_v)
          {
            const auto a = nb::cast<GVec>(ft[3]);
            c.vec(a, 6, (at + "drift").c_str(), "6: J' v at a = 0, linear then angular");
            f.drift = a.x;
            f.w.noalias() = f.J.bottomRows<3>() * v;
          }
          else
          {
            f.drift.setZero();
            f.w.setZero();
          }
        }
      };
    }
  } // namespace

  void bind_plant(nb::class_<System> & cls)
  {
    cls.def(
      "set_plant",
      [](System & s, nb::callable terms, std::string name) {
        s.set_plant(std::make_shared<const PlantLaw>(
          python_plant(std::move(terms), std::move(name), s.nv())));
      },
      nb::arg("terms"), nb::arg("name"),
      "the per-state terms (q, v or None, names, dynamics, extras) -> (M, h, g, potential, "
      "frames) of a mechanism given in closed form (pfaff.plant), which the loop calls "
      "where it computes a Pinocchio model's terms; frames one (p, R, J, drift) per name");
    cls.def_prop_ro("has_plant", [](const System & s) { return bool(s.mo().plant); });
  }
} // namespace pfaff
