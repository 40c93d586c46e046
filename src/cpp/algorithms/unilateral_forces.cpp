// The held rows' multipliers at the acceleration level (pushing_forces.hpp), where no
// split of the present motion pushes: the contact problem of the held set. With the
// rows A of the held set (their drift), the generalised force W^T lambda = A^T lambda
// (no point slipping), the acceleration a = M^-1 (tau - h - A^T lambda) and the rows'
// accelerations w = A a + drift = r - S lambda, S = A M^-1 A^T, r = A M^-1 (tau - h) +
// drift. Gauss's principle with the held rows as inequalities is, in its dual,
//   min 1/2 lambda^T S lambda - r^T lambda
//   s.t. sign_i lambda_i >= 0 (the push rows), |lambda_t| <= mu f_n (the cones),
// whose optimality conditions are the complementarity of each push row: it pushes and
// does not move (w_i = 0), or its multiplier is zero and it separates (-sign_i w_i >= 0).
// S is positive semidefinite (redundant rows: singular), the QP convex: ProxQP (dense),
// the cones as eight tangent planes each (an outer polygon: a force up to 8 % past the
// cone is read as inside it). A cone in the dual is the convex relaxation of Coulomb's
// problem (where it binds it adds to the normal force): the solution decides which rows
// let go; the forces after are the dynamics' of the rows that stay.
#include "algorithms/pushing_forces.hpp"

#include <algorithm>
#include <cmath>

#include <proxsuite/proxqp/dense/dense.hpp>

namespace pfaff
{
  namespace
  {
    constexpr int kIterations = 1000; // ProxQP's outer and inner iterations (a bound)
    constexpr int kPlanes = 8;        // a cone's tangent planes
    constexpr double kNoBound = -1e20;
  } // namespace

  bool unilateral_forces(
    const MatX & S, const VecX & r, const std::vector<PushRow> & push,
    const std::vector<ConeRows> & cones, double tol, VecX & lam)
  {
    const Eigen::Index m = S.rows();
    const Eigen::Index n_in = Eigen::Index(push.size() + kPlanes * cones.size());
    MatX C = MatX::Zero(n_in, m);
    Eigen::Index i = 0;
    for (const PushRow & p : push)
      C(i++, p.row) = -p.sign; // -sign lambda <= 0
    for (const ConeRows & c : cones)
      for (int k = 0; k < kPlanes; ++k)
      {
        const double phi = 2.0 * 3.141592653589793 * k / kPlanes;
        C(i, c.t1) = std::cos(phi);
        C(i, c.t1 + 1) = std::sin(phi);
        C(i++, c.n) = c.mu; // d . lambda_t - mu f_n <= 0, f_n = -lambda_n
      }
    // redundant rows leave S singular: a proximal term of round-off size picks the
    // least-norm multipliers among the optimal ones
    const double scale = std::max(1.0, S.diagonal().cwiseAbs().maxCoeff());
    const MatX H = S + 1e-12 * scale * MatX::Identity(m, m);
    proxsuite::proxqp::dense::QP<double> qp(m, 0, n_in);
    qp.settings.eps_abs = std::max(0.1 * tol, 1e-12 * std::max(1.0, r.cwiseAbs().maxCoeff()));
    qp.settings.eps_rel = 0.0;
    qp.settings.max_iter = kIterations;
    qp.settings.max_iter_in = kIterations;
    qp.init(H, VecX(-r), proxsuite::nullopt, proxsuite::nullopt, C,
            VecX::Constant(n_in, kNoBound), VecX::Zero(n_in));
    qp.solve();
    if (qp.results.info.status != proxsuite::proxqp::QPSolverOutput::PROXQP_SOLVED
        || !qp.results.x.allFinite())
      return false;
    lam = qp.results.x;
    return true;
  }

  std::vector<char> clear_after_move(
    const MatX & M, const MatX & A, const MatX & G, const VecX & dist, double clear_gap)
  {
    const Eigen::Index nv = M.rows(), n = G.rows();
    std::vector<char> clear(std::size_t(n), 0);
    proxsuite::proxqp::dense::QP<double> qp(nv, A.rows(), n);
    qp.settings.eps_abs = 1e-13;
    qp.settings.eps_rel = 0.0;
    qp.settings.max_iter = kIterations;
    qp.settings.max_iter_in = kIterations;
    qp.init(M, VecX::Zero(nv), A, VecX::Zero(A.rows()), G, VecX(-dist),
            VecX::Constant(n, -kNoBound));
    qp.solve();
    if (qp.results.info.status != proxsuite::proxqp::QPSolverOutput::PROXQP_SOLVED
        || !qp.results.x.allFinite())
      return clear;
    const VecX gap = dist + G * qp.results.x;
    for (Eigen::Index i = 0; i < n; ++i)
      clear[std::size_t(i)] = gap(i) > clear_gap ? 1 : 0;
    return clear;
  }
} // namespace pfaff
