// The thin binding of pfaff._core (nanobind); the Python conductor is pfaff.core.
#include <climits>
#include <cmath>
#include <tuple>
#include <utility>

#include <nanobind/nanobind.h>
#include <nanobind/eigen/dense.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "check.hpp"
#include "control.hpp"
#include "core.hpp"
#include "yz_sample.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using pfaff::System;
using pfaff::MatX;
using pfaff::VecX;

using Buffer = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

namespace
{
  using pfaff::Check;

  // q (nq), v (nv) and, if given, tau (nv) of a System call, finite
  void check_state(const System & s, const char * where, const VecX & q, const VecX & v,
                   const VecX * tau = nullptr)
  {
    const Check c{where};
    c.vec(q, s.nq(), "q", "nq").vec(v, s.nv(), "v", "nv");
    if (tau)
      c.vec(*tau, s.nv(), "tau", "nv");
  }

  // the sizes of a ControlKernel call, all from M (n x n)
  void check_control(const char * where, const MatX & M, const VecX & h, const MatX & V1,
                     const VecX & Cv, const MatX & N, const VecX & u_F)
  {
    const Check c{where};
    const Eigen::Index n = M.rows();
    c.mat(M, n, n, "M", "square").vec(h, n, "h", "n = M's rows");
    c.mat(V1, n, -1, "V1", "n rows").vec(Cv, n, "Cv", "n").mat(N, n, -1, "N", "n rows");
    if (u_F.size() != 0)
      c.vec(u_F, n, "u_F", "n, or empty: no force control");
  }

  // the sizes of a YZ law's arm terms, all from M (n x n) and J (6c x n)
  void check_arm(const char * where, const MatX & M, const VecX & h, const VecX & qd,
                 const MatX & J, const VecX & Jdqd, const VecX & held)
  {
    const Check c{where};
    const Eigen::Index n = M.rows();
    c.mat(M, n, n, "M", "square").vec(h, n, "h", "n = M's rows").vec(qd, n, "qd", "n");
    c.mat(J, -1, n, "J", "n columns").vec(Jdqd, J.rows(), "Jdqd", "J's rows");
    c.vec(held, n, "held", "n");
  }

  // a grasp's terms against each other (YZGrasp.set, eq. 3-22)
  void check_grasp(const char * where, const pfaff::YZGrasp & g)
  {
    const Check c{where};
    const Eigen::Index h = g.S.rows(), d = g.S.cols(), nr = g.T.rows();
    c.mat(g.S_rate, h, d, "S_rate", "S's shape").mat(g.W, -1, h, "W", "S's rows as columns");
    c.mat(g.W_rate, g.W.rows(), h, "W_rate", "W's shape");
    c.mat(g.T, nr, nr, "T", "square").mat(g.T_rate, nr, nr, "T_rate", "T's shape");
    c.mat(g.I_B, nr, nr, "I_B", "T's shape").mat(g.A_S, d, -1, "A_S", "S's columns as rows");
    c.mat(g.E_P, -1, nr, "E_P", "T's rows as columns");
    c.mat(g.E_F, -1, nr, "E_F", "T's rows as columns");
    c.mat(g.E_P_rate, g.E_P.rows(), nr, "E_P_rate", "E_P's shape");
    c.mat(g.E_F_rate, g.E_F.rows(), nr, "E_F_rate", "E_F's shape");
    if (g.E_P.rows() + g.E_F.rows() != nr)
      c.fail("E_P and E_F together need T's rows (" + std::to_string(nr) + ") rows");
    if (g.W.rows() != nr)
      c.fail("W has " + std::to_string(g.W.rows()) + " rows, expected T's rows ("
             + std::to_string(nr) + ")");
  }
} // namespace

namespace
{
  // the object's coordinates of a compiled YZ plant lie inside q and v, the hands'
  // terms fit each other
  void check_plant(const char * where, const pfaff::YZRigidBox & p, const VecX & q,
                   const VecX & v, const VecX & lam)
  {
    const pfaff::Check c{where};
    c.index(p.iq, q.size() - 6, "iq", "the box's 7 coordinates (p, quaternion) lie in q");
    c.index(p.iv, v.size() - 5, "iv", "the box's 6 velocities lie in v");
    c.mat(p.R_hands, 3, 3 * p.c_hands.cols(), "R_hands", "3 x 3k, k = c_hands' columns");
    c.mat(p.c_hands, 3, -1, "c_hands", "3 x k").finite(q, "q").finite(v, "v").finite(lam, "lam");
  }

