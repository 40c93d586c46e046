// The constraint rows of one state: A, drift and Phi stacked from the kinds' writers
// (each kind's rows in src/cpp/kinds/), and the orientation blocks two kinds share (see
// core.hpp; the frames they read are terms.cpp's).
#include "model/core.hpp"
#include "model/core_detail.hpp"

#include <Eigen/Geometry>

namespace pfaff
{
  using detail::skew;

  // -- constraint rows (constraints.library, constraints.weld) ------------------
  // R_e of an orientation block and the angular-velocity rows Gjw_ of d R_e / dt:
  // against the world R_e = R_1 R_world, Gjw_ = J_w1; between two frames
  // R_e = R_1 R_off R_2^T (R_1 R_2^T when off_identity), Gjw_ = J_w1 - R_e J_w2
  Mat3 kinds::relative_rotation(
    Data & d, const Spec & s, const Mat3 & R_world, const Mat3 & R_off, bool off_identity,
    const RowOut & out)
  {
    const FrameKin & f1 = d.frames[s.s1];
    const auto Jw1 = f1.J.bottomRows<3>().middleCols(out.c0, out.w);
    Mat3 Re;
    if (s.s2 < 0)
    {
      Re.noalias() = f1.R * R_world;
      d.Gjw_.leftCols(out.w) = Jw1;
      return Re;
    }
    const FrameKin & f2 = d.frames[s.s2];
    if (off_identity)
      Re.noalias() = f1.R * f2.R.transpose();
    else
      Re.noalias() = (f1.R * R_off) * f2.R.transpose();
    d.Gjw_.leftCols(out.w).noalias() =
      Jw1 - Re.lazyProduct(f2.J.bottomRows<3>().middleCols(out.c0, out.w));
    return Re;
  }

  void kinds::aligned_rows(
    Data & d, const Spec & s, const Mat3 & R_off, bool off_identity, const RowOut & out,
    bool all_rows)
  {
    const int row = out.row, hrow = out.hrow, c0 = out.c0, nw = out.w;
    const bool with_drift = out.with_drift;
    const FrameKin & f1 = d.frames[s.s1];
    const Mat3 Re = relative_rotation(d, s, s.R_right, R_off, off_identity, out);
    const auto Gjw = d.Gjw_.leftCols(nw);
    const double tr = Re.trace();
    const Mat3 G = 0.5 * (tr * Mat3::Identity() - Re);
    const Vec3 e(
      0.5 * (Re(2, 1) - Re(1, 2)), 0.5 * (Re(0, 2) - Re(2, 0)), 0.5 * (Re(1, 0) - Re(0, 1)));
    Vec3 dr = Vec3::Zero();
    if (with_drift)
    {
      // _drift3: G' w + G w', w = J_w v, w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)
      const Vec3 w = Gjw * d.vref_->segment(c0, nw);
      Vec3 a = f1.drift.tail<3>();
      if (s.s2 >= 0)
      {
        const FrameKin & f2 = d.frames[s.s2];
        const Vec3 u = Re * f2.w;
        a -= Re * f2.drift.tail<3>() + w.cross(u);
      }
      const double tr_d = w.x() * (Re(1, 2) - Re(2, 1)) + w.y() * (Re(2, 0) - Re(0, 2))
                          + w.z() * (Re(0, 1) - Re(1, 0));
      const Vec3 c = Re * w;
      dr = 0.5 * (tr_d * w - w.cross(c) + tr * a - Re * a);
    }
    if (all_rows)
    {
      if (!out.rows_stand)
      {
        d.A.block(row, c0, 3, nw).noalias() = G.lazyProduct(Gjw);
        d.phi.segment<3>(hrow) = e;
      }
      d.drift.segment<3>(row) = dr;
    }
    else
    {
      const int k = int(s.D.rows());
      if (!out.rows_stand)
      {
        d.A.block(row, c0, k, nw).noalias() = (s.D * G) * Gjw;
        d.phi.segment(hrow, k).noalias() = s.D * e;
      }
      d.drift.segment(row, k).noalias() = s.D * dr;
    }
  }

