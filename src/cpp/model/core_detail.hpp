// Small helpers the core's files share (core.cpp, terms.cpp, rows.cpp, row_space.cpp,
// row_space_qr.cpp, projection.cpp, step.cpp): not part of the core's interface.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "model/core.hpp"

namespace pfaff::detail
{
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  /// [r]x: skew(r) y = r x y
  inline Mat3 skew(const Vec3 & r)
  {
    Mat3 S;
    S << 0.0, -r.z(), r.y(), r.z(), 0.0, -r.x(), -r.y(), r.x(), 0.0;
    return S;
  }

  /// the velocity rows of the point at r (world, from the frame's origin) of a frame
  /// whose kinematics f holds: v_o + w x r, J_lin - [r]x J_ang (3 x nv)
  inline Matrix3x point_rows(const FrameKin & f, const Vec3 & r)
  {
    return f.J.topRows<3>() - skew(r) * f.J.bottomRows<3>();
  }

  inline double abs_max(const VecX & x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0; }

  /// false, with st set to code 1 naming what, where x has a non-finite entry
  inline bool finite_or(const char * what, const VecX & x, double t, int step, Status & st)
  {
    for (int i = 0; i < x.size(); ++i)
      if (!std::isfinite(x(i)))
      {
        st.code = status_code::non_finite;
        st.what = what;
        st.index = i;
        st.value = x(i);
        st.t = t;
        st.step = step;
        return false;
      }
    return true;
  }

  /// the root of t in the union-find forest uf (uf[t] == t at a root), halving the
  /// path on the way (the kinematic trees joined by rows: find_blocks, one_block)
  inline int uf_root(std::vector<int> & uf, int t)
  {
    while (uf[size_t(t)] != t)
      t = uf[size_t(t)] = uf[size_t(uf[size_t(t)])];
    return t;
  }

  /// the ascending indices are i0, i0 + 1, ... (a block of a matrix, not a gather)
  inline bool consecutive(const std::vector<int> & ix)
  {
    return !ix.empty() && ix.back() - ix.front() + 1 == int(ix.size());
  }

  /// row_space_qr.cpp: A's row space by the certified QR of its nonzero rows, and by the
  /// column-pivoted QR of rank-deficient rows; false where they do not certify it
  bool zero_rows_qr(const Model & mo, Data & d, const MatX & Am, RowSpace & rs);
  bool pivoted_rows(const Model & mo, Data & d, const MatX & Am, RowSpace & rs);
} // namespace pfaff::detail