  void check_plant(const char * where, const pfaff::YZPinnedPlane & p, const VecX & q,
                   const VecX & v, const VecX & lam)
  {
    const pfaff::Check c{where};
    c.index(p.iq, q.size() - 2, "iq", "the object's 3 coordinates (x, y, phi) lie in q");
    c.index(p.iv, v.size() - 2, "iv", "the object's 3 velocities lie in v");
    c.mat(p.c_hands, 2, -1, "c_hands", "2 x k").finite(q, "q").finite(v, "v").finite(lam, "lam");
  }

  // terms and sample of a compiled YZ plant (src/cpp/yz_sample.hpp)
  template <class Plant>
  void bind_sample(nb::class_<Plant, pfaff::YZSample> & c)
  {
    c.def(
       "terms",
       [](Plant & p, const VecX & q, const VecX & v, const VecX & lam) {
         check_plant("YZ plant terms", p, q, v, lam);
         pfaff::yz_terms(p, q, v, lam);
         const pfaff::YZGrasp & g = p.grasp;
         return nb::make_tuple(
           p.r, p.rd, g.S, g.W, g.S_rate, g.W_rate, g.T, g.T_rate, p.Q_r, p.r_P, p.F_h, p.f_F,
           g.E_P, g.E_F, g.E_F_rate);
       },
       "q"_a, "v"_a, "lam"_a,
       "r, r', S, W, S', W', T, T', Q_r, r_P, F_h, f_F, E_P, E_F, E_F' at (q, v) and the "
       "multipliers lam in the current mode (the plant's object_state, grasp_state, Q_r, "
       "measure)")
      .def(
        "sample",
        [](Plant & p, pfaff::YZServo & servo, const VecX & q, const VecX & v, const VecX & lam,
           const MatX & M, const VecX & h, const VecX & qd, const MatX & J, const VecX & Jdqd,
           const VecX & r_Pd, const VecX & r_Pd_dot, const VecX & r_Pd_dd, const VecX & f_Fd,
           const VecX & f_ISd, const VecX & held) {
          check_plant("YZ plant sample", p, q, v, lam);
          check_arm("YZ plant sample", M, h, qd, J, Jdqd, held);
          const pfaff::Check c{"YZ plant sample"};
          c.finite(r_Pd, "r_Pd").finite(r_Pd_dot, "r_Pd_dot").finite(r_Pd_dd, "r_Pd_dd");
          c.finite(f_Fd, "f_Fd").finite(f_ISd, "f_ISd");
          pfaff::yz_terms(p, q, v, lam);
          pfaff::yz_law(p, servo, M, h, qd, J, Jdqd, r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd, held);
          return nb::make_tuple(p.out.tau_arm, p.r_P, p.f_F, p.f_IS);
        },
        "servo"_a, "q"_a, "v"_a, "lam"_a, "M"_a, "h"_a, "qd"_a, "J"_a, "Jdqd"_a, "r_Pd"_a,
        "r_Pd_dot"_a, "r_Pd_dd"_a, "f_Fd"_a, "f_ISd"_a, "held"_a,
        "one sample of YZController on the plant (Yoshikawa-Zheng eq. 3-22, 27, 31-37, "
        "41-43): tau_arm, r_P, f_F, f_IS; the servo state carried in servo");
  }
} // namespace

