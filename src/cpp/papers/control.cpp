// See control.hpp; the NumPy functions each block mirrors are named in its comment.
#include "papers/control.hpp"

#include "pinocchio/spatial.hpp" // exp3, log3, skew

namespace pfaff
{
  // laws.task_acceleration
  bool task_acceleration(
    const ControlMat & J, const ControlVec & Jdv, const ControlMat & N, const ControlVec & Cv,
    const ControlVec & rhs_ref, double rel_tol, ControlWork & w, ControlVec & u_p)
  {
    u_p = Cv;
    if (J.rows() == 0 || N.cols() == 0)
      return false;
    w.JN.noalias() = J * N;
    w.rhs = rhs_ref - Jdv;
    w.rhs.noalias() -= J * Cv;
    w.svd.compute(w.JN, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const ControlVec & s = w.svd.singularValues();
    const double tol = rel_tol * J.norm();
    Eigen::Index keep = 0;
    while (keep < s.size() && s(keep) > tol) // descending
      ++keep;
    w.z.noalias() = w.svd.matrixU().leftCols(keep).transpose() * w.rhs;
    w.z.array() /= s.head(keep).array();
    w.tmp.noalias() = w.svd.matrixV().leftCols(keep) * w.z;
    u_p.noalias() += N * w.tmp;
    return w.JN.rows() == w.JN.cols() && keep == s.size();
  }

  // tasks.FrameTask, tasks.JointTask, tasks.StackedTask: jacobian, drift, error
  void task_terms(
    TaskLaw & law, const std::vector<TaskFrame> & frames, const ControlVec & q,
    const ControlVec & v, const ControlVec & theta_d)
  {
    const Eigen::Index k_all = theta_d.size(), nv = v.size();
    law.J.resize(k_all, nv);
    law.Jdv.resize(k_all);
    law.e.resize(k_all);
    Eigen::Index k = 0;
    for (const TaskBlock & b : law.blocks)
    {
      if (b.frame < 0) // JointTask
      {
        for (const int i : b.rows)
        {
          law.J.row(k).setZero();
          law.J(k, i) = 1.0;
          law.Jdv(k) = 0.0;
          law.e(k) = theta_d(k) - q(i);
          ++k;
        }
        continue;
      }
      const TaskFrame & f = frames[static_cast<std::size_t>(b.frame)];
      Eigen::Vector3d pos = f.p, acc = f.drift.head<3>();
      law.Jp = f.J.topRows<3>();
      if (b.has_point) // FrameState.point, point_jacobian, point_drift
      {
        const Eigen::Vector3d r = f.R * b.point;
        const Eigen::Vector3d w = f.J.bottomRows<3>() * v;
        pos += r;
        law.Jp.noalias() -= pinocchio::skew(r) * f.J.bottomRows<3>();
        acc += f.drift.tail<3>().cross(r) + w.cross(w.cross(r));
      }
      for (const int i : b.rows)
      {
        law.J.row(k) = law.Jp.row(i);
        law.Jdv(k) = acc(i);
        law.e(k) = theta_d(k) - pos(i);
        ++k;
      }
      if (b.orientation) // world-frame rotation error log(R_d R^T), R_d = exp(theta_d)
      {
        law.J.middleRows<3>(k) = f.J.bottomRows<3>();
        law.Jdv.segment<3>(k) = f.drift.tail<3>();
        const Eigen::Matrix3d Rd = pinocchio::exp3(theta_d.segment<3>(k));
        law.e.segment<3>(k) = pinocchio::log3((Rd * f.R.transpose()).eval());
        k += 3;
      }
    }
  }

  // ProjectedController.__call__ (compiled): eq. (46), then eq. (45, 51)
  bool projected_control(
    const ControlMat & J, const ControlVec & Jdv, const ControlVec & rhs_ref,
    const ControlMat & M, const ControlVec & h, const ControlMat & V1, const ControlVec & Cv,
    const ControlMat & N, double rel_tol, const ControlVec & u_F, ControlWork & w,
    ControlVec & tau, ControlVec & u_p)
  {
    const bool ok = task_acceleration(J, Jdv, N, Cv, rhs_ref, rel_tol, w, u_p);
    projected_torque(M, h, V1, Cv, u_p, u_F, w, tau);
    return ok;
  }

  // ProjectedController.__call__ with a built-in task (tasks.*, then the PD of eq. 46)
  bool task_law(
    ControlKernel & k, const ControlVec & q, const ControlVec & v, const ControlVec & theta_d,
    const ControlVec & dtheta_d, const ControlVec & ddtheta_d, const ControlVec & kp,
    const ControlVec & kd, const ControlMat & M, const ControlVec & h, const ControlMat & V1,
    const ControlVec & Cv, const ControlMat & N, double rel_tol, const ControlVec & u_F,
    ControlVec & tau, ControlVec & u_p)
  {
    TaskLaw & law = k.task;
    task_terms(law, k.frames, q, v, theta_d);
    law.rhs = ddtheta_d;
    law.rhs.array() +=
      kd.array() * (dtheta_d - law.J * v).array() + kp.array() * law.e.array();
    return projected_control(
      law.J, law.Jdv, law.rhs, M, h, V1, Cv, N, rel_tol, u_F, k.work, tau, u_p);
  }

  // laws.pidc_torque (W = None) and laws.force_control_torque
  void projected_torque(
    const ControlMat & M, const ControlVec & h, const ControlMat & V1, const ControlVec & Cv,
    const ControlVec & u_p, const ControlVec & u_F, ControlWork & w, ControlVec & tau)
  {
    // f_par = P g, g = M u_p + h, P x = x - V1 V1^T x
    w.g = h;
    w.g.noalias() += M * u_p;
    w.z.noalias() = V1.transpose() * w.g;
    tau = w.g;
    tau.noalias() -= V1 * w.z;
    if (u_F.size() == 0)
      return;
    // f_perp = (h - P h) + (I - P) M x + u_F, M_c x = f_par - P h + M C v
    w.PM = M;
    w.V.noalias() = V1.transpose() * M;
    w.PM.noalias() -= V1 * w.V; // P M
    w.Mc = M + w.PM - w.PM.transpose();
    w.z.noalias() = V1.transpose() * h;
    w.g.noalias() = V1 * w.z; // (I - P) h = h - P h
    w.x = tau - (h - w.g);
    w.x.noalias() += M * Cv;
    w.lu.compute(w.Mc);
    w.x = w.lu.solve(w.x);
    w.tmp.noalias() = M * w.x;
    w.z.noalias() = V1.transpose() * w.tmp;
    w.tmp.noalias() = V1 * w.z; // (I - P) M x
    tau += w.g + w.tmp + u_F;
  }

  // YZController._torque (pfaff/control/yoshikawa_zheng.py)
  void yz_torque(
    const ControlMat & M, const ControlVec & h, const ControlVec & qd, const ControlMat & J,
    const ControlVec & Jdqd, const YZGrasp & g, const ControlVec & Q_r, const ControlVec & rd,
    const ControlVec & u1, const ControlVec & u2, const ControlVec & u3, const ControlVec & held,
    bool trapezoid, YZWork & w, YZOut & out)
  {
    const Eigen::Index n = M.rows(), nr = g.T.rows(), d = g.S.cols();
    const Eigen::Index p = g.E_P.rows(), C = g.E_F.rows();
    // eq. (35): [E_P; E_F] r'' = [u1 - E_P' r'; -E_F' r']
    w.E.resize(p + C, nr);
    w.E.topRows(p) = g.E_P;
    w.E.bottomRows(C) = g.E_F;
    w.rhs.resize(p + C);
    w.rhs.head(p) = u1;
    w.rhs.head(p).noalias() -= g.E_P_rate * rd;
    w.rhs.tail(C).noalias() = -g.E_F_rate * rd;
    w.lu.compute(w.E);
    out.r_dd = w.lu.solve(w.rhs);
    // eq. (34), (B4): S^T J q''_d = W_S^T T r'' + (W_S'^T T + W_S^T T') r' - S'^T J q'
    // - S^T J' q', solved for the minimum-norm q''_d
    w.StJ.noalias() = g.S.transpose() * J;
    w.W_S.noalias() = g.W * g.S;
    w.W_S_rate.noalias() = g.W_rate * g.S;
    w.W_S_rate.noalias() += g.W * g.S_rate;
    w.v1.noalias() = g.T * out.r_dd;
    w.v2.noalias() = g.T * rd;
    w.v3.noalias() = g.T_rate * rd;
    w.Jq.noalias() = J * qd;
    w.b.noalias() = w.W_S.transpose() * w.v1;
    w.b.noalias() += w.W_S_rate.transpose() * w.v2;
    w.b.noalias() += w.W_S.transpose() * w.v3;
    w.b.noalias() -= g.S_rate.transpose() * w.Jq;
    w.b.noalias() -= g.S.transpose() * Jdqd;
    w.cod.compute(w.StJ);
    out.q_dd = w.cod.solve(w.b);
    // eq. (37), (33): F = I_B T r'' + Q_r + T^-T E_F^T u2
    w.F = Q_r;
    w.F.noalias() += g.I_B * w.v1;
    if (C > 0)
    {
      w.x.noalias() = g.E_F.transpose() * u2;
      w.lu.compute(g.T.transpose());
      w.F += w.lu.solve(w.x);
    }
    // eq. (36): F_hSd = W_S^T (W_S W_S^T)^-1 F + A_S u3 (W_S of full row rank)
    w.WWt.noalias() = w.W_S * w.W_S.transpose();
    w.lu.compute(w.WWt);
    w.x = w.lu.solve(w.F);
    out.F_hSd.noalias() = w.W_S.transpose() * w.x;
    out.F_hSd.noalias() += g.A_S * u3;
    // eq. (32): tau = M q''_d + h + J^T S F_hSd
    w.x.noalias() = g.S * out.F_hSd;
    out.tau_arm = h;
    out.tau_arm.noalias() += M * out.q_dd;
    out.tau_arm.noalias() += J.transpose() * w.x;
    out.dF.resize(0);
    out.dfIS.resize(0);
    if (!trapezoid)
      return;
    // K of eq. (31) (whole_system_matrix), K dX = [tau_arm - held; 0]
    const Eigen::Index N = n + nr + d + C;
    w.K.setZero(N, N);
    w.K.topLeftCorner(n, n) = M;
    w.K.block(0, n + nr, n, d) = w.StJ.transpose();
    w.K.block(n, n, nr, nr).noalias() = g.T.transpose() * g.I_B * g.T;
    w.K.block(n, n + nr, nr, d).noalias() = -g.T.transpose() * w.W_S;
    w.K.block(n, n + nr + d, nr, C) = g.E_F.transpose();
    w.K.block(n + nr, 0, d, n) = w.StJ;
    w.K.block(n + nr, n, d, nr).noalias() = -w.W_S.transpose() * g.T;
    w.K.block(n + nr + d, n, C, nr) = g.E_F;
    w.rhsK.setZero(N);
    w.rhsK.head(n) = out.tau_arm - held;
    w.lu.compute(w.K);
    w.dX = w.lu.solve(w.rhsK);
    out.dF = w.dX.tail(C);
    out.dfIS.noalias() = g.A_S.transpose() * w.dX.segment(n + nr, d);
  }
} // namespace pfaff
