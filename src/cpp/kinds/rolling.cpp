// The two rows of a rolling contact (manipulation.rolling): the contact row
// Q = d - r (eq. 67) and the Pfaffian rolling row t . w + r (omega - phi') = 0 (eq. 71),
// from one contact geometry per evaluation pass.
// its line of kinds.def, which CMake gathers (name, rows, window, holonomic):
// PFAFF_KIND(RollContact, 1, 0, 1)
// PFAFF_KIND(RollTangent, 1, 0, 0)
#include <cmath>

#include <unsupported/Eigen/AutoDiff>

#include "model/check.hpp"
#include "model/core.hpp"
#include "model/core_detail.hpp"
#include "algorithms/kind_derivatives.hpp"

namespace pfaff::kinds
{
  namespace
  {
    // the contact's geometry (ContactGeometry), once per evaluation pass (stamp) for
    // both rows
    const ContactGeometry & geometry(
      const Model & mo, Data & d, const Spec & s, const VecX & v, bool with_drift)
    {
      const RollingContact & c = mo.contacts[size_t(s.contact)];
      ContactGeometry & g = d.contact_geometry[size_t(s.contact)];
      if (g.stamp != d.st_.rows)
      {
        const FrameKin & fo = d.frames[size_t(c.s_obj)];
        const FrameKin & ft = d.frames[size_t(c.s_tip)];
        g.geometry(c, fo.p, fo.R, fo.J, fo.drift, ft.p, ft.J, ft.drift, v, with_drift);
        g.stamp = d.st_.rows;
      }
      return g;
    }

    // +90 degrees: n' = omega S n + kappa s' t, t' = omega S t - kappa s' n
    Eigen::Vector2d S(const Eigen::Vector2d & x) { return Eigen::Vector2d(-x(1), x(0)); }
  } // namespace

  void check_RollContact(const Model & mo, const Spec & s, const Check & c)
  {
    c.index(s.contact, long(mo.contacts.size()), "spec.contact", "an index of add_contact");
  }

  void check_RollTangent(const Model & mo, const Spec & s, const Check & c)
  {
    check_RollContact(mo, s, c);
  }

  void RollContact(const Model & mo, Data & d, const Spec & s, const RowOut & out)
  {
    const ContactGeometry & c = geometry(mo, d, s, *d.vref_, out.with_drift);
    d.phi(out.hrow) = c.d - mo.contacts[size_t(s.contact)].r;
    d.A.row(out.row).noalias() = c.n.transpose() * c.JQ;
    d.drift(out.row) = out.with_drift
                           ? (c.omega * S(c.n) + c.kappa * c.sdot * c.t).dot(c.w) + c.n.dot(c.wdot)
                           : 0.0;
  }

  void RollTangent(const Model & mo, Data & d, const Spec & s, const RowOut & out)
  {
    const ContactGeometry & c = geometry(mo, d, s, *d.vref_, out.with_drift);
    const double r = mo.contacts[size_t(s.contact)].r;
    d.A.row(out.row).noalias() = c.t.transpose() * c.JQ;
    d.A.row(out.row) += r * c.Jrot;
    d.drift(out.row) = out.with_drift ? (c.omega * S(c.t) - c.kappa * c.sdot * c.n).dot(c.w)
                                            + c.t.dot(c.wdot) + r * c.alpha
                                        : 0.0;
  }

  // -- derivative rows ---------------------------------------------------------------------
  //
  // Both rows' A a + drift at the state's a is a function of the two frames' kinematics
  // alone (manipulation.rolling: w = c' - p' - omega S e, e = c - p, its rate
  // w' = c'' - p'' - theta'' S e - omega S (c' - p'), s' = t . w / (1 + kappa d),
  // n' = omega S n + kappa s' t, t' = omega S t - kappa s' n):
  //   contact  A a + drift = n' . w + n . w',
  //   rolling  A a + drift = t' . w + t . w' + r (theta'' - phi'').
  // roll_terms takes it, n and t forward-mode (Eigen's AutoDiffScalar) in the 19 inputs
  // (p, R's x-y block, c, p', omega, c', p'', theta'', c'', phi''); the foot point u moves
  // as u' = -f_l . l' / f_u (f = (l - gamma(u)) . gamma'(u) = 0, l = R^T e), and the
  // contour's g at that u carries gamma''' u' (Contour::eval). The inputs' partials in q
  // and v are Pinocchio's (Jacobians, kinematic Hessians, the classical accelerations'
  // partials; R moves as [J_w,k]x R), so X = grad . d(inputs). dA_k = n_k'^T J_Q + n^T dJ_Q,k
  // (t and + r dJrot_k for the rolling row) with J_Q = J_c - J_p + [e_y; -e_x] J_theta.
  namespace
  {
    constexpr int kIn = 19;
    using Grad = Eigen::Matrix<double, kIn, 1>;
    using AD = Eigen::AutoDiffScalar<Grad>;
    enum In
    {
      Px, Py, R00, R01, R10, R11, Cx, Cy, Pdx, Pdy, Om, Cdx, Cdy, Pddx, Pddy, Thdd, Cddx,
      Cddy, Phdd
    };