  // QuatAligned.terms: R_e = R_1 R_off R_2^T, q_e = (s, u) with s >= 0, Phi = u,
  // A = H J_w, H = (s I - [u]x) / 2, drift = H' w + H w', H' = (s' I - [u']x) / 2,
  // s' = -u.w / 2, u' = H w, w' = alpha_1 - R_e alpha_2 - w x (R_e omega_2)
  void kinds::quat_rows(Data & d, const Spec & s, const RowOut & out)
  {
    const int row = out.row, hrow = out.hrow, c0 = out.c0, nw = out.w;
    const FrameKin & f1 = d.frames[s.s1];
    const Mat3 Re = relative_rotation(d, s, s.R_off, s.R_off, false, out);
    const auto Gjw = d.Gjw_.leftCols(nw);
    const Eigen::Quaterniond qe(Re);
    double sc = qe.w();
    Vec3 u = qe.vec();
    if (sc < 0.0)
    {
      sc = -sc;
      u = -u;
    }
    const Mat3 H = 0.5 * (sc * Mat3::Identity() - skew(u));
    if (!out.rows_stand) // else A and Phi of this q stand
    {
      d.A.block(row, c0, 3, nw).noalias() = H.lazyProduct(Gjw);
      d.phi.segment<3>(hrow) = u;
    }
    if (!out.with_drift)
    {
      d.drift.segment<3>(row).setZero();
      return;
    }
    const Vec3 w = Gjw * d.vref_->segment(c0, nw);
    Vec3 wdot = f1.drift.tail<3>();
    if (s.s2 >= 0)
    {
      const FrameKin & f2 = d.frames[s.s2];
      const Vec3 o2 = Re * f2.w;
      wdot -= Re * f2.drift.tail<3>();
      wdot -= w.cross(o2);
    }
    const Vec3 du = H * w;
    const Mat3 Hd = 0.5 * ((-0.5 * u.dot(w)) * Mat3::Identity() - skew(du));
    d.drift.segment<3>(row) = Hd * w + H * wdot;
  }

  namespace
  {
    void write_spec(
      const Model & mo, Data & d, const Spec & s, int row, int hrow, const VecX & q,
      bool with_drift, bool rows_stand)
    {
      // the kind's row writer (src/cpp/kinds/*.cpp), by its position in kinds.def
      using RowFn = void (*)(const Model &, Data &, const Spec &, const RowOut &);
      static const RowFn writers[] = {
  #define PFAFF_KIND(K, rows, window, holonomic) &kinds::K,
  #include "kinds.def"
  #undef PFAFF_KIND
      };
      const auto [c0, w] = mo.row_cols[size_t(row)];
      // a Scaled spec's writer writes all its rows (its factors apply to all three)
      const RowOut out{row, hrow, q, with_drift, c0, w, rows_stand && s.scale.size() == 0};
      writers[static_cast<int>(s.kind)](mo, d, s, out);
      if (s.scale.size()) // Scaled: the rows times constant factors (coupling.Scaled)
      {
        d.A.block(row, c0, s.dim, w).array().colwise() *= s.scale.array();
        d.drift.segment(row, s.dim).array() *= s.scale.array();
        if (holonomic(s))
          d.phi.segment(hrow, s.dim).array() *= s.scale.array();
      }
    }
  } // namespace

  void evaluate(const Model & mo, Data & d, const VecX & q, const VecX & v, bool with_drift)
  {
    d.vref_ = &v;
    // A and Phi depend on q alone, through the frames' placements and Jacobians: where
    // the last evaluate was at this q and no kinematics pass ran since, they stand and
    // a writer may write the drift alone (RowOut::rows_stand)
    const bool rows_stand = d.st_.kin != 0 && d.st_.rows_kin == d.st_.kin
                            && d.q_rows_.size() == q.size() && d.q_rows_ == q;
    // A, drift, Phi move (the start terms no longer stand); the contacts' geometry is
    // computed once in this pass
    d.st_.rows = d.st_.next();
    d.st_.rows_kin = d.st_.kin;
    if (!rows_stand)
      d.q_rows_ = q;
    int row = 0, hrow = 0;
    for (const auto & s : mo.specs)
    {
      write_spec(mo, d, s, row, hrow, q, with_drift, rows_stand);
      row += s.dim;
      if (holonomic(s))
        hrow += s.dim;
    }
    if (mo.m_h < mo.m && !rows_stand) // A_h: the holonomic rows (A serves where all are)
      for (int i = 0; i < mo.m_h; ++i)
        d.A_h.row(i) = d.A.row(mo.hol_rows[i]);
  }
} // namespace pfaff
