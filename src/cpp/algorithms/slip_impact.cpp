// Moreau's impact law with Coulomb friction for the points that slip through an impact
// (slip_impact.hpp). The impulses act along H^T, the rows are kept along G: the system
// G M^-1 H^T iota = G v - b is not symmetric (friction does no work along the rows), so
// it is solved on the range of G by LU rather than as the M-metric projection of a
// frictionless impact.
#include "algorithms/slip_impact.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/LU>
#include <Eigen/QR>

namespace pfaff
{
  namespace
  {
    // a slip after the impact slower than this keeps the direction it had [m/s]
    constexpr double kSpeed = 1e-10;
    // the direction's fixed point: its change between two iterations [unit vector]
    constexpr double kTurn = 1e-13;
    // iterations of the direction (it ends in a few; a bound, never a hang)
    constexpr int kIterations = 50;
    // the directions tried around one point's tangent plane where the iteration does not
    // settle (5 degrees apart)
    constexpr int kAngles = 72;
  } // namespace

  VecX slip_impact(
    const MatX & M, const MatX & G, const VecX & v, const VecX & b,
    std::vector<SlipImpulse> & slips, double rank_tol, MatX & H, VecX & iota)
  {
    const Eigen::PartialPivLU<MatX> lu(M);
    const VecX r = G * v - b;
    // the impulses in the range of G (Q): their redundant part, null(G^T), which moves
    // nothing without friction but turns the body with it, is zero (the split of the
    // frictionless impact), so that the velocity after is unique
    Eigen::ColPivHouseholderQR<MatX> qr(G);
    qr.setThreshold(rank_tol);
    const MatX Q = qr.householderQ() * MatX::Identity(G.rows(), qr.rank());
    VecX vp = v;
    // the velocity after with friction along the slips' d: (Q^T G M^-1 H^T Q) y = Q^T r,
    // iota = Q y, square and with mu = 0 the frictionless impact's positive definite one
    const auto solve = [&] {
      H = G;
      for (const SlipImpulse & s : slips)
        H.row(s.row) -= s.mu * (s.d.transpose() * s.T);
      const MatX MiHt = lu.solve(H.transpose());
      iota = Q * (Q.transpose() * G * (MiHt * Q)).partialPivLu().solve(Q.transpose() * r);
      vp = v - MiHt * iota;
    };
    // each slip's direction after, from d (fixed-point iteration); the largest turn
    const auto follow = [&] {
      double turn = 0.0;
      for (SlipImpulse & s : slips)
        if (const Vec3 u = s.T * vp; u.norm() > kSpeed) // else stopped at the cone's edge
        {
          turn = std::max(turn, (u.normalized() - s.d).norm());
          s.d = u.normalized();
        }
      return turn;
    };
    bool found = false;
    for (int it = 0; it < kIterations && !found; ++it)
    {
      solve();
      found = follow() <= kTurn;
    }
    // one point whose iteration does not settle (its friction turns its slip far): the
    // direction in its tangent plane along which its slip after goes on (sign changes of
    // (d x u) . n where d . u > 0, refined by bisection)
    if (!found && slips.size() == 1)
    {
      SlipImpulse & s = slips[0];
      Vec3 t1, t2;
      tangent_basis(s.n, t1, t2);
      const auto side = [&](double th, double & along) {
        s.d = std::cos(th) * t1 + std::sin(th) * t2;
        solve();
        const Vec3 u = s.T * vp;
        along = s.d.dot(u);
        return s.d.cross(u).dot(s.n);
      };
      double along0 = 0.0, along1 = 0.0;
      double f0 = side(0.0, along0);
      for (int k = 1; k <= kAngles && !found; ++k)
      {
        double lo = 2.0 * M_PI * (k - 1) / kAngles, hi = 2.0 * M_PI * k / kAngles;
        const double f1 = side(hi, along1);
        if (f0 * f1 <= 0.0 && along0 > 0.0 && along1 > 0.0)
        {
          double flo = f0;
          for (int i = 0; i < 60 && hi - lo > 1e-15; ++i)
          {
            const double mid = 0.5 * (lo + hi);
            double am = 0.0;
            const double fm = side(mid, am);
            (fm * flo <= 0.0 ? hi : lo) = mid;
            if (fm * flo > 0.0)
              flo = fm;
          }
          side(0.5 * (lo + hi), along1);
          found = true;
        }
        f0 = f1;
        along0 = along1;
      }
    }
    // a slip the friction turns back against d has no Coulomb impulse of this law
    for (SlipImpulse & s : slips)
    {
      const Vec3 u = s.T * vp;
      s.lost = u.norm() > kSpeed && u.normalized().dot(s.d) < 1.0 - 1e-9;
    }
    return vp;
  }
} // namespace pfaff
