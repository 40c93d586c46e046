// The thin binding of pfaff._core (nanobind); the Python conductor is pfaff.core. Every
// array that crosses from Python is checked here, once per call (bind.hpp, check.hpp):
// System's calls against nq, nv and the rows, the specs when added, the record buffers
// against their capacity, run's step range and options. The controllers' compiled laws
// are another module, pfaff._papers (bindings_papers.cpp, bind_control.cpp).
#include <climits>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "bindings/bind_system.hpp"
#include "algorithms/derivatives.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using pfaff::Check;
using pfaff::GMat;
using pfaff::GVec;
using pfaff::System;
using pfaff::VecX;

namespace pfaff
{
  void bind_sim(nb::module_ & m); // bind_sim.cpp: Simulator.step, clone, rollout
  void bind_forces(nb::module_ & m); // bind_forces.cpp: the force elements' specs
  void bind_tables(nb::module_ & m); // bind_tables.cpp: the options, series and status
  void bind_limits(nb::module_ & m); // bind_limits.cpp: joint limits, a limited run
  void bind_held_forces(nb::module_ & m); // bind_held_forces.cpp: the held sets' forces
  void bind_python_rows(nb::class_<Spec> & spec); // kinds/python.cpp: Spec.set_law
  void bind_plant(nb::class_<System> & cls); // bind_plant.cpp: a closed-form mechanism
}

using pfaff::bind::Buffer;
using pfaff::bind::buffer;
using pfaff::bind::check_options;
using pfaff::bind::check_ready;
using pfaff::bind::check_state;

namespace
{
  /// Check an explicit Runge-Kutta method's Butcher a (s x s, strictly lower
  /// triangular) and weights b (1 <= s <= 16) at the boundary; returns s.
  long check_explicit(const pfaff::Check & c, const GMat & a, const GVec & b)
  {
    c.vec(b, -1, "b", "the weights");
    const long n = long(b.x.size());
    c.index(n, 17, "the number of stages", "1 .. 16", 1);
    c.mat(a, n, n, "a", "s x s for the s weights b");
    for (long i = 0; i < n; ++i)
      for (long j = i; j < n; ++j)
        if (a.x(i, j) != 0.0)
          c.fail("a[" + std::to_string(i) + ", " + std::to_string(j)
                 + "] != 0: an explicit method's a is strictly lower triangular");
    return n;
  }
} // namespace