NB_MODULE(_core, m)
{
  m.doc() = "pfaff's compiled step core (C++17 on Pinocchio); see pfaff.core";

  nb::enum_<pfaff::Kind>(m, "Kind")
    .value("PointOnPlane", pfaff::Kind::PointOnPlane)
    .value("PointsCoincide", pfaff::Kind::PointsCoincide)
    .value("PointOnCircle", pfaff::Kind::PointOnCircle)
    .value("LockedJoint", pfaff::Kind::LockedJoint)
    .value("FrameAligned", pfaff::Kind::FrameAligned)
    .value("Weld", pfaff::Kind::Weld)
    .value("JointCoupling", pfaff::Kind::JointCoupling)
    .value("QuatAligned", pfaff::Kind::QuatAligned)
    .value("RollContact", pfaff::Kind::RollContact)
    .value("RollTangent", pfaff::Kind::RollTangent);

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
    .def("check", &pfaff::Contour::check)
    .def(
      "scalar",
      [](const pfaff::Contour & c, double u) {
        double g[6];
        c.scalar(u, g);
        return nb::make_tuple(g[0], g[1], g[2], g[3], g[4], g[5]);
      },
      "u"_a, "(x, y, x', y', x'', y'') at u (Contour.scalar)")
    .def(
      "foot_point",
      [](const pfaff::Contour & c, double cx, double cy, nb::object u0) {
        double u = 0.0;
        const bool warm = !u0.is_none();
        if (!c.foot_point(cx, cy, warm, warm ? nb::cast<double>(u0) : 0.0, u))
          throw std::runtime_error("the contact-point solver did not converge");
        return u;
      },
      "cx"_a, "cy"_a, "u0"_a = nb::none(), "Contour.foot_point of (cx, cy) in the body frame");

  nb::class_<pfaff::Spec>(m, "Spec")
    .def(nb::init<>())
    .def_rw("kind", &pfaff::Spec::kind)
    .def_rw("dim", &pfaff::Spec::dim)
    .def_rw("unilateral", &pfaff::Spec::unilateral)
    .def_rw("s1", &pfaff::Spec::s1)
    .def_rw("s2", &pfaff::Spec::s2)
    .def_rw("has_p1", &pfaff::Spec::has_p1)
    .def_rw("has_p2", &pfaff::Spec::has_p2)
    .def_rw("p1", &pfaff::Spec::p1)
    .def_rw("p2", &pfaff::Spec::p2)
    .def_rw("D", &pfaff::Spec::D)
    .def_rw("D_identity", &pfaff::Spec::D_identity)
    .def_rw("n", &pfaff::Spec::n)
    .def_rw("d", &pfaff::Spec::d)
    .def_rw("c", &pfaff::Spec::c)
    .def_rw("rho", &pfaff::Spec::rho)
    .def_rw("target", &pfaff::Spec::target)
    .def_rw("R_off", &pfaff::Spec::R_off)
    .def_rw("R_right", &pfaff::Spec::R_right)
    .def_rw("iq", &pfaff::Spec::iq)
    .def_rw("iv", &pfaff::Spec::iv)
    .def_rw("unbounded", &pfaff::Spec::unbounded)
    .def_rw("value", &pfaff::Spec::value)
    .def_rw("iq2", &pfaff::Spec::iq2)
    .def_rw("iv2", &pfaff::Spec::iv2)
    .def_rw("c0", &pfaff::Spec::c0)
    .def_rw("c1", &pfaff::Spec::c1)
    .def_rw("scale", &pfaff::Spec::scale)
    .def_rw("contact", &pfaff::Spec::contact);

  nb::enum_<pfaff::ForceKind>(m, "ForceKind")
    .value("PointSpring", pfaff::ForceKind::PointSpring)
    .value("PointDamper", pfaff::ForceKind::PointDamper)
    .value("JointSpring", pfaff::ForceKind::JointSpring)
    .value("JointDamper", pfaff::ForceKind::JointDamper)
    .value("CoordinateSpring", pfaff::ForceKind::CoordinateSpring)
    .value("AnchorSpring", pfaff::ForceKind::AnchorSpring)
    .value("AnchorDamper", pfaff::ForceKind::AnchorDamper)
    .value("PointForce", pfaff::ForceKind::PointForce)
    .value("GravityCompensation", pfaff::ForceKind::GravityCompensation);

  nb::class_<pfaff::ForceSpec>(m, "ForceSpec")
    .def(nb::init<>())
    .def_rw("kind", &pfaff::ForceSpec::kind)
    .def_rw("s1", &pfaff::ForceSpec::s1)
    .def_rw("s2", &pfaff::ForceSpec::s2)
    .def_rw("has_p1", &pfaff::ForceSpec::has_p1)
    .def_rw("has_p2", &pfaff::ForceSpec::has_p2)
    .def_rw("p1", &pfaff::ForceSpec::p1)
    .def_rw("p2", &pfaff::ForceSpec::p2)
    .def_rw("target", &pfaff::ForceSpec::target)
    .def_rw("k", &pfaff::ForceSpec::k)
    .def_rw("L0", &pfaff::ForceSpec::L0)
    .def_rw("k3", &pfaff::ForceSpec::k3)
    .def_rw("c", &pfaff::ForceSpec::c)
    .def_rw("rest", &pfaff::ForceSpec::rest)
    .def_rw("iq", &pfaff::ForceSpec::iq)
    .def_rw("iv", &pfaff::ForceSpec::iv)
    .def_rw("iqs", &pfaff::ForceSpec::iqs)
    .def_rw("ivs", &pfaff::ForceSpec::ivs)
    .def_rw("coefs", &pfaff::ForceSpec::coefs)
    .def_rw("axes", &pfaff::ForceSpec::axes)
    .def_rw("F", &pfaff::ForceSpec::F);

  nb::class_<pfaff::Options>(m, "Options")
    .def(nb::init<>())
    .def_rw("dt", &pfaff::Options::dt)
    .def_rw("rank_tol", &pfaff::Options::rank_tol)
    .def_rw("position_tol", &pfaff::Options::position_tol)
    .def_rw("max_newton", &pfaff::Options::max_newton)
    .def_rw("newton_step_tol", &pfaff::Options::newton_step_tol)
    .def_rw("position_floor", &pfaff::Options::position_floor)
    .def_rw("stage_projection", &pfaff::Options::stage_projection)
    .def_rw("variant", &pfaff::Options::variant)
    .def_rw("gamma", &pfaff::Options::gamma)
    .def_rw("record_every", &pfaff::Options::record_every)
    .def_rw("potential_offset", &pfaff::Options::potential_offset);

  nb::class_<pfaff::TaskBlock>(m, "TaskBlock")
    .def(nb::init<>())
    .def_rw("frame", &pfaff::TaskBlock::frame)
    .def_rw("rows", &pfaff::TaskBlock::rows)
    .def_rw("orientation", &pfaff::TaskBlock::orientation)
    .def_rw("has_point", &pfaff::TaskBlock::has_point)
    .def_rw("point", &pfaff::TaskBlock::point);

  using Vec6 = Eigen::Matrix<double, 6, 1>;
  using FrameIn = std::tuple<pfaff::Vec3, pfaff::Mat3, MatX, Vec6>;
  nb::class_<pfaff::ControlKernel>(m, "ControlKernel")
    .def(nb::init<>())
    .def(
      "__call__",
      [](pfaff::ControlKernel & k, const MatX & M, const VecX & h, const MatX & V1,
         const VecX & Cv, const MatX & N, const MatX & J, const VecX & Jdv, const VecX & rhs_ref,
         double rel_tol, const VecX & u_F) {
        const char * where = "ControlKernel.__call__";
        check_control(where, M, h, V1, Cv, N, u_F);
        Check{where}.mat(J, -1, M.rows(), "J", "n columns").vec(Jdv, J.rows(), "Jdv", "J's rows");
        Check{where}.vec(rhs_ref, J.rows(), "rhs_ref", "J's rows");
        Check{where}.mat(N, -1, -1, "N", "").number(rel_tol, "rel_tol", 0.0, false);
        VecX u_p, tau;
        const bool ok = pfaff::projected_control(
          J, Jdv, rhs_ref, M, h, V1, Cv, N, rel_tol, u_F, k.work, tau, u_p);
        return nb::make_tuple(std::move(tau), std::move(u_p), ok);
      },
      "M"_a, "h"_a, "V1"_a, "Cv"_a, "N"_a, "J"_a, "Jdv"_a, "rhs_ref"_a, "rel_tol"_a, "u_F"_a,
      "tau, u_p, ok of ProjectedController (Aghili eq. 45, 46, 51; u_F empty: no force "
      "control), as pfaff.control.laws computes them")
    .def(
      "set_task",
      [](pfaff::ControlKernel & k, std::vector<pfaff::TaskBlock> blocks) {
        k.task.blocks = std::move(blocks);
      },
      "blocks"_a, "the built-in task task_law evaluates (its blocks)")
    .def(
      "task_law",
      [](pfaff::ControlKernel & k, const std::vector<FrameIn> & frames, const VecX & q,
         const VecX & v, const VecX & th_d, const VecX & dth_d, const VecX & ddth_d,
         const VecX & kp, const VecX & kd, const MatX & M, const VecX & h, const MatX & V1,
         const VecX & Cv, const MatX & N, double rel_tol, const VecX & u_F) {
        const char * where = "ControlKernel.task_law";
        check_control(where, M, h, V1, Cv, N, u_F);
        const Eigen::Index dim = kp.size(), n = M.rows();
        const Check c{where};
        c.vec(th_d, dim, "theta_d", "the task's size, kp's").vec(dth_d, dim, "dtheta_d", "kp's");
        c.vec(ddth_d, dim, "ddtheta_d", "kp's").vec(kd, dim, "kd", "kp's");
        c.vec(q, n, "q", "n = M's rows (a joint task needs nq == nv)").vec(v, n, "v", "n");
        c.number(rel_tol, "rel_tol", 0.0, false);
        long k_all = 0;
        for (const auto & b : k.task.blocks)
        {
          if (b.frame >= long(frames.size()))
            c.fail("a task block reads frame " + std::to_string(b.frame) + " of "
                   + std::to_string(frames.size()) + " given");
          for (int i : b.rows)
            c.index(i, b.frame >= 0 ? 3 : n, "a task block's row", "0..2 or a joint of q");
          k_all += long(b.rows.size()) + (b.orientation ? 3 : 0);
        }
        if (k_all != dim)
          c.fail("the task has " + std::to_string(k_all) + " rows, kp has "
                 + std::to_string(dim));
        for (const auto & f : frames)
          c.mat(std::get<2>(f), 6, n, "a frame's J", "6 x n").finite(std::get<0>(f), "p");
        k.frames.resize(frames.size());
        for (std::size_t i = 0; i < frames.size(); ++i)
          std::tie(k.frames[i].p, k.frames[i].R, k.frames[i].J, k.frames[i].drift) = frames[i];
        VecX u_p, tau;
        const bool ok = pfaff::task_law(
          k, q, v, th_d, dth_d, ddth_d, kp, kd, M, h, V1, Cv, N, rel_tol, u_F, tau, u_p);
        return nb::make_tuple(std::move(tau), std::move(u_p), ok, VecX(k.task.e));
      },
      "frames"_a, "q"_a, "v"_a, "theta_d"_a, "dtheta_d"_a, "ddtheta_d"_a, "kp"_a, "kd"_a, "M"_a,
      "h"_a, "V1"_a, "Cv"_a, "N"_a, "rel_tol"_a, "u_F"_a,
      "tau, u_p, ok, e of ProjectedController with the task set by set_task evaluated "
      "from the frames (p, R, J, drift) as pfaff.control.tasks does");

  nb::class_<pfaff::YZGrasp>(m, "YZGrasp")
    .def(nb::init<>())
    .def(
      "set",
      [](pfaff::YZGrasp & g, const MatX & S, const MatX & W, const MatX & S_rate,
         const MatX & W_rate, const MatX & A_S, const MatX & T, const MatX & T_rate,
         const MatX & E_P, const MatX & E_F, const MatX & E_P_rate, const MatX & E_F_rate,
         const MatX & I_B) {
        pfaff::YZGrasp t;
        t.S = S, t.W = W, t.S_rate = S_rate, t.W_rate = W_rate, t.A_S = A_S, t.T = T;
        t.T_rate = T_rate, t.E_P = E_P, t.E_F = E_F, t.E_P_rate = E_P_rate;
        t.E_F_rate = E_F_rate, t.I_B = I_B;
        check_grasp("YZGrasp.set", t);
        g = std::move(t);
      },
      "S"_a, "W"_a, "S_rate"_a, "W_rate"_a, "A_S"_a, "T"_a, "T_rate"_a, "E_P"_a, "E_F"_a,
      "E_P_rate"_a, "E_F_rate"_a, "I_B"_a,
      "the grasp and object terms of one sample (GraspState, Yoshikawa-Zheng eq. 3-22)");

  nb::class_<pfaff::YZWork>(m, "YZKernel")
    .def(nb::init<>())
    .def(
      "__call__",
      [](pfaff::YZWork & w, const MatX & M, const VecX & h, const VecX & qd, const MatX & J,
         const VecX & Jdqd, const pfaff::YZGrasp & g, const VecX & Q_r, const VecX & rd,
         const VecX & u1, const VecX & u2, const VecX & u3, const VecX & held, bool trapezoid) {
        const char * where = "YZKernel.__call__";
        check_arm(where, M, h, qd, J, Jdqd, held);
        check_grasp(where, g);
        const Check c{where};
        const Eigen::Index nr = g.T.rows();
        c.mat(g.S, J.rows(), -1, "grasp.S", "J's rows").vec(Q_r, nr, "Q_r", "T's rows");
        c.vec(rd, nr, "rd", "T's rows").vec(u1, g.E_P.rows(), "u1", "E_P's rows");
        c.vec(u2, g.E_F.rows(), "u2", "E_F's rows").vec(u3, g.A_S.cols(), "u3", "A_S's columns");
        pfaff::YZOut o;
        pfaff::yz_torque(M, h, qd, J, Jdqd, g, Q_r, rd, u1, u2, u3, held, trapezoid, w, o);
        return nb::make_tuple(
          std::move(o.tau_arm), std::move(o.q_dd), std::move(o.r_dd), std::move(o.F_hSd),
          std::move(o.dF), std::move(o.dfIS));
      },
      "M"_a, "h"_a, "qd"_a, "J"_a, "Jdqd"_a, "grasp"_a, "Q_r"_a, "rd"_a, "u1"_a, "u2"_a,
      "u3"_a, "held"_a, "trapezoid"_a,
      "tau_arm, q_dd, r_dd, F_hSd, dF, dfIS of YZController (Yoshikawa-Zheng eq. 31-37), "
      "as its NumPy law computes them");

  nb::class_<pfaff::YZServo>(m, "YZServo")
    .def(nb::init<>())
    .def_rw("K_V", &pfaff::YZServo::K_V)
    .def_rw("K_P", &pfaff::YZServo::K_P)
    .def_rw("K_IF", &pfaff::YZServo::K_IF)
    .def_rw("K_II", &pfaff::YZServo::K_II)
    .def_rw("dt", &pfaff::YZServo::dt)
    .def_rw("trapezoid", &pfaff::YZServo::trapezoid)
    .def_rw("unloaded", &pfaff::YZServo::unloaded)
    .def_rw("has_int_F", &pfaff::YZServo::has_int_F)
    .def_rw("has_int_I", &pfaff::YZServo::has_int_I)
    .def_rw("has_prev", &pfaff::YZServo::has_prev)
    .def_rw("has_start", &pfaff::YZServo::has_start)
    .def_ro("int_F", &pfaff::YZServo::int_F)
    .def_ro("int_I", &pfaff::YZServo::int_I)
    .def_ro("start_F", &pfaff::YZServo::start_F)
    .def_ro("start_I", &pfaff::YZServo::start_I);

  nb::class_<pfaff::YZSample>(m, "YZSample")
    .def_rw("mode", &pfaff::YZSample::mode)
    .def_ro("r", &pfaff::YZSample::r)
    .def_ro("rd", &pfaff::YZSample::rd)
    .def_ro("Q_r", &pfaff::YZSample::Q_r)
    .def_ro("u1", &pfaff::YZSample::u1)
    .def_ro("u2", &pfaff::YZSample::u2)
    .def_ro("u3", &pfaff::YZSample::u3)
    .def_prop_ro("q_dd", [](const pfaff::YZSample & b) { return b.out.q_dd; })
    .def_prop_ro("r_dd", [](const pfaff::YZSample & b) { return b.out.r_dd; })
    .def_prop_ro("F_hSd", [](const pfaff::YZSample & b) { return b.out.F_hSd; });

  auto box = nb::class_<pfaff::YZRigidBox, pfaff::YZSample>(m, "YZRigidBox")
    .def(nb::init<>())
    .def_rw("iq", &pfaff::YZRigidBox::iq)
    .def_rw("iv", &pfaff::YZRigidBox::iv)
    .def_rw("R_C", &pfaff::YZRigidBox::R_C)
    .def_rw("R_hands", &pfaff::YZRigidBox::R_hands)
    .def_rw("c_hands", &pfaff::YZRigidBox::c_hands)
    .def("set_object", &pfaff::YZRigidBox::set_object, "A_S"_a, "E_P"_a, "E_F"_a, "I_B"_a,
         "the constant A_S, E_P, E_F (zero rates) and I_B of the grasp terms")
    .def_rw("F_sel", &pfaff::YZRigidBox::F_sel)
    .def_rw("E_sel", &pfaff::YZRigidBox::E_sel)
    .def_rw("P_off", &pfaff::YZRigidBox::P_off)
    .def_rw("g", &pfaff::YZRigidBox::g);
  bind_sample(box);

  auto plane = nb::class_<pfaff::YZPinnedPlane, pfaff::YZSample>(m, "YZPinnedPlane")
    .def(nb::init<>())
    .def_rw("iq", &pfaff::YZPinnedPlane::iq)
    .def_rw("iv", &pfaff::YZPinnedPlane::iv)
    .def_rw("c_hands", &pfaff::YZPinnedPlane::c_hands)
    .def_rw("F_sel", &pfaff::YZPinnedPlane::F_sel)
    .def("set_object", &pfaff::YZPinnedPlane::set_object, "A_S"_a, "I_B"_a,
         "the constant A_S and I_B of the grasp terms")
    .def("add_set", &pfaff::YZPinnedPlane::add_set, "E_P"_a, "P_off"_a, "offsets"_a,
         "normals"_a, "levels"_a, "f_sel"_a,
         "an object-constraint set (eq. 17-22): r_P = E_P r + P_off, the hypersurfaces "
         "n_i . (x + R o_i) = level_i (offsets o_i, normals n_i: C x 2), f_F = f_sel "
         "lambda; returns its mode");
  bind_sample(plane);

  nb::class_<System>(m, "System")
    .def(nb::init<const std::string &>(), "model_text"_a)
    .def_prop_ro("nq", &System::nq)
    .def_prop_ro("nv", &System::nv)
    .def_prop_ro("rows", &System::rows)
    .def_rw("options", &System::opt)
    .def("add_frame", &System::add_frame, "name"_a)
    .def("add", &System::add, "spec"_a)
    .def("add_contact", &System::add_contact, "contour"_a, "s_obj"_a, "s_tip"_a, "r"_a,
         "a rolling contact (rolling.hpp); returns its index for Spec.contact")
    .def(
      "evaluate",
      [](System & s, const VecX & q, const VecX & v) {
        check_state(s, "System.evaluate", q, v);
        s.dynamics_state(q, v, false);
        s.evaluate(q, v, true);
        return nb::make_tuple(s.M, s.h, s.A, s.drift, s.phi);
      },
      "q"_a, "v"_a, "M, h, A, drift, Phi at (q, v)")
    .def(
      "solve",
      [](System & s, const VecX & q, const VecX & v, const VecX & tau) {
        check_state(s, "System.solve", q, v, &tau);
        VecX a, F, lam;
        int rank = 0;
        s.solve(q, v, tau, a, F, lam, rank);
        return nb::make_tuple(a, F, lam, rank);
      },
      "q"_a, "v"_a, "tau"_a, "acceleration, constraint force, multipliers, rank at (q, v, tau)")
    .def(
      "acceleration",
      [](System & s, const VecX & q, const VecX & v, const VecX & tau) {
        check_state(s, "System.acceleration", q, v, &tau);
        VecX a;
        s.acceleration(q, v, tau, a);
        return a;
      },
      "q"_a, "v"_a, "tau"_a,
      "acceleration at (q, v, tau) as an RK4 stage takes it (certified QR, else SVD)")
    .def(
      "set_state",
      [](System & s, const VecX & q, const VecX & v) {
        check_state(s, "System.set_state", q, v);
        s.set_state(q, v);
      },
      "q"_a, "v"_a)
    .def(
      "set_tau",
      [](System & s, const VecX & tau) {
        Check{"System.set_tau"}.vec(tau, s.nv(), "tau", "nv");
        s.set_tau(tau);
      },
      "tau"_a)
    .def_prop_ro("q", [](const System & s) { return VecX(s.q_); })
    .def_prop_ro("v", [](const System & s) { return VecX(s.v_); })
    .def("observe", &System::observe, "name"_a,
         "observe a frame at controller samples; returns its slot")
    .def(
      "sample",
      [](System & s, bool with_sensors) {
        System::Sample o;
        s.sample(with_sensors, o);
        return nb::make_tuple(std::move(o.blob), o.rank, o.sigma_min, o.kinetic, o.potential);
      },
      "with_sensors"_a,
      "(blob, rank, sigma_min, kinetic, potential): the controller's record at the current "
      "state, blob laid out as System::sample (core.hpp) writes it")
    .def(
      "set_buffers",
      [](System & s, std::vector<Buffer> bufs, int capacity) {
        std::vector<double *> ptrs;
        std::vector<size_t> sizes;
        for (auto & b : bufs)
        {
          ptrs.push_back(b.data());
          sizes.push_back(b.size());
        }
        s.set_buffers(ptrs, sizes, capacity);
      },
      "buffers"_a, "capacity"_a,
      nb::keep_alive<1, 2>()) // the core writes into the arrays: they live as long
    .def(
      "run",
      [](System & s, int k0, int k1, int n_steps, double t0) {
        const Check c{"System.run"};
        c.number(t0, "t0", -HUGE_VAL, false).index(n_steps, INT_MAX, "n_steps", ">= 0");
        c.index(k0, long(n_steps) + 1, "k0", "0 .. n_steps");
        c.index(k1, long(n_steps) + 2, "k1", "k0 .. n_steps + 1", k0);
        if (s.q_.size() != s.nq() || s.v_.size() != s.nv() || s.tau_.size() != s.nv())
          c.fail("no state: call set_state(q, v) and set_tau(tau) first");
        if (s.capacity() == 0)
          c.fail("no record buffers: call set_buffers(buffers, capacity) first");
        const pfaff::Options & o = s.opt;
        c.number(o.dt, "options.dt", 0.0, true).number(o.rank_tol, "options.rank_tol", 0.0, false);
        c.number(o.position_tol, "options.position_tol", 0.0, false);
        c.index(o.max_newton, INT_MAX, "options.max_newton", ">= 0");
        c.index(o.record_every, INT_MAX, "options.record_every", ">= 1", 1);
        c.index(o.variant, 3, "options.variant", "0: M_c, 1: M'_c, 2: M''_c");
        pfaff::Status st;
        {
          nb::gil_scoped_release release;
          st = s.run(k0, k1, n_steps, t0);
        }
        return nb::make_tuple(st.code, st.what, st.index, st.value, st.t, st.step, st.iterations);
      },
      "k0"_a, "k1"_a, "n_steps"_a, "t0"_a)
    .def("add_force", &System::add_force, "spec"_a)
    .def("add_held_force", &System::add_held_force, "spec"_a,
         "a force element of a law sampled and held (set_held)")
    .def("set_held", &System::set_held, "next_control"_a, "control_dt"_a,
         "sample the held force elements as a controller: tau = their Q at each sample")
    .def_prop_ro("next_control", &System::next_control)
    .def(
      "set_force_buffers",
      [](System & s, Buffer work, Buffer pot) {
        if (work.size() != pot.size())
          throw std::invalid_argument("force buffers of equal length expected");
        s.set_force_buffers(work.data(), pot.data(), int(work.size()));
      },
      "work"_a, "potential"_a, nb::keep_alive<1, 2>(), nb::keep_alive<1, 3>())
    .def(
      "force_terms",
      [](System & s, const VecX & q, const VecX & v) {
        check_state(s, "System.force_terms", q, v);
        s.dynamics_state(q, v, true);
        return nb::make_tuple(VecX(s.felems.Q), s.felems.V, s.felems.power);
      },
      "q"_a, "v"_a, "Q, V, power of the force elements at (q, v)")
    .def("reset_counters",
         [](System & s) {
           s.work = s.corr = s.force_work = 0.0;
           s.newton_it = s.newton_failures = s.recorded = s.steps = 0;
         })
    .def_ro("work", &System::work)
    .def_ro("force_work", &System::force_work)
    .def_ro("correction_energy", &System::corr)
    .def_ro("newton_failures", &System::newton_failures)
    .def_ro("recorded", &System::recorded)
    .def_ro("steps", &System::steps);
}
