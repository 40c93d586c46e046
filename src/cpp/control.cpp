// See control.hpp; the NumPy functions each block mirrors are named in its comment.
#include "control.hpp"

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
} // namespace pfaff
