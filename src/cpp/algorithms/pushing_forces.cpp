// The multipliers of a redundant held set that push inside their cones
// (pushing_forces.hpp): lambda = lambda_0 + N z with N an orthonormal basis of null(W^T)
// (the SVD of W), so that the generalised force W^T lambda -- and with it the motion --
// is the one the dynamics solved; z the least-norm choice under the rows' conditions:
//   min 1/2 |z|^2  s.t.  sign_i (lambda_0 + N z)_i >= 0,  d^T lambda_t <= mu f_n
// a strictly convex QP (ProxQP, dense). The cone |lambda_t| <= mu f_n enters as its
// tangent planes d^T lambda_t <= mu f_n: four at the start, one more at each point whose
// force the last QP put outside its cone (along that force), until every cone holds to
// tol. Each plane holds on the whole cone, so a QP with no solution proves that none
// exists.
#include "algorithms/pushing_forces.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/SVD>
#include <proxsuite/proxqp/dense/dense.hpp>

namespace pfaff
{
  namespace
  {
    // cutting-plane rounds: each adds a plane per violated cone
    constexpr int kRounds = 20;
    // ProxQP's outer and inner iterations (it ends in tens here; a bound, never a hang)
    constexpr int kIterations = 200;
    // ProxQP's lower bound of a one-sided row (no bound)
    constexpr double kNoBound = -1e20;
  } // namespace

  double push_violation(
    const VecX & lam, const std::vector<PushRow> & push, const std::vector<ConeRows> & cones)
  {
    double v = -std::numeric_limits<double>::infinity();
    for (const PushRow & p : push)
      v = std::max(v, -p.sign * lam(p.row));
    for (const ConeRows & c : cones)
      v = std::max(v, std::hypot(lam(c.t1), lam(c.t1 + 1)) + c.mu * lam(c.n));
    return v;
  }

  bool pushing_forces(
    const MatX & W, const VecX & lam0, const std::vector<PushRow> & push,
    const std::vector<ConeRows> & cones, double rank_tol, double tol, VecX & lam)
  {
    if (push_violation(lam0, push, cones) <= tol)
    {
      lam = lam0;
      return true;
    }
    const Eigen::JacobiSVD<MatX> svd(W, Eigen::ComputeFullU);
    const VecX & sv = svd.singularValues();
    Eigen::Index r = 0;
    while (r < sv.size() && sv(r) > rank_tol)
      ++r;
    const Eigen::Index k = lam0.size() - r;
    if (k == 0) // the multipliers are determined: lam0 is the only choice
      return false;
    const MatX N = svd.matrixU().rightCols(k);
    // the rows C z <= u, each tightened by a margin ten times the QP's own tolerance,
    // so that its answer holds to tol: tol itself, or a round-off level of the largest
    // multiplier (1e-9 of it) where that is more (a tolerance ProxQP reaches in a few
    // iterations; a point that needs a force within it of zero keeps the least-norm rule)
    const double margin = std::max(tol, 1e-9 * lam0.cwiseAbs().maxCoeff());
    std::vector<VecX> rows;
    std::vector<double> upper;
    for (const PushRow & p : push)
    {
      rows.emplace_back(-p.sign * N.row(p.row).transpose());
      upper.push_back(p.sign * lam0(p.row) - margin);
    }
    auto plane = [&](const ConeRows & c, double d1, double d2) {
      rows.emplace_back(
        (d1 * N.row(c.t1) + d2 * N.row(c.t1 + 1) + c.mu * N.row(c.n)).transpose());
      upper.push_back(-(d1 * lam0(c.t1) + d2 * lam0(c.t1 + 1) + c.mu * lam0(c.n)) - margin);
    };
    for (const ConeRows & c : cones)
      for (const auto & [d1, d2] : {std::pair{1.0, 0.0}, {-1.0, 0.0}, {0.0, 1.0}, {0.0, -1.0}})
        plane(c, d1, d2);
    const MatX H = MatX::Identity(k, k);
    const VecX g = VecX::Zero(k);
    for (int round = 0; round < kRounds; ++round)
    {
      const Eigen::Index n_in = Eigen::Index(rows.size());
      MatX C(n_in, k);
      VecX u(n_in);
      for (Eigen::Index i = 0; i < n_in; ++i)
      {
        C.row(i) = rows[std::size_t(i)].transpose();
        u(i) = upper[std::size_t(i)];
      }
      proxsuite::proxqp::dense::QP<double> qp(k, 0, n_in);
      qp.settings.eps_abs = 0.1 * margin;
      qp.settings.eps_rel = 0.0;
      // redundant rows must not read as infeasible (the cone planes of points on one
      // body are dependent)
      qp.settings.eps_primal_inf = 1e-14;
      qp.settings.eps_dual_inf = 1e-14;
      qp.settings.max_iter = kIterations;
      qp.settings.max_iter_in = kIterations;
      qp.init(H, g, proxsuite::nullopt, proxsuite::nullopt, C, VecX::Constant(n_in, kNoBound), u);
      qp.solve();
      const auto status = qp.results.info.status;
      // infeasible, or not solved within its iterations: no split found (the least-norm
      // rule stands; a bound on the cost of a sample)
      if (status != proxsuite::proxqp::QPSolverOutput::PROXQP_SOLVED)
        return false;
      const VecX x = lam0 + N * qp.results.x;
      if (!x.allFinite())
        return false;
      if (push_violation(x, push, cones) <= tol)
      {
        lam = x;
        return true;
      }
      bool added = false;
      for (const ConeRows & c : cones)
      {
        const double t = std::hypot(x(c.t1), x(c.t1 + 1));
        if (t + c.mu * x(c.n) > tol && t > 0.0)
        {
          plane(c, x(c.t1) / t, x(c.t1 + 1) / t);
          added = true;
        }
      }
      if (!added) // a push row missed by more than the QP's tolerance: none found
        return false;
    }
    return false;
  }
} // namespace pfaff