    struct RollTerms
    {
      AD XQ, XR, n[2], t[2];
    };

    RollTerms roll_terms(const RollingContact & rc, double u0, const double (&x)[kIn])
    {
      using std::sqrt;
      AD in[kIn];
      for (int i = 0; i < kIn; ++i)
        in[i] = AD(x[i], kIn, i);
      const AD &px = in[Px], &py = in[Py], &r00 = in[R00], &r01 = in[R01], &r10 = in[R10],
               &r11 = in[R11], &cx = in[Cx], &cy = in[Cy], &om = in[Om], &thdd = in[Thdd];
      const AD ex = cx - px, ey = cy - py;
      const AD lx = r00 * ex + r10 * ey, ly = r01 * ex + r11 * ey;
      // the foot point: f(u, l) = (l - gamma(u)) . gamma'(u) = 0 at u0
      double g0[6];
      rc.contour.scalar(u0, g0);
      const AD f = (lx - g0[0]) * g0[2] + (ly - g0[1]) * g0[3];
      const double fu = -(g0[2] * g0[2] + g0[3] * g0[3]) + (lx.value() - g0[0]) * g0[4]
                        + (ly.value() - g0[1]) * g0[5];
      AD g[6];
      rc.contour.eval(AD(u0, Grad(-f.derivatives() / fu)), g);
      const AD sp = sqrt(g[2] * g[2] + g[3] * g[3]);
      const AD tlx = g[2] / sp, tly = g[3] / sp;
      const AD kappa = (g[2] * g[5] - g[3] * g[4]) / (sp * sp * sp);
      RollTerms o;
      const AD tx = r00 * tlx + r01 * tly, ty = r10 * tlx + r11 * tly;
      const AD nx = ty, ny = -tx;
      const AD gwx = px + r00 * g[0] + r01 * g[1], gwy = py + r10 * g[0] + r11 * g[1];
      const AD d = nx * (cx - gwx) + ny * (cy - gwy);
      const AD relx = in[Cdx] - in[Pdx], rely = in[Cdy] - in[Pdy];
      const AD wx = relx + om * ey, wy = rely - om * ex;
      const AD wdx = in[Cddx] - in[Pddx] + thdd * ey + om * rely;
      const AD wdy = in[Cddy] - in[Pddy] - thdd * ex - om * relx;
      const AD ks = kappa * (tx * wx + ty * wy) / (1.0 + kappa * d); // kappa s'
      const AD ndx = -om * ny + ks * tx, ndy = om * nx + ks * ty;
      const AD tdx = -om * ty - ks * nx, tdy = om * tx - ks * ny;
      o.XQ = ndx * wx + ndy * wy + nx * wdx + ny * wdy;
      o.XR = tdx * wx + tdy * wy + tx * wdx + ty * wdy + rc.r * (thdd - in[Phdd]);
      o.n[0] = nx, o.n[1] = ny, o.t[0] = tx, o.t[1] = ty;
      return o;
    }

    /// a frame origin's position, velocity, classical acceleration (at the state's a)
    /// and its partials (linear x-y rows): J, dJ_k v, Hessian slices, in q and v
    struct Origin
    {
      Vec3 p, vp, ap;
      Eigen::Matrix<double, 2, Eigen::Dynamic> J, Hv, aq, av;
      MatX H; // 2 x nv^2: slice k (dJ/d delta_k) in columns k nv ..
    };

    void origin(KindDerivatives & kd, int slot, Origin & o)
    {
      const int nv = kd.nv;
      const KindDerivatives::Point pt = kd.point(slot, false, Vec3::Zero());
      kd.point_partials(pt);
      o.p = (kd.dd.oMi[pt.joint] * pt.placement).translation();
      o.vp.setZero();
      o.ap.setZero();
      if (pt.joint != 0) // else a point on the world: fixed
      {
        const auto & ov = kd.dd.ov[pt.joint];
        const auto & oa = kd.dd.oa[pt.joint];
        o.vp = ov.linear() + ov.angular().cross(o.p);
        o.ap = oa.linear() + oa.angular().cross(o.p) + ov.angular().cross(o.vp);
      }
      o.J = kd.aa.topRows<2>();
      o.aq = kd.aq.topRows<2>();
      o.av = kd.av.topRows<2>();
      o.H.resize(2, nv * nv);
      o.Hv.resize(2, nv);
      for (int k = 0; k < nv; ++k)
      {
        o.H.middleCols(k * nv, nv) =
          Eigen::Map<const Matrix6x>(kd.H.data() + 6 * nv * k, 6, nv).topRows<2>();
        o.Hv.col(k).noalias() = o.H.middleCols(k * nv, nv) * *kd.v;
      }
    }

