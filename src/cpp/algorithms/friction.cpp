// The dynamics with contact rows that slip with Coulomb friction (core.hpp, Model::slip):
// a slipping point's friction -mu f_n s acts at its body point (a sphere's or capsule's:
// the material point at its contact, radius below its held core; between two moving
// bodies relative to the plane body's material point there, which feels the opposite
// force), s its unit slip velocity,
// so that the generalised force of its normal row is (A_n - mu s^T J_p)^T lambda_n
// (lambda_n <= 0 while it pushes: f_n = -lambda_n). With W the rows A so changed,
//   M a + h = tau - W^T lambda,  A a = -drift
// is a non-symmetric system in lambda, (A M^-1 W^T) lambda = A M^-1 (tau - h) + drift,
// solved minimum-norm (redundant rows: the four corners of a box on a plane). s depends
// on the velocity, so every stage of the integrator evaluates it (accel's path).
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "model/rim.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>

namespace pfaff
{
  namespace
  {
    // below this slip speed a point slips along its s0 (its slip direction at the
    // step's start, or the slip it impends) [m/s]: the slip velocity's own direction is
    // round-off there. A slip velocity against s0 (the slip stopped inside the step)
    // keeps s0 too: the step's dynamics go on smoothly past the stop, whose time the
    // run locates (sim/friction.cpp) instead of a friction that flips inside the step
    constexpr double kSlipSpeed = 1e-10;
  } // namespace

  void slip_rows(const Model & mo, const Data & d, const VecX & v, MatX & W)
  {
    W = d.A;
    for (const SlipRow & r : mo.slip)
    {
      const FrameKin & f = d.frames[std::size_t(r.slot)];
      // the normal in the world (r.n in the plane body's axes where it moves)
      const Vec3 n = r.slot2 >= 0 ? Vec3(d.frames[std::size_t(r.slot2)].R * r.n) : r.n;
      // a round geom's force acts at its contact point, radius below its held one
      const Vec3 x = f.p + f.R * r.local + contact_lever(r.radius, f.R * r.axis, n);
      Matrix3x Jp = detail::point_rows(f, x - f.p);
      if (r.slot2 >= 0) // relative to the plane body's material point (its force opposite)
      {
        const FrameKin & f2 = d.frames[std::size_t(r.slot2)];
        Jp -= detail::point_rows(f2, x - f2.p);
      }
      const Vec3 vp = Jp * v;
      const Vec3 vt = vp - n * n.dot(vp);
      const double speed = vt.norm();
      const Vec3 s = speed > kSlipSpeed && vt.dot(r.s0) > 0.0 ? Vec3(vt / speed) : r.s0;
      W.row(r.row) -= r.mu * (s.transpose() * Jp);
    }
  }

  void slip_dynamics(const Model & mo, Data & d, const VecX & tau, VecX & a, VecX & lam, VecX & F)
  {
    MatX W;
    slip_rows(mo, d, *d.vref_, W);
    const Eigen::LLT<MatX> llt(dense_M(mo, d));
    const VecX f = tau - d.h;
    const VecX Mif = llt.solve(f);
    const VecX rhs = d.A * Mif + d.drift;
    MatX MiWt;
    auto solve = [&] {
      MiWt = llt.solve(W.transpose());
      // the pseudo-inverse of A M^-1 W^T: singular values below rank_tol times the
      // largest dropped (the rule of the impact's projection, limit_events.cpp)
      const Eigen::JacobiSVD<MatX> svd(d.A * MiWt, Eigen::ComputeThinU | Eigen::ComputeThinV);
      const VecX & sv = svd.singularValues();
      const double cut = mo.opt.rank_tol * (sv.size() ? sv(0) : 0.0);
      VecX y = svd.matrixU().transpose() * rhs;
      for (Eigen::Index k = 0; k < sv.size(); ++k)
        y(k) = sv(k) > cut ? y(k) / sv(k) : 0.0;
      lam = svd.matrixV() * y;
    };
    solve();
    // each slipping row's multiplier with every friction on: where it pulls and the
    // frictionless solve below pushes, Coulomb has no consistent force (Painleve's case:
    // the run resolves it by a tangential impulse, sim/friction.cpp's jam)
    d.coulomb_lam_.resize(Eigen::Index(mo.slip.size()));
    for (std::size_t k = 0; k < mo.slip.size(); ++k)
      d.coulomb_lam_(Eigen::Index(k)) = lam(mo.slip[k].row);
    // a slipping row whose multiplier pulls carries no friction (Coulomb's |f_t| <= mu
    // max(0, f_n): friction turned round would push along the slip), solved once more
    bool pulls = false;
    for (const SlipRow & r : mo.slip)
      if (lam(r.row) > 0.0)
      {
        W.row(r.row) = d.A.row(r.row);
        pulls = true;
      }
    if (pulls)
      solve();
    a = Mif - MiWt * lam;
    F = W.transpose() * lam;
  }
} // namespace pfaff
