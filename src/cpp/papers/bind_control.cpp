// The binding of the controllers' compiled samples (control.hpp, yz_sample.hpp) into
// pfaff._papers (bindings_papers.cpp), outside the step core: every
// array is checked against M, J and the plant's own terms (bind.hpp, check.hpp) before
// the law runs, so a wrong size is a ValueError naming the call and the argument.
#include <array>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings/bind.hpp"
#include "papers/control.hpp"
#include "papers/yz_sample.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace pfaff
{
  namespace
  {
    // the sizes of a ControlKernel call, all from M (n x n)
    Eigen::Index check_control(const Check & c, const GMat & M, const GVec & h, const GMat & V1,
                               const GVec & Cv, const GMat & N, const GVec & u_F, double rel_tol)
    {
      c.mat(M, -1, -1, "M", "n x n");
      const Eigen::Index n = M.x.rows();
      c.mat(M, n, n, "M", "square").vec(h, n, "h", "n = M's rows");
      c.mat(V1, n, -1, "V1", "n rows").vec(Cv, n, "Cv", "n").mat(N, n, -1, "N", "n rows");
      c.vec(u_F, u_F.x.size() == 0 ? 0 : n, "u_F", "n, or empty: no force control");
      c.number(rel_tol, "rel_tol", 0.0, false);
      return n;
    }

    // the sizes of a YZ law's arm terms, all from M (n x n) and J (rows x n)
    void check_arm(const Check & c, const GMat & M, const GVec & h, const GVec & qd,
                   const GMat & J, const GVec & Jdqd, const GVec & held)
    {
      c.mat(M, -1, -1, "M", "n x n");
      const Eigen::Index n = M.x.rows();
      c.mat(M, n, n, "M", "square").vec(h, n, "h", "n = M's rows").vec(qd, n, "qd", "n");
      c.mat(J, -1, n, "J", "n columns");
      c.vec(Jdqd, J.x.rows(), "Jdqd", "J's rows").vec(held, n, "held", "n");
    }

    // a grasp's terms against each other (YZGrasp.set, eq. 3-22)
    void check_grasp(const Check & c, const YZGrasp & g)
    {
      const Eigen::Index h = g.S.rows(), d = g.S.cols(), nr = g.T.rows();
      c.finite(g.S, "S").mat(g.S_rate, h, d, "S_rate", "S's shape");
      c.mat(g.W, -1, h, "W", "S's rows as columns");
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

    // lam holds the multipliers a selection matrix reads
    void check_reads(const Check & c, const ControlMat & sel, const GVec & lam, const char * name)
    {
      if (sel.cols() > lam.x.size())
        c.fail(std::string(name) + " reads " + std::to_string(sel.cols())
               + " multipliers; lam has shape " + Check::shape(lam.x.size()));
    }

    // The sizes of one sample of a compiled YZ plant: rows of S (J's rows), position
    // functions p, hypersurfaces C and internal forces k of the current mode.
    struct PlantSizes
    {
      Eigen::Index rows, p, C, k;
    };

    // a box: its coordinates inside q and v, the hands' terms and set_object's
    PlantSizes check_plant(const Check & c, const YZRigidBox & b, const GVec & q,
                           const GVec & v, const GVec & lam)
    {
      c.vec(q, -1, "q", "nq").vec(v, -1, "v", "nv").vec(lam, -1, "lam", "the multipliers");
      c.index(b.iq, q.x.size() - 6, "iq", "the box's 7 coordinates (p, quaternion) lie in q");
      c.index(b.iv, v.x.size() - 5, "iv", "the box's 6 velocities lie in v");
      c.index(b.mode, 1, "mode", "the box has one object-constraint set");
      const Eigen::Index k = b.c_hands.cols();
      c.mat(b.c_hands, 3, -1, "c_hands", "3 x k");
      c.mat(b.R_hands, 3, 3 * k, "R_hands", "3 x 3k, k = c_hands' columns");
      const YZGrasp & g = b.grasp;
      if (g.I_B.rows() != 6)
        c.fail("the object's terms are not set: call set_object(A_S, E_P, E_F, I_B) first");
      c.mat(g.A_S, 6 * k, -1, "A_S (set_object)", "6k rows, k = c_hands' columns");
      c.mat(b.F_sel, 6 * k, -1, "F_sel", "6k x multipliers: the hand wrenches");
      c.mat(b.E_sel, 6, -1, "E_sel", "6 x multipliers: the environment's wrench");
      c.vec(b.P_off, g.E_P.rows(), "P_off", "E_P's rows");
      check_reads(c, b.F_sel, lam, "F_sel");
      check_reads(c, b.E_sel, lam, "E_sel");
      return {6 * k, g.E_P.rows(), g.E_F.rows(), g.A_S.cols()};
    }

    // a planar object: its coordinates inside q and v, the pins' terms, set_object's and
    // the mode's object-constraint set (add_set)
    PlantSizes check_plant(const Check & c, const YZPinnedPlane & pl, const GVec & q,
                           const GVec & v, const GVec & lam)
    {
      c.vec(q, -1, "q", "nq").vec(v, -1, "v", "nv").vec(lam, -1, "lam", "the multipliers");
      c.index(pl.iq, q.x.size() - 2, "iq", "the object's 3 coordinates (x, y, phi) lie in q");
      c.index(pl.iv, v.x.size() - 2, "iv", "the object's 3 velocities lie in v");
      if (pl.mode < 0 || pl.mode >= int(pl.sets.size()))
        c.fail("mode " + std::to_string(pl.mode) + " has no object-constraint set; valid: 0 .. "
               + std::to_string(int(pl.sets.size()) - 1) + " (the sets of add_set)");
      const Eigen::Index k = pl.c_hands.cols();
      c.mat(pl.c_hands, 2, -1, "c_hands", "2 x k");
      const YZGrasp & g = pl.grasp;
      if (g.I_B.rows() != 3)
        c.fail("the object's terms are not set: call set_object(A_S, I_B) first");
      c.mat(g.A_S, 2 * k, -1, "A_S (set_object)", "2k rows, k = c_hands' columns");
      c.mat(pl.F_sel, 3 * k, -1, "F_sel", "3k x multipliers: the pins' forces");
      const PlaneObjectSet & set = pl.sets[std::size_t(pl.mode)];
      check_reads(c, pl.F_sel, lam, "F_sel");
      check_reads(c, set.f_sel, lam, "the mode's f_sel");
      return {3 * k, set.E_P.rows(), set.levels.size(), g.A_S.cols()};
    }

    // the servo's gains, and the state earlier samples left, against this sample's sizes
    void check_servo(const Check & c, const YZServo & s, const PlantSizes & z)
    {
      c.vec(s.K_V, z.p, "servo.K_V", "one gain per position function of the mode");
      c.vec(s.K_P, z.p, "servo.K_P", "one gain per position function of the mode");
      if (z.C > 0 && s.K_IF.size() != 1)
        c.vec(s.K_IF, z.C, "servo.K_IF", "one gain, or one per hypersurface of the mode");
      if (z.k > 0 && s.K_II.size() != 1)
        c.vec(s.K_II, z.k, "servo.K_II", "one gain, or one per internal force");
      c.number(s.dt, "servo.dt", 0.0, false);
      const bool keep_F = s.has_int_F && s.int_F.size() == z.C;
      if (s.has_int_I)
        c.vec(s.int_I, z.k, "servo.int_I", "has_int_I: one per internal force");
      if (s.has_prev && s.has_int_I)
        c.vec(s.prev_I, z.k, "servo's last f_ISd", "has_prev: one per internal force");
      if (s.has_prev && keep_F)
        c.vec(s.prev_F, z.C, "servo's last f_Fd", "has_prev: one per hypersurface");
      if (s.has_prev && s.trapezoid && s.has_start && s.has_int_I)
        c.vec(s.start_I, z.k, "servo.start_I", "has_start: one per internal force");
      if (s.has_prev && s.trapezoid && s.has_start && keep_F)
        c.vec(s.start_F, z.C, "servo.start_F", "has_start: one per hypersurface");
    }

    // the reference of a sample (r_Pd, r_Pd', r_Pd'', f_Fd, f_ISd) against the mode's
    // position functions, hypersurfaces and internal forces (eq. 41-43)
    void check_reference(const Check & c, int mode, const PlantSizes & z,
                         const std::array<const GVec *, 5> & ref)
    {
      const char * names[] = {"r_Pd", "r_Pd_dot", "r_Pd_dd", "f_Fd", "f_ISd"};
      const Eigen::Index want[] = {z.p, z.p, z.p, z.C, z.k};
      for (int i = 0; i < 5; ++i)
        c.vec(*ref[i], -1, names[i], "a reference");
      for (int i = 0; i < 5; ++i)
        if (ref[i]->x.size() != want[i])
          c.fail(std::string(names[i]) + " has shape " + Check::shape(ref[i]->x.size())
                 + ", expected " + Check::shape(want[i]) + ": the reference gives r_Pd of size "
                 + std::to_string(ref[0]->x.size()) + ", f_Fd "
                 + std::to_string(ref[3]->x.size()) + ", f_ISd "
                 + std::to_string(ref[4]->x.size()) + "; the object-constraint set of mode "
                 + std::to_string(mode) + " has " + std::to_string(z.p)
                 + " position functions, " + std::to_string(z.C) + " hypersurfaces and "
                 + std::to_string(z.k) + " internal forces (eq. 41-43)");
    }

    // terms and sample of a compiled YZ plant (papers/yz_sample.hpp)
    template <class Plant>
    void bind_sample(nb::class_<Plant, YZSample> & cls, const char * terms_where,
                     const char * sample_where)
    {
      cls.def(
           "terms",
           [terms_where](Plant & p, const GVec & q, const GVec & v, const GVec & lam) {
             check_plant(Check{terms_where}, p, q, v, lam);
             yz_terms(p, q, v, lam);
             const YZGrasp & g = p.grasp;
             return nb::make_tuple(
               p.r, p.rd, g.S, g.W, g.S_rate, g.W_rate, g.T, g.T_rate, p.Q_r, p.r_P, p.F_h,
               p.f_F, g.E_P, g.E_F, g.E_F_rate);
           },
           "q"_a, "v"_a, "lam"_a,
           "r, r', S, W, S', W', T, T', Q_r, r_P, F_h, f_F, E_P, E_F, E_F' at (q, v) and the "
           "multipliers lam in the current mode (the plant's object_state, grasp_state, Q_r, "
           "measure)")
        .def(
          "sample",
          [sample_where](Plant & p, YZServo & servo, const GVec & q, const GVec & v,
                         const GVec & lam, const GMat & M, const GVec & h, const GVec & qd,
                         const GMat & J, const GVec & Jdqd, const GVec & r_Pd,
                         const GVec & r_Pd_dot, const GVec & r_Pd_dd, const GVec & f_Fd,
                         const GVec & f_ISd, const GVec & held) {
            const Check c{sample_where};
            const PlantSizes z = check_plant(c, p, q, v, lam);
            check_arm(c, M, h, qd, J, Jdqd, held);
            c.mat(J, z.rows, -1, "J", "the rows of S: 6 per hand (box), 3 per pin (plane)");
            check_reference(c, p.mode, z, {&r_Pd, &r_Pd_dot, &r_Pd_dd, &f_Fd, &f_ISd});
            check_servo(c, servo, z);
            yz_terms(p, q, v, lam);
            yz_law(p, servo, M, h, qd, J, Jdqd, r_Pd, r_Pd_dot, r_Pd_dd, f_Fd, f_ISd, held);
            return nb::make_tuple(p.out.tau_arm, p.r_P, p.f_F, p.f_IS);
          },
          "servo"_a, "q"_a, "v"_a, "lam"_a, "M"_a, "h"_a, "qd"_a, "J"_a, "Jdqd"_a, "r_Pd"_a,
          "r_Pd_dot"_a, "r_Pd_dd"_a, "f_Fd"_a, "f_ISd"_a, "held"_a,
          "one sample of YZController on the plant (Yoshikawa-Zheng eq. 3-22, 27, 31-37, "
          "41-43): tau_arm, r_P, f_F, f_IS; the servo state carried in servo");
    }

    using Frame = std::tuple<GVec, GMat, GMat, GVec>; // p, R, J, drift of a task's frame

    // the frames of ControlKernel.task_law into the kernel, each checked
    void take_frames(const Check & c, ControlKernel & k, const std::vector<Frame> & frames,
                     Eigen::Index n)
    {
      k.frames.resize(frames.size());
      for (std::size_t i = 0; i < frames.size(); ++i)
      {
        const std::string f = "frames[" + std::to_string(i) + "]";
        const auto & [p, R, J, drift] = frames[i];
        c.vec(p, 3, (f + ".p").c_str(), "a world position").mat(R, 3, 3, (f + ".R").c_str(), "a rotation");
        c.mat(J, 6, n, (f + ".J").c_str(), "6 x n").vec(drift, 6, (f + ".drift").c_str(), "J' v");
        k.frames[i].p = p.x, k.frames[i].R = R.x, k.frames[i].J = J.x, k.frames[i].drift = drift.x;
      }
    }
  } // namespace

  void bind_control(nb::module_ & m)
  {
    auto task = nb::class_<TaskBlock>(m, "TaskBlock")
                  .def(nb::init<>())
                  .def_rw("frame", &TaskBlock::frame)
                  .def_rw("rows", &TaskBlock::rows)
                  .def_rw("orientation", &TaskBlock::orientation)
                  .def_rw("has_point", &TaskBlock::has_point);
    field(task, "TaskBlock", "point", &TaskBlock::point, "a point in the frame");

    nb::class_<ControlKernel>(m, "ControlKernel")
      .def(nb::init<>())
      .def(
        "__call__",
        [](ControlKernel & k, const GMat & M, const GVec & h, const GMat & V1, const GVec & Cv,
           const GMat & N, const GMat & J, const GVec & Jdv, const GVec & rhs_ref,
           double rel_tol, const GVec & u_F) {
          const Check c{"ControlKernel.__call__"};
          const Eigen::Index n = check_control(c, M, h, V1, Cv, N, u_F, rel_tol);
          c.mat(J, -1, n, "J", "n columns").vec(Jdv, J.x.rows(), "Jdv", "J's rows");
          c.vec(rhs_ref, J.x.rows(), "rhs_ref", "J's rows");
          ControlVec u_p, tau;
          const bool ok = projected_control(J, Jdv, rhs_ref, M, h, V1, Cv, N, rel_tol, u_F,
                                            k.work, tau, u_p);
          return nb::make_tuple(std::move(tau), std::move(u_p), ok);
        },
        "M"_a, "h"_a, "V1"_a, "Cv"_a, "N"_a, "J"_a, "Jdv"_a, "rhs_ref"_a, "rel_tol"_a, "u_F"_a,
        "tau, u_p, ok of ProjectedController (Aghili eq. 45, 46, 51; u_F empty: no force "
        "control), as pfaff.control.laws computes them")
      .def(
        "set_task",
        [](ControlKernel & k, std::vector<TaskBlock> blocks) { k.task.blocks = std::move(blocks); },
        "blocks"_a, "the built-in task task_law evaluates (its blocks)")
      .def(
        "task_law",
        [](ControlKernel & k, const std::vector<Frame> & frames, const GVec & q, const GVec & v,
           const GVec & th_d, const GVec & dth_d, const GVec & ddth_d, const GVec & kp,
           const GVec & kd, const GMat & M, const GVec & h, const GMat & V1, const GVec & Cv,
           const GMat & N, double rel_tol, const GVec & u_F) {
          const Check c{"ControlKernel.task_law"};
          const Eigen::Index n = check_control(c, M, h, V1, Cv, N, u_F, rel_tol);
          c.vec(kp, -1, "kp", "one gain per task row");
          const Eigen::Index dim = kp.x.size();
          c.vec(th_d, dim, "theta_d", "the task's size, kp's").vec(dth_d, dim, "dtheta_d", "kp's");
          c.vec(ddth_d, dim, "ddtheta_d", "kp's").vec(kd, dim, "kd", "kp's");
          c.vec(q, n, "q", "n = M's rows (a joint task needs nq == nv)").vec(v, n, "v", "n");
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
            c.fail("the task has " + std::to_string(k_all) + " rows, kp has shape "
                   + Check::shape(dim));
          take_frames(c, k, frames, n);
          ControlVec u_p, tau;
          const bool ok = task_law(k, q, v, th_d, dth_d, ddth_d, kp, kd, M, h, V1, Cv, N,
                                   rel_tol, u_F, tau, u_p);
          return nb::make_tuple(std::move(tau), std::move(u_p), ok, ControlVec(k.task.e));
        },
        "frames"_a, "q"_a, "v"_a, "theta_d"_a, "dtheta_d"_a, "ddtheta_d"_a, "kp"_a, "kd"_a,
        "M"_a, "h"_a, "V1"_a, "Cv"_a, "N"_a, "rel_tol"_a, "u_F"_a,
        "tau, u_p, ok, e of ProjectedController with the task set by set_task evaluated "
        "from the frames (p, R, J, drift) as pfaff.control.tasks does");

    nb::class_<YZGrasp>(m, "YZGrasp")
      .def(nb::init<>())
      .def(
        "set",
        [](YZGrasp & g, const GMat & S, const GMat & W, const GMat & S_rate, const GMat & W_rate,
           const GMat & A_S, const GMat & T, const GMat & T_rate, const GMat & E_P,
           const GMat & E_F, const GMat & E_P_rate, const GMat & E_F_rate, const GMat & I_B) {
          const Check c{"YZGrasp.set"};
          const char * names[] = {"S", "W", "S_rate", "W_rate", "A_S", "T", "T_rate", "E_P",
                                  "E_F", "E_P_rate", "E_F_rate", "I_B"};
          const GMat * args[] = {&S, &W, &S_rate, &W_rate, &A_S, &T, &T_rate, &E_P, &E_F,
                                 &E_P_rate, &E_F_rate, &I_B};
          for (int i = 0; i < 12; ++i)
            c.mat(*args[i], -1, -1, names[i], "a matrix");
          YZGrasp t;
          t.S = S, t.W = W, t.S_rate = S_rate, t.W_rate = W_rate, t.A_S = A_S, t.T = T;
          t.T_rate = T_rate, t.E_P = E_P, t.E_F = E_F, t.E_P_rate = E_P_rate;
          t.E_F_rate = E_F_rate, t.I_B = I_B;
          check_grasp(c, t);
          g = std::move(t);
        },
        "S"_a, "W"_a, "S_rate"_a, "W_rate"_a, "A_S"_a, "T"_a, "T_rate"_a, "E_P"_a, "E_F"_a,
        "E_P_rate"_a, "E_F_rate"_a, "I_B"_a,
        "the grasp and object terms of one sample (GraspState, Yoshikawa-Zheng eq. 3-22)");

    nb::class_<YZWork>(m, "YZKernel")
      .def(nb::init<>())
      .def(
        "__call__",
        [](YZWork & w, const GMat & M, const GVec & h, const GVec & qd, const GMat & J,
           const GVec & Jdqd, const YZGrasp & g, const GVec & Q_r, const GVec & rd,
           const GVec & u1, const GVec & u2, const GVec & u3, const GVec & held, bool trapezoid) {
          const Check c{"YZKernel.__call__"};
          check_arm(c, M, h, qd, J, Jdqd, held);
          check_grasp(c, g);
          const Eigen::Index nr = g.T.rows();
          c.mat(g.S, J.x.rows(), -1, "grasp.S", "J's rows").vec(Q_r, nr, "Q_r", "T's rows");
          c.vec(rd, nr, "rd", "T's rows").vec(u1, g.E_P.rows(), "u1", "E_P's rows");
          c.vec(u2, g.E_F.rows(), "u2", "E_F's rows").vec(u3, g.A_S.cols(), "u3", "A_S's columns");
          YZOut o;
          yz_torque(M, h, qd, J, Jdqd, g, Q_r, rd, u1, u2, u3, held, trapezoid, w, o);
          return nb::make_tuple(std::move(o.tau_arm), std::move(o.q_dd), std::move(o.r_dd),
                                std::move(o.F_hSd), std::move(o.dF), std::move(o.dfIS));
        },
        "M"_a, "h"_a, "qd"_a, "J"_a, "Jdqd"_a, "grasp"_a, "Q_r"_a, "rd"_a, "u1"_a, "u2"_a,
        "u3"_a, "held"_a, "trapezoid"_a,
        "tau_arm, q_dd, r_dd, F_hSd, dF, dfIS of YZController (Yoshikawa-Zheng eq. 31-37), "
        "as its NumPy law computes them");

    auto servo = nb::class_<YZServo>(m, "YZServo")
                   .def(nb::init<>())
                   .def_rw("dt", &YZServo::dt)
                   .def_rw("trapezoid", &YZServo::trapezoid)
                   .def_rw("unloaded", &YZServo::unloaded)
                   .def_rw("has_int_F", &YZServo::has_int_F)
                   .def_rw("has_int_I", &YZServo::has_int_I)
                   .def_rw("has_prev", &YZServo::has_prev)
                   .def_rw("has_start", &YZServo::has_start)
                   .def_ro("int_F", &YZServo::int_F)
                   .def_ro("int_I", &YZServo::int_I)
                   .def_ro("start_F", &YZServo::start_F)
                   .def_ro("start_I", &YZServo::start_I);
    field(servo, "YZServo", "K_V", &YZServo::K_V, "one gain per position function");
    field(servo, "YZServo", "K_P", &YZServo::K_P, "one gain per position function");
    field(servo, "YZServo", "K_IF", &YZServo::K_IF, "one gain, or one per hypersurface");
    field(servo, "YZServo", "K_II", &YZServo::K_II, "one gain, or one per internal force");

    nb::class_<YZSample>(m, "YZSample")
      .def_rw("mode", &YZSample::mode)
      .def_ro("r", &YZSample::r)
      .def_ro("rd", &YZSample::rd)
      .def_ro("Q_r", &YZSample::Q_r)
      .def_ro("u1", &YZSample::u1)
      .def_ro("u2", &YZSample::u2)
      .def_ro("u3", &YZSample::u3)
      .def_prop_ro("q_dd", [](const YZSample & b) { return b.out.q_dd; })
      .def_prop_ro("r_dd", [](const YZSample & b) { return b.out.r_dd; })
      .def_prop_ro("F_hSd", [](const YZSample & b) { return b.out.F_hSd; });

    auto box = nb::class_<YZRigidBox, YZSample>(m, "YZRigidBox")
                 .def(nb::init<>())
                 .def_rw("iq", &YZRigidBox::iq)
                 .def_rw("iv", &YZRigidBox::iv)
                 .def(
                   "set_object",
                   [](YZRigidBox & b, const GMat & A_S, const GMat & E_P, const GMat & E_F,
                      const GMat & I_B) {
                     const Check c{"YZRigidBox.set_object"};
                     c.mat(A_S, -1, -1, "A_S", "a matrix").mat(E_P, -1, -1, "E_P", "a matrix");
                     c.mat(E_F, -1, -1, "E_F", "a matrix").mat(I_B, -1, -1, "I_B", "a matrix");
                     b.set_object(A_S, E_P, E_F, I_B);
                   },
                   "A_S"_a, "E_P"_a, "E_F"_a, "I_B"_a,
                   "the constant A_S, E_P, E_F (zero rates) and I_B of the grasp terms");
    field(box, "YZRigidBox", "R_C", &YZRigidBox::R_C, "a rotation");
    field(box, "YZRigidBox", "R_hands", &YZRigidBox::R_hands, "3 x 3k: [R_1 .. R_k]");
    field(box, "YZRigidBox", "c_hands", &YZRigidBox::c_hands, "3 x k: [c_1 .. c_k]");
    field(box, "YZRigidBox", "F_sel", &YZRigidBox::F_sel, "6k x multipliers");
    field(box, "YZRigidBox", "E_sel", &YZRigidBox::E_sel, "6 x multipliers");
    field(box, "YZRigidBox", "P_off", &YZRigidBox::P_off, "E_P's rows");
    field(box, "YZRigidBox", "g", &YZRigidBox::g, "the gravity vector");
    bind_sample(box, "YZRigidBox.terms", "YZRigidBox.sample");

    auto plane =
      nb::class_<YZPinnedPlane, YZSample>(m, "YZPinnedPlane")
        .def(nb::init<>())
        .def_rw("iq", &YZPinnedPlane::iq)
        .def_rw("iv", &YZPinnedPlane::iv)
        .def(
          "set_object",
          [](YZPinnedPlane & pl, const GMat & A_S, const GMat & I_B) {
            Check{"YZPinnedPlane.set_object"}.mat(A_S, -1, -1, "A_S", "a matrix").mat(
              I_B, -1, -1, "I_B", "a matrix");
            pl.set_object(A_S, I_B);
          },
          "A_S"_a, "I_B"_a, "the constant A_S and I_B of the grasp terms")
        .def(
          "add_set",
          [](YZPinnedPlane & pl, const GMat & E_P, const GVec & P_off, const GMat & offsets,
             const GMat & normals, const GVec & levels, const GMat & f_sel) {
            const Check c{"YZPinnedPlane.add_set"};
            c.mat(E_P, -1, -1, "E_P", "(3 - C) x 3").vec(P_off, -1, "P_off", "3 - C");
            c.mat(offsets, -1, -1, "offsets", "C x 2").mat(normals, -1, -1, "normals", "C x 2");
            c.vec(levels, -1, "levels", "C").mat(f_sel, -1, -1, "f_sel", "C x multipliers");
            return pl.add_set(E_P, P_off, offsets, normals, levels, f_sel);
          },
          "E_P"_a, "P_off"_a, "offsets"_a, "normals"_a, "levels"_a, "f_sel"_a,
          "an object-constraint set (eq. 17-22): r_P = E_P r + P_off, the hypersurfaces "
          "n_i . (x + R o_i) = level_i (offsets o_i, normals n_i: C x 2), f_F = f_sel "
          "lambda; returns its mode");
    field(plane, "YZPinnedPlane", "c_hands", &YZPinnedPlane::c_hands, "2 x k: [c_1 .. c_k]");
    field(plane, "YZPinnedPlane", "F_sel", &YZPinnedPlane::F_sel, "3k x multipliers");
    bind_sample(plane, "YZPinnedPlane.terms", "YZPinnedPlane.sample");
  }
} // namespace pfaff
