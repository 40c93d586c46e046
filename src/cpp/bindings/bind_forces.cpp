// The binding of the force elements' specs (forces.hpp): their kinds, their fields, and
// a law written in Python (ForceKind::Python) called from the loop: the GIL taken
// around the call, what it returns checked (shape nv, finite) as every array entering
// the core is.
#include <memory>
#include <string>

#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "model/forces.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace pfaff
{
  namespace
  {
    /// the law (t, q, v) -> (Q, V) of a Python callable, Q checked against nv and
    /// finiteness; `name` names it in messages
    ForceLaw python_law(nb::callable fn, std::string name)
    {
      const auto held = held_callable(std::move(fn));
      return [held, name](double t, const Eigen::VectorXd & q, const Eigen::VectorXd & v,
                          Eigen::VectorXd & Q) -> double {
        nb::gil_scoped_acquire gil;
        nb::object out = (*held)(t, q, v);
        const Check c{name.c_str()};
        nb::tuple pair;
        if (!nb::try_cast(out, pair) || nb::len(pair) != 2)
          c.fail("the law returned " + std::string(nb::str(nb::type_name(out.type())).c_str())
                 + ", expected a tuple (Q, V): Q of shape (nv,), V a number (0 if none)");
        Given<Eigen::VectorXd> Qg = nb::cast<Given<Eigen::VectorXd>>(pair[0]);
        c.vec(Qg, Q.size(), "Q", "nv: the generalized force");
        double V = 0.0;
        if (!nb::try_cast(pair[1], V))
          c.fail("the law's V is not a number");
        c.number(V, "V", -HUGE_VAL, false);
        Q = Qg.x;
        return V;
      };
    }
  } // namespace

  void bind_forces(nb::module_ & m)
  {
    nb::enum_<ForceKind>(m, "ForceKind")
#define PFAFF_FORCE(K, points, gravity) .value(#K, ForceKind::K)
#include "forces.def"
#undef PFAFF_FORCE
      ;

    auto fspec = nb::class_<ForceSpec>(m, "ForceSpec")
                   .def(nb::init<>())
                   .def_rw("kind", &ForceSpec::kind)
                   .def_rw("s1", &ForceSpec::s1)
                   .def_rw("s2", &ForceSpec::s2)
                   .def_rw("has_p1", &ForceSpec::has_p1)
                   .def_rw("has_p2", &ForceSpec::has_p2)
                   .def_rw("k", &ForceSpec::k)
                   .def_rw("L0", &ForceSpec::L0)
                   .def_rw("k3", &ForceSpec::k3)
                   .def_rw("c", &ForceSpec::c)
                   .def_rw("rest", &ForceSpec::rest)
                   .def_rw("iq", &ForceSpec::iq)
                   .def_rw("iv", &ForceSpec::iv)
                   .def_rw("iqs", &ForceSpec::iqs)
                   .def_rw("ivs", &ForceSpec::ivs)
                   .def_rw("coefs", &ForceSpec::coefs)
                   .def_rw("lo", &ForceSpec::lo)
                   .def_rw("hi", &ForceSpec::hi)
                   .def_rw("axes", &ForceSpec::axes)
                   .def_rw("gear", &ForceSpec::gear)
                   .def_rw("offset", &ForceSpec::offset)
                   .def_rw("g0", &ForceSpec::g0)
                   .def_rw("g1", &ForceSpec::g1)
                   .def_rw("g2", &ForceSpec::g2)
                   .def_rw("b0", &ForceSpec::b0)
                   .def_rw("b1", &ForceSpec::b1)
                   .def_rw("b2", &ForceSpec::b2)
                   .def_rw("flo", &ForceSpec::flo)
                   .def_rw("fhi", &ForceSpec::fhi)
                   .def_rw("ctrl", &ForceSpec::ctrl)
                   .def_rw("ictrl", &ForceSpec::ictrl)
                   .def_rw("dyn", &ForceSpec::dyn)
                   .def_rw("iact", &ForceSpec::iact)
                   .def_rw("tau_act", &ForceSpec::tau_act)
                   .def_rw("act0", &ForceSpec::act0)
                   .def_rw("t0", &ForceSpec::t0)
                   .def_rw("alo", &ForceSpec::alo)
                   .def_rw("ahi", &ForceSpec::ahi)
                   .def_rw("early", &ForceSpec::early)
                   .def_rw("actearly", &ForceSpec::actearly)
                   .def_rw("free", &ForceSpec::free)
                   .def_rw("ref", &ForceSpec::ref);
    field(fspec, "ForceSpec", "p1", &ForceSpec::p1, "a point in frame s1");
    field(fspec, "ForceSpec", "p2", &ForceSpec::p2, "a point in frame s2");
    field(fspec, "ForceSpec", "target", &ForceSpec::target, "a world point");
    field(fspec, "ForceSpec", "F", &ForceSpec::F, "a world force [N]");
    fspec.def(
      "set_law",
      [](ForceSpec & s, nb::callable law, bool conservative, std::string name) {
        s.law = std::make_shared<const ForceLaw>(python_law(std::move(law), std::move(name)));
        s.conservative = conservative;
      },
      "law"_a, "conservative"_a, "name"_a,
      "a Python law (t, q, v) -> (Q, V) called at every stage (kind Python)");
  }
} // namespace pfaff