NB_MODULE(_core, m)
{
  m.doc() = "pfaff's compiled step core (C++17 on Pinocchio); see pfaff.core";
  // a System holds the Python callables of a user's elements (a plant's compute, a force
  // law, a constraint's rows); where one reaches back to the System through its module's
  // globals (a Simulator and a Mechanism subclass in one script), the cycle outlives
  // this module at interpreter exit, and nanobind would print "leaked instances" about
  // objects the process is about to drop anyway
  nb::set_leak_warnings(false);

  nb::enum_<pfaff::Kind>(m, "Kind")
#define PFAFF_KIND(K, rows, window, holonomic) .value(#K, pfaff::Kind::K)
#include "kinds.def"
#undef PFAFF_KIND
    ;

  nb::enum_<pfaff::ContourKind>(m, "ContourKind")
    .value("Circle", pfaff::ContourKind::Circle)
    .value("Ellipse", pfaff::ContourKind::Ellipse)
    .value("Superellipse", pfaff::ContourKind::Superellipse)
    .value("Spline", pfaff::ContourKind::Spline);

  nb::class_<pfaff::Contour>(m, "Contour")
    .def(nb::init<>())
    .def_rw("kind", &pfaff::Contour::kind)
    .def_rw("a", &pfaff::Contour::a)
    .def_rw("b", &pfaff::Contour::b)
    .def_rw("p", &pfaff::Contour::p)
    .def_rw("U", &pfaff::Contour::U)
    .def_rw("bx", &pfaff::Contour::bx)
    .def_rw("coef", &pfaff::Contour::coef)
    .def("check", [](const pfaff::Contour & c) { c.check("Contour.check"); })
    .def(
      "scalar",
      [](const pfaff::Contour & c, double u) {
        c.check("Contour.scalar");
        Check{"Contour.scalar"}.number(u, "u", -HUGE_VAL, false);
        double g[6];
        c.scalar(u, g);
        return nb::make_tuple(g[0], g[1], g[2], g[3], g[4], g[5]);
      },
      "u"_a, "(x, y, x', y', x'', y'') at u (Contour.scalar)")
    .def(
      "foot_point",
      [](const pfaff::Contour & c, double cx, double cy, nb::object u0) {
        const Check ck{"Contour.foot_point"};
        c.check(ck.where);
        ck.number(cx, "cx", -HUGE_VAL, false).number(cy, "cy", -HUGE_VAL, false);
        double u = 0.0;
        const bool warm = !u0.is_none();
        const double start = warm ? nb::cast<double>(u0) : 0.0;
        ck.number(start, "u0", -HUGE_VAL, false);
        if (!c.foot_point(cx, cy, warm, start, u))
          throw std::runtime_error("the contact-point solver did not converge");
        return u;
      },
      "cx"_a, "cy"_a, "u0"_a = nb::none(), "Contour.foot_point of (cx, cy) in the body frame");

  // specs: frame slots, coordinates and sizes are checked when added (ModelBuilder::add,
  // check_force); the arrays here when set
  auto spec = nb::class_<pfaff::Spec>(m, "Spec")
                .def(nb::init<>())
                .def_rw("kind", &pfaff::Spec::kind)
                .def_rw("dim", &pfaff::Spec::dim)
                .def_rw("unilateral", &pfaff::Spec::unilateral)
                .def_rw("s1", &pfaff::Spec::s1)
                .def_rw("s2", &pfaff::Spec::s2)
                .def_rw("has_p1", &pfaff::Spec::has_p1)
                .def_rw("has_p2", &pfaff::Spec::has_p2)
                .def_rw("D_identity", &pfaff::Spec::D_identity)
                .def_rw("d", &pfaff::Spec::d)
                .def_rw("rho", &pfaff::Spec::rho)
                .def_rw("iq", &pfaff::Spec::iq)
                .def_rw("iv", &pfaff::Spec::iv)
                .def_rw("unbounded", &pfaff::Spec::unbounded)
                .def_rw("value", &pfaff::Spec::value)
                .def_rw("iq2", &pfaff::Spec::iq2)
                .def_rw("iv2", &pfaff::Spec::iv2)
                .def_rw("c0", &pfaff::Spec::c0)
                .def_rw("c1", &pfaff::Spec::c1)
                .def_rw("iqs", &pfaff::Spec::iqs)
                .def_rw("ivs", &pfaff::Spec::ivs)
                .def_rw("coefs", &pfaff::Spec::coefs)
                .def_rw("contact", &pfaff::Spec::contact);
  pfaff::field(spec, "Spec", "p1", &pfaff::Spec::p1, "a point in frame s1");
  pfaff::field(spec, "Spec", "p2", &pfaff::Spec::p2, "a point in frame s2");
  pfaff::field(spec, "Spec", "D", &pfaff::Spec::D, "one unit direction per row");
  pfaff::field(spec, "Spec", "n", &pfaff::Spec::n, "a plane's normal");
  pfaff::field(spec, "Spec", "c", &pfaff::Spec::c, "a circle's centre");
  pfaff::field(spec, "Spec", "target", &pfaff::Spec::target, "a world point");
  pfaff::field(spec, "Spec", "R_off", &pfaff::Spec::R_off, "a rotation");
  pfaff::field(spec, "Spec", "R_right", &pfaff::Spec::R_right, "a rotation");
  pfaff::field(spec, "Spec", "scale", &pfaff::Spec::scale, "one factor per row");
  pfaff::bind_python_rows(spec);

  pfaff::bind_forces(m); // bind_forces.cpp: ForceKind, ForceSpec, a Python law

  pfaff::bind_tables(m); // bind_tables.cpp: Options, Status and the tables both languages read

  // A controller's record (System::sample): each array a writable view of the Sample's
  // own array, which the Python object keeps alive (no copy per field)
  using Sample = System::Sample;
  nb::class_<Sample> sample(
    m, "Sample",
    "A controller's record at the System's state (System.sample): q, v, M, h, A, drift, "
    "phi, the row-space factors V1, W of A (A^+ = V1 W^T), an orthonormal basis N of N(A), "
    "P = I - V1 V1^T, Cv = -A^+ drift, with sensors the readings F, lam of the held torque "
    "(else empty), the observed frames (one row each: p, R row by row, J (6 x nv) row by "
    "row, drift), g, rank, sigma_min and the energies kinetic, potential");
#define PFAFF_SAMPLE_FIELD(name)                                                              \
  sample.def_prop_ro(                                                                         \
    #name, [](Sample & s) -> auto & { return s.name; }, nb::rv_policy::reference_internal)
  PFAFF_SAMPLE_FIELD(q);
  PFAFF_SAMPLE_FIELD(v);
  PFAFF_SAMPLE_FIELD(M);
  PFAFF_SAMPLE_FIELD(h);
  PFAFF_SAMPLE_FIELD(A);
  PFAFF_SAMPLE_FIELD(drift);
  PFAFF_SAMPLE_FIELD(phi);
  PFAFF_SAMPLE_FIELD(V1);
  PFAFF_SAMPLE_FIELD(W);
  PFAFF_SAMPLE_FIELD(N);
  PFAFF_SAMPLE_FIELD(P);
  PFAFF_SAMPLE_FIELD(Cv);
  PFAFF_SAMPLE_FIELD(F);
  PFAFF_SAMPLE_FIELD(lam);
  PFAFF_SAMPLE_FIELD(frames);
  PFAFF_SAMPLE_FIELD(g);
#undef PFAFF_SAMPLE_FIELD
  sample.def_ro("rank", &Sample::rank)
    .def_ro("sigma_min", &Sample::sigma_min)
    .def_ro("kinetic", &Sample::kinetic)
    .def_ro("potential", &Sample::potential);

  nb::class_<System> system_cls(m, "System");
  system_cls.def(nb::init<const std::string &>(), "model_text"_a,
         "a System of the pinocchio.Model serialised by Model.saveToString")
    .def(
      "__init__",
      [](System * self, const nb::bytes & data) {
        new (self) System(std::string(data.c_str(), data.size()), true);
      },
      "model_binary"_a,
      "a System of the pinocchio.Model serialised by Model.saveToBinary (a StreamBuffer's "
      "tobytes()): the fast transfer")
    .def_prop_ro("nq", &System::nq)
    .def_prop_ro("nv", &System::nv)
    .def_prop_ro("rows", &System::rows)
    .def_prop_ro("holonomic_rows", &System::holonomic_rows)
    .def_prop_rw(
      "options", [](const System & s) { return s.options(); },
      [](System & s, const pfaff::Options & o) { s.set_options(o); },
      "a copy of the options (set them whole: o = s.options; o.dt = ...; s.options = o)")
    .def("add_frame", &System::add_frame, "name"_a)
    .def("add", &System::add, "spec"_a)
    .def("add_contact", &System::add_contact, "contour"_a, "s_obj"_a, "s_tip"_a, "r"_a,
         "a rolling contact (rolling.hpp); returns its index for Spec.contact")
    .def(
      "evaluate",
      [](System & s, const GVec & q, const GVec & v) {
        check_state(s, Check{"System.evaluate"}, q, v);
        s.dynamics_state(q, v, false);
        s.evaluate(q, v, true);
        const pfaff::Data & d = s.d();
        return nb::make_tuple(pfaff::dense_M(s.mo(), s.d()), d.h, d.A, d.drift, d.phi);
      },
      "q"_a, "v"_a, "M, h, A, drift, Phi at (q, v)")
    .def(
      "solve",
      [](System & s, const GVec & q, const GVec & v, const GVec & tau) {
        const Check c{"System.solve"};
        check_state(s, c, q, v, &tau);
        check_options(c, s.options());
        VecX a, F, lam;
        int rank = 0;
        s.solve(q, v, tau, a, F, lam, rank);
        return nb::make_tuple(a, F, lam, rank);
      },
      "q"_a, "v"_a, "tau"_a, "acceleration, constraint force, multipliers, rank at (q, v, tau)")
    .def(
      "acceleration",
      [](System & s, const GVec & q, const GVec & v, const GVec & tau) {
        const Check c{"System.acceleration"};
        check_state(s, c, q, v, &tau);
        check_options(c, s.options());
        VecX a;
        s.acceleration(q, v, tau, a);
        return a;
      },
      "q"_a, "v"_a, "tau"_a,
      "acceleration at (q, v, tau) as an RK4 stage takes it (certified QR, else SVD)")
    .def(
      "set_state",
      [](System & s, const GVec & q, const GVec & v) {
        check_state(s, Check{"System.set_state"}, q, v);
        s.set_state(q, v);
      },
      "q"_a, "v"_a)
    .def(
      "project_state",
      [](System & s, int max_iter) {
        const Check c{"System.project_state"};
        c.index(max_iter, 10001, "max_iter", "1 .. 10000 Newton-Raphson iterations", 1);
        if (s.state().q_.size() != s.nq() || s.state().v_.size() != s.nv())
          c.fail("no state: call set_state(q, v) first");
        const pfaff::Status st = s.project_state(max_iter);
        return nb::make_tuple(st.value, st.iterations);
      },
      "max_iter"_a,
      "bring the state onto the constraint manifold (simulate.project_state on the core), "
      "the workspace then built anew (rebuild_data): (max |Phi| where Newton-Raphson "
      "stopped, its iterations); the caller judges the residual")
    .def(
      "set_tableau",
      [](System & s, const GMat & a, const GVec & b) {
        check_explicit(Check{"System.set_tableau"}, a, b);
        s.set_tableau(a.x, b.x);
      },
      "a"_a, "b"_a,
      "the explicit Runge-Kutta method of a step (Butcher's a, strictly lower triangular, "
      "and b); RK4 by default")
    .def(
      "set_adaptive",
      [](System & s, const GMat & a, const GVec & b, const GVec & c, const GVec & e,
         const GVec & e3, int order) {
        const Check ch{"System.set_adaptive"};
        if (s.nq() != s.nv())
          ch.fail("an adaptive step needs nq == nv (this model has nq = "
                  + std::to_string(s.nq()) + ", nv = " + std::to_string(s.nv()) + ")");
        const long n = check_explicit(ch, a, b);
        ch.vec(c, n, "c", "the s nodes");
        ch.vec(e, n + 1, "e", "the s + 1 error weights");
        if (e3.x.size() != 0)
          ch.vec(e3, n + 1, "e3", "DOP853's s + 1 third-order error weights, or empty");
        ch.index(order, 17, "order", "the error estimator's order, 1 .. 16", 1);
        s.set_adaptive(a.x, b.x, c.x, e.x, e3.x, order);
      },
      "a"_a, "b"_a, "c"_a, "e"_a, "e3"_a, "order"_a,
      "an adaptive step (pfaff.simulate.tableaus.adaptive_pair): SciPy's embedded pair "
      "with solve_ivp's error control over each interval dt; set_tableau returns to a "
      "fixed-step method")
    .def_prop_ro("adaptive", [](const System & s) { return s.mo().ad_stages_ > 0; })
    .def_prop_ro("kkt_cond_max", &System::kkt_cond_max,
                 "the largest condition number of the KKT matrix the KKT method met")
    .def_prop_ro("stages", &System::stages)
    .def(
      "set_tau",
      [](System & s, const GVec & tau) {
        Check{"System.set_tau"}.vec(tau, s.nv(), "tau", "nv");
        s.set_tau(tau);
      },
      "tau"_a)
    .def_prop_ro("q", [](const System & s) { return VecX(s.state().q_); })
    .def_prop_ro("v", [](const System & s) { return VecX(s.state().v_); })
    .def("observe", &System::observe, "name"_a,
         "observe a frame at controller samples; returns its slot")
    .def(
      "sample",
      [](System & s, bool with_sensors) {
        check_ready(s, Check{"System.sample"}, with_sensors);
        Sample o;
        s.sample(with_sensors, o);
        return o;
      },
      "with_sensors"_a, "the controller's record at the current state (a Sample)")
    .def(
      "set_buffers",
      [](System & s, const std::vector<Buffer> & bufs, int capacity) {
        const Check c{"System.set_buffers"};
        std::vector<double *> ptrs;
        std::vector<size_t> sizes;
        for (std::size_t i = 0; i < bufs.size(); ++i)
        {
          ptrs.push_back(buffer(c, bufs[i], "buffers[" + std::to_string(i) + "]"));
          sizes.push_back(bufs[i].size());
        }
        s.recorder().set_buffers(s.mo(), ptrs, sizes, capacity);
      },
      "buffers"_a.noconvert(), "capacity"_a,
      nb::keep_alive<1, 2>()) // the core writes into the arrays: they live as long
    .def(
      "run",
      [](System & s, int k0, int k1, int n_steps, double t0) {
        const Check c{"System.run"};
        c.number(t0, "t0", -HUGE_VAL, false).index(n_steps, INT_MAX, "n_steps", ">= 0");
        c.index(k0, long(n_steps) + 1, "k0", "0 .. n_steps");
        c.index(k1, long(n_steps) + 2, "k1", "k0 .. n_steps + 1", k0);
        const pfaff::Recorder & r = s.recorder();
        if (r.capacity == 0)
          c.fail("no record buffers: call set_buffers(buffers, capacity) first");
        check_ready(s, c, true);
        pfaff::check_buffers(s.mo(), c.where, r.sizes, r.capacity); // add() may add rows
        if (r.force_capacity() >= 0 && r.force_capacity() < r.capacity)
          c.fail("the force buffers hold " + std::to_string(r.force_capacity())
                 + " samples, the record buffers " + std::to_string(r.capacity)
                 + ": call set_force_buffers with arrays of the capacity");
        if (s.held().on)
          c.number(s.held().period, "set_held's control_dt", 0.0, true);
        pfaff::Status st;
        {
          nb::gil_scoped_release release;
          st = s.run(k0, k1, n_steps, t0);
        }
        return st;
      },
      "k0"_a, "k1"_a, "n_steps"_a, "t0"_a)
    .def("add_force", &System::add_force, "spec"_a)
    .def(
      "set_ctrl",
      [](System & s, const GVec & u) {
        Check{"System.set_ctrl"}.vec(u, -1, "ctrl", "one per actuator");
        s.set_ctrl(u.x);
      },
      "ctrl"_a, "the actuators' controls (clamped to their ctrlrange by the caller)")
    .def(
      "set_act",
      [](System & s, const GVec & act, double t0) {
        Check{"System.set_act"}.vec(act, -1, "act", "one per actuator with activation");
        Check{"System.set_act"}.number(t0, "t0", -HUGE_VAL, false);
        s.set_act(act.x, t0);
      },
      "act"_a, "t0"_a,
      "the activations at the time t0 from which the ctrl set last is held (within actrange)")
    .def("add_held_force", &System::add_held_force, "spec"_a,
         "a force element of a law sampled and held (set_held)")
    .def(
      "set_held",
      [](System & s, double next_control, double control_dt) {
        Check{"System.set_held"}
          .number(next_control, "next_control", -HUGE_VAL, false)
          .number(control_dt, "control_dt", 0.0, true);
        s.set_held(next_control, control_dt);
      },
      "next_control"_a, "control_dt"_a,
      "sample the held force elements as a controller: tau = their Q at each sample "
      "(a sample is due where sample_due(t, next_control, dt) holds)")
    .def_prop_ro("next_control", [](const System & s) { return s.held().next; })
    .def(
      "set_force_buffers",
      [](System & s, const Buffer & work, const Buffer & pot) {
        const Check c{"System.set_force_buffers"};
        double * w = buffer(c, work, "work");
        double * p = buffer(c, pot, "potential");
        if (work.ndim() != 1 || pot.ndim() != 1 || work.size() != pot.size())
          c.fail("work has shape " + Check::shape(Eigen::Index(work.size())) + " ("
                 + std::to_string(work.ndim()) + "-D), potential "
                 + Check::shape(Eigen::Index(pot.size())) + " (" + std::to_string(pot.ndim())
                 + "-D): 1-D force buffers of equal length expected");
        c.index(long(work.size()), INT_MAX, "the force buffers' length", "an int");
        s.recorder().set_force_buffers(w, p, int(work.size()));
      },
      "work"_a.noconvert(), "potential"_a.noconvert(), nb::keep_alive<1, 2>(),
      nb::keep_alive<1, 3>())
    .def(
      "force_terms",
      [](System & s, const GVec & q, const GVec & v) {
        check_state(s, Check{"System.force_terms"}, q, v);
        s.dynamics_state(q, v, true);
        const pfaff::ForceTerms & f = s.d().felems;
        return nb::make_tuple(VecX(f.Q), f.V, f.power);
      },
      "q"_a, "v"_a, "Q, V, power of the force elements at (q, v)")
    .def(
      "rebuild_data", &System::rebuild_data,
      "the per-state workspace (the core's Data: Pinocchio's passes, the frame slots' "
      "kinematics, the contacts' geometry, the force elements' terms, the rows, the "
      "factorisations) built anew from the Model alone, as pinocchio.Data(model); the "
      "state, the accounts and the record buffers stay")
    .def("reset_counters", &System::reset_counters)
    .def_prop_ro("work", [](const System & s) { return s.state().work; })
    .def_prop_ro("force_work", [](const System & s) { return s.state().force_work; })
    .def_prop_ro("correction_energy", [](const System & s) { return s.state().corr; })
    .def_prop_ro("newton_failures", [](const System & s) { return s.state().newton_failures; })
    .def_prop_ro("recorded", [](const System & s) { return s.recorder().recorded; })
    .def_prop_ro("steps", [](const System & s) { return s.stepper().steps; });
  pfaff::bind_plant(system_cls); // bind_plant.cpp: System.set_plant
  pfaff::bind_sim(m);
  pfaff::bind_limits(m);
  pfaff::bind_held_forces(m);
  pfaff::bind_derivatives(m);
}
