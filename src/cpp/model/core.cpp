// The compiled engine's Model and Data (see core.hpp): a Model of a serialised
// pinocchio.Model (its trees, its Lie-group blocks), a Data sized to a Model (Data::fit),
// and the point terms the kinds share. The set-up (frames, specs, contacts, force
// elements) is builder.cpp's; the per-state terms are in algorithms/terms.cpp, the rows
// in rows.cpp, the row space in row_space.cpp (its sigma_min in sigma_min.cpp), the
// dynamics in projection.cpp, the step and the correction in sim/step.cpp; the NumPy
// functions each block mirrors are named in its comment.
#include "model/core.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/algorithm/energy.hpp"
#include "pinocchio/algorithm/frames.hpp"
#include "pinocchio/algorithm/jacobian.hpp"
#include "pinocchio/algorithm/joint-configuration.hpp"
#include "pinocchio/algorithm/kinematics.hpp"
#include "pinocchio/algorithm/rnea.hpp"

namespace pfaff
{
  using detail::abs_max;
  using detail::kNaN;
  using detail::skew;


  // FrameState.point / point_jacobian / point_drift of a point fixed in a frame
  void kinds::point_terms(
    const FrameKin & f, bool has_off, const Vec3 & off, const RowOut & out, Vec3 & p,
    Matrix3x & Jp, Vec3 & ap)
  {
    const bool with_drift = out.with_drift;
    const auto J = f.J.middleCols(out.c0, out.w);
    if (!has_off)
    {
      p = f.p;
      Jp.leftCols(out.w) = J.topRows<3>();
      if (with_drift)
        ap = f.drift.head<3>();
      return;
    }
    const Vec3 r = f.R * off;
    p = f.p + r;
    Jp.leftCols(out.w).noalias() = J.topRows<3>() - skew(r).lazyProduct(J.bottomRows<3>());
    if (with_drift)
      ap = point_drift(f, true, off);
  }

  Vec3 kinds::point_drift(const FrameKin & f, bool has_off, const Vec3 & off)
  {
    if (!has_off)
      return f.drift.head<3>();
    const Vec3 r = f.R * off;
    return f.drift.head<3>() + f.drift.tail<3>().cross(r) + f.w.cross(f.w.cross(r));
  }

  Vec3 kinds::body2_contact_drift(
    const FrameKin & f1, const FrameKin & f2, const Vec3 & l, const Vec3 & x)
  {
    const Vec3 &w1 = f1.w, &w2 = f2.w;
    return w1.cross(w2.cross(l)) - w2.cross((w2 - w1).cross(l))
           - point_drift(f2, true, Vec3(f2.R.transpose() * (x - f2.p)));
  }

  Model::Model(const std::string & model_data, bool binary)
  : model(load_model(model_data, binary))
  {
    // Runge-Kutta-Munthe-Kaas stages where q lives on a Lie group (nq != nv):
    // d integrate / d theta is block diagonal, one block per joint; the multi-dof
    // joints' blocks get an LU each (Data::lu_blocks_; a 3-dof joint's and a free
    // flyer's take closed-form 3 x 3 inverses instead: stage_rate), the 1-dof joints'
    // are scalars
    lie_ = model.nq != model.nv;
    mimic = model.nvExtended != model.nv;
    for (pinocchio::JointIndex j = 1; j < pinocchio::JointIndex(model.njoints); ++j)
      if (model.nvs[j] > 1)
        lie_blocks_.emplace_back(model.idx_vs[j], model.nvs[j]);
    col_tree.assign(size_t(model.nv), -1);
    std::vector<int> tree_of(size_t(model.njoints), -1);
    for (pinocchio::JointIndex j = 1; j < pinocchio::JointIndex(model.njoints); ++j)
    {
      const auto p = model.parents[j];
      tree_of[j] = p == 0 ? ntrees++ : tree_of[p];
      for (int k = 0; k < model.nvs[j]; ++k)
        col_tree[size_t(model.idx_vs[j] + k)] = tree_of[j];
    }
    // each tree's columns, where they are consecutive and in the trees' order (as
    // Pinocchio's parsers number the joints, depth first)
    for (int j = 0; j < model.nv; ++j)
    {
      const int t = col_tree[size_t(j)], last = int(tree_cols.size()) - 1;
      if (t == last + 1)
        tree_cols.emplace_back(j, 1);
      else if (t == last && tree_cols.back().first + tree_cols.back().second == j)
        ++tree_cols.back().second;
      else
      {
        tree_cols.clear(); // interleaved: M is taken whole
        break;
      }
    }
  }

  Data::Data(const Model & mo)
  : data(mo.model)
  , data_g(mo.model)
  {
    const int nv = mo.model.nv;
    fit(mo);
    M.setZero(nv, nv);
    h.setZero(nv);
    Jp1_.setZero(3, nv);
    Jp2_.setZero(3, nv);
    Gjw_.setZero(3, nv);
    qs_ = pinocchio::neutral(mo.model);
    q1_ = qs_;
    dv_.setZero(nv);
    // the off-diagonal blocks of d integrate / d theta stay zero (dIntegrate sets the
    // joints' diagonal blocks)
    Jint_.setZero(nv, nv);
    for (const auto & blk : mo.lie_blocks_) // (idx_v, nv)
      lu_blocks_.emplace_back(blk.second);
    th_.setZero(nv);
  }

  void Data::fit(const Model & mo)
  {
    const int nv = mo.model.nv;
    frames.resize(mo.frame_slots.size(), FrameKin(nv));
    obs_frames.resize(mo.obs_slots.size(), FrameKin(nv));
    if (mo.plant) // the names a plant is asked for, slot by slot
    {
      plant_names_.clear();
      for (const auto & s : mo.frame_slots)
        plant_names_.push_back(mo.model.frames[s.id].name);
      plant_obs_names_.clear();
      for (const auto & s : mo.obs_slots)
        plant_obs_names_.push_back(mo.model.frames[s.id].name);
      v0_.setZero(nv);
    }
    contact_geometry.resize(mo.contacts.size(), ContactGeometry(nv));
    if (!mo.force_elements.empty() && felems.Q.size() != nv) // the force elements' terms
      felems.resize(nv);
    // the rows (none: an unconstrained system) anew: a row of A is 0.0 outside its
    // column window only as written from zero, and a held set changed at the same size
    // puts other rows (other windows) at the same places; the next evaluate writes them
    // all (no rows stand)
    A.setZero(mo.m, nv);
    drift.setZero(mo.m);
    A_h.setZero(mo.m_h, nv);
    phi.setZero(mo.m_h);
    st_.rows_kin = 0;
    if (acc_.size() != size_t(mo.stages())) // the stages' workspaces (set_tableau)
    {
      acc_.assign(size_t(mo.stages()), VecX::Zero(nv));
      rate_.assign(size_t(mo.stages()), VecX::Zero(nv));
      power_.assign(size_t(mo.stages()), 0.0);
    }
    st_.next();
  }

} // namespace pfaff