    void derive_rolling(KindDerivatives & kd, const Spec & s, int row, bool tangent)
    {
      const RollingContact & rc = kd.mo.contacts[size_t(s.contact)];
      const int nv = kd.nv, m = kd.m;
      KindDerivatives::FrameDer & fo = kd.f1;
      KindDerivatives::FrameDer & ft = kd.f2;
      kd.frame(rc.s_obj, fo);
      kd.frame(rc.s_tip, ft);
      Origin po, pc;
      origin(kd, rc.s_obj, po);
      origin(kd, rc.s_tip, pc);
      const double x[kIn] = {
        po.p(0), po.p(1), fo.R(0, 0), fo.R(0, 1), fo.R(1, 0), fo.R(1, 1), pc.p(0), pc.p(1),
        po.vp(0), po.vp(1), fo.w(2), pc.vp(0), pc.vp(1), po.ap(0), po.ap(1), fo.al(2),
        pc.ap(0), pc.ap(1), ft.al(2)};
      // u at this state (evaluate's foot point)
      const RollTerms T = roll_terms(rc, kd.d.contact_geometry[size_t(s.contact)].u, x);
      // the inputs' partials in q (Dq) and v (Dv)
      Eigen::Matrix<double, kIn, Eigen::Dynamic> Dq, Dv;
      Dq.setZero(kIn, nv);
      Dv.setZero(kIn, nv);
      Dq.middleRows<2>(Px) = po.J;
      for (int k = 0; k < nv; ++k)
      {
        const Mat3 dR = detail::skew(Vec3(fo.Jw.col(k))) * fo.R;
        Dq(R00, k) = dR(0, 0), Dq(R01, k) = dR(0, 1), Dq(R10, k) = dR(1, 0), Dq(R11, k) = dR(1, 1);
      }
      Dq.middleRows<2>(Cx) = pc.J;
      Dq.middleRows<2>(Pdx) = po.Hv;
      Dq.row(Om) = fo.dw.row(2);
      Dq.middleRows<2>(Cdx) = pc.Hv;
      Dq.middleRows<2>(Pddx) = po.aq;
      Dq.row(Thdd) = fo.dal.row(2);
      Dq.middleRows<2>(Cddx) = pc.aq;
      Dq.row(Phdd) = ft.dal.row(2);
      Dv.middleRows<2>(Pdx) = po.J;
      Dv.row(Om) = fo.Jw.row(2);
      Dv.middleRows<2>(Cdx) = pc.J;
      Dv.middleRows<2>(Pddx) = po.av;
      Dv.row(Thdd) = fo.dal_v.row(2);
      Dv.middleRows<2>(Cddx) = pc.av;
      Dv.row(Phdd) = ft.dal_v.row(2);
      const AD & XA = tangent ? T.XR : T.XQ;
      kd.X.row(row).head(nv).noalias() = XA.derivatives().transpose() * Dq;
      kd.X.row(row).tail(nv).noalias() = XA.derivatives().transpose() * Dv;
      // dA_k
      const AD * nn = tangent ? T.t : T.n;
      const Eigen::Vector2d a(nn[0].value(), nn[1].value());
      const double ex = pc.p(0) - po.p(0), ey = pc.p(1) - po.p(1);
      const Eigen::Vector2d Se(ey, -ex); // J_Q's rows of J_theta
      const auto Jth = fo.Jw.row(2);
      Eigen::Matrix<double, 2, Eigen::Dynamic> JQ = pc.J - po.J;
      JQ += Se * Jth;
      for (int k = 0; k < nv; ++k)
      {
        const Eigen::Vector2d da(nn[0].derivatives().dot(Dq.col(k)),
                                 nn[1].derivatives().dot(Dq.col(k)));
        const Eigen::Vector2d de = pc.J.col(k) - po.J.col(k);
        auto dA = kd.dAB.row(k * m + row);
        dA.noalias() = da.transpose() * JQ;
        dA.noalias() += a.transpose() * pc.H.middleCols(k * nv, nv);
        dA.noalias() -= a.transpose() * po.H.middleCols(k * nv, nv);
        dA += (a(0) * de(1) - a(1) * de(0)) * Jth;
        dA += a.dot(Se) * fo.Hw.row(2).segment(k * nv, nv);
        if (tangent)
          dA += rc.r * (fo.Hw.row(2).segment(k * nv, nv) - ft.Hw.row(2).segment(k * nv, nv));
      }
    }
  } // namespace

  void derive_RollContact(KindDerivatives & kd, const Spec & s, int row)
  {
    derive_rolling(kd, s, row, false);
  }

  void derive_RollTangent(KindDerivatives & kd, const Spec & s, int row)
  {
    derive_rolling(kd, s, row, true);
  }
} // namespace pfaff::kinds
