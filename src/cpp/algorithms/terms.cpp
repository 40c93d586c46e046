// The per-state terms (M, h, the frames' placements, Jacobians and drift), M's factor
// and the Gram matrix of a row space through it (see core.hpp; the constraint rows
// these frames give are rows.cpp's).
#include "model/core.hpp"
#include "model/check.hpp"
#include "model/core_detail.hpp"
#include "algorithms/tree_factor.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "pinocchio/algorithm/cholesky.hpp"
#include "pinocchio/algorithm/constrained-dynamics.hpp"
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

  namespace
  {
    void take_mass(Data & d, const VecX & q)
    {
      // data.M (upper triangle) holds M of q; the pass also placed the joints. What was
      // factored or built on the last M keeps that M's stamp, and so no longer stands
      d.q_M_ = q;
      d.st_.mass = d.st_.kin = d.st_.next();
    }

    const std::vector<std::string> kNoFrames; // a plant's pass that asks for no frame

    // a plant's pass of M alone at q (zero velocity; with extras g and the potential too)
    void plant_mass(const Model & mo, Data & d, const VecX & q, bool extras)
    {
      (*mo.plant)(q, d.v0_, false, kNoFrames, nullptr, true, extras, d.plant_);
    }

    // a plant's dynamics pass (Model::plant): M, h and the frame slots with drift at
    // (q, v), gravity's potential with extras. Where M of q stands it is kept (its
    // factor and G of the row space stand with it), as Pinocchio's RNEA alone keeps it
    // (mass_and_bias)
    void plant_dynamics(const Model & mo, Data & d, const VecX & q, const VecX & v, bool extras)
    {
      const bool stands = d.mass_stands(q);
      (*mo.plant)(q, v, true, d.plant_names_, &d.frames, true, extras, d.plant_);
      if (stands)
        d.st_.bias = d.st_.next();
      else
      {
        d.data.M = d.plant_.M;
        take_mass(d, q);
        d.st_.bias = d.st_.mass;
      }
      d.h = d.plant_.h;
      if (extras)
        d.potential_gravity = d.plant_.potential;
    }
  } // namespace

  // -- per-state terms (PinocchioMechanism.compute) -----------------------------
  void frame_terms(
    const Model & mo, Data & d, const std::vector<FrameSlot> & slots, std::vector<FrameKin> & fs,
    const VecX * v, bool placements)
  {
    for (size_t i = 0; i < slots.size(); ++i)
    {
      const pinocchio::FrameIndex id = slots[i].id;
      FrameKin & f = fs[i];
      if (slots[i].joint == 0)
      {
        // a frame on the world: its placement is fixed, its J stays 0.0 from the set-up
        // (FrameKin(nv)), no velocity or acceleration
        if (placements)
        {
          const pinocchio::SE3 & oMf = d.data.oMf[id] = mo.model.frames[id].placement;
          f.p = oMf.translation();
          f.R = oMf.rotation();
        }
        f.drift.setZero();
        f.w.setZero();
        continue;
      }
      if (placements)
      {
        const auto & oMf = pinocchio::updateFramePlacement(mo.model, d.data, id);
        f.p = oMf.translation();
        f.R = oMf.rotation();
        if (mo.mimic)
          pinocchio::getFrameJacobian(mo.model, d.data, id, pinocchio::LOCAL_WORLD_ALIGNED, f.J);
        else
          // getFrameJacobian's LOCAL_WORLD_ALIGNED columns, for a model without mimic
          // joints: the joints' world columns (data.J) of the frame's supporting joints,
          // their linear part moved to the frame's origin (the other columns stay 0.0)
          for (int j = slots[i].c1 - 1; j >= 0; j = d.data.parents_fromRow[size_t(j)])
          {
            const auto Jj = d.data.J.col(j);
            f.J.col(j).tail<3>() = Jj.tail<3>();
            f.J.col(j).head<3>() = Jj.head<3>() - f.p.cross(Jj.tail<3>());
          }
      }
      if (v)
      {
        f.drift = pinocchio::getFrameClassicalAcceleration(
                    mo.model, d.data, id, pinocchio::LOCAL_WORLD_ALIGNED)
                    .toVector();
        f.w.noalias() = f.J.bottomRows<3>() * *v;
      }
      else
      {
        f.drift.setZero();
        f.w.setZero();
      }
    }
  }

  void dynamics_state(const Model & mo, Data & d, const VecX & q, const VecX & v, bool extras)
  {
    // M (upper triangle; CRBA in the WORLD convention also fills the joint Jacobians
    // data.J), h = RNEA at a = 0, then the kinematics at a = 0 for the frames' drift
    // (computeAllTerms does all of it and more: centroidal terms, energies, Jcom); a
    // plant's from its own pass
    if (mo.plant)
      plant_dynamics(mo, d, q, v, extras);
    else
    {
      const bool fresh = mass_and_bias(mo, d, q, v);
      joint_accelerations(mo, d, mo.frame_slots);
      d.h = d.data.nle;
      // placements and Jacobians stand with M
      frame_terms(mo, d, mo.frame_slots, d.frames, &v, fresh);
    }
    if (!mo.force_elements.empty()) // force elements: tau + Q - h = tau - (h - Q)
    {
      if (mo.force_elements.gravity)
        gravity_terms(mo, d, q);
      if (!d.felems.evaluate(mo.force_elements, d.frames, q, v, d.g_fe_, d.Vg_fe_, d.t_))
        d.felems.Q(0) = kNaN; // a point spring's points coincide: direction undefined
      d.h -= d.felems.Q;
    }
    if (extras)
    {
      d.Mv_.noalias() = dense_M(mo, d) * v;
      d.kinetic = 0.5 * v.dot(d.Mv_);
      // from the joints' placements at q the mass pass left (data.oMi), without the
      // forward kinematics pass the overload with q would run again (a plant's pass
      // gave it)
      if (!mo.plant)
        d.potential_gravity = pinocchio::computePotentialEnergy(mo.model, d.data);
      d.potential = d.potential_gravity + d.felems.V;
    }
  }

  void gravity_terms(const Model & mo, Data & d, const VecX & q)
  {
    if (mo.plant)
    {
      plant_mass(mo, d, q, true);
      d.g_fe_ = d.plant_.g;
      d.Vg_fe_ = d.plant_.potential;
      return;
    }
    // on data_g: data keeps the passes of the state (M, h, the frames)
    d.g_fe_ = pinocchio::computeGeneralizedGravity(mo.model, d.data_g, q);
    d.Vg_fe_ = pinocchio::computePotentialEnergy(mo.model, d.data_g, q);
  }

  void generalized_gravity(const Model & mo, Data & d, const VecX & q, VecX & g)
  {
    if (mo.plant)
    {
      plant_mass(mo, d, q, true);
      g = d.plant_.g;
    }
    else
      g = pinocchio::computeGeneralizedGravity(mo.model, d.data_g, q);
  }

  void observed_frames(const Model & mo, Data & d, const VecX & q, const VecX & v)
  {
    if (mo.plant)
    {
      (*mo.plant)(q, v, true, d.plant_obs_names_, &d.obs_frames, false, false, d.plant_);
      return;
    }
    joint_accelerations(mo, d, mo.obs_slots);
    frame_terms(mo, d, mo.obs_slots, d.obs_frames, &v, true);
  }

  void joint_accelerations(const Model & mo, Data & d, const std::vector<FrameSlot> & fs)
  {
    // the joints that carry a frame: their velocity and acceleration at zero joint
    // acceleration in the joint frame, as getFrameClassicalAcceleration reads them
    if (d.st_.bias == d.st_.mass) // the fused pass left ov, oa in the world frame
      for (const auto & f : fs)
      {
        d.data.v[f.joint] = d.data.oMi[f.joint].actInv(d.data.ov[f.joint]);
        d.data.a[f.joint] = d.data.oMi[f.joint].actInv(d.data.oa[f.joint]);
      }
    else // RNEA's forward pass leaves v and a_gf = a - X g (X: world to joint)
      for (const auto & f : fs)
        d.data.a[f.joint] = d.data.a_gf[f.joint] + d.data.oMi[f.joint].actInv(mo.model.gravity);
  }

  bool mass_and_bias(const Model & mo, Data & d, const VecX & q, const VecX & v)
  {
    if (d.mass_stands(q))
    {
      // M of q stands (the correction's CRBA): the bias forces only
      pinocchio::nonLinearEffects(mo.model, d.data, q, v);
      d.st_.bias = d.st_.next();
      return false;
    }
    // M (WORLD convention: data.oMi, data.J) and nle = C v + g in one forward and one
    // backward pass over the joints: Pinocchio's own passes of constraintDynamics
    // (CRBA then RNEA would run the joints' calc and the forward sweep twice)
    using Forward = pinocchio::ContactAndImpulseDynamicsForwardStep<
      double, 0, pinocchio::JointCollectionDefaultTpl, VecX, VecX, true>;
    using Backward = pinocchio::ContactAndImpulseDynamicsBackwardStep<
      double, 0, pinocchio::JointCollectionDefaultTpl, true>;
    d.data.oYcrb[0].setZero();
    d.data.of[0].setZero();
    d.data.oa[0].setZero();
    d.data.ov[0].setZero();
    for (pinocchio::JointIndex i = 1; i < pinocchio::JointIndex(mo.model.njoints); ++i)
      Forward::run(
        mo.model.joints[i], d.data.joints[i], typename Forward::ArgsType(mo.model, d.data, q, v));
    for (pinocchio::JointIndex i = pinocchio::JointIndex(mo.model.njoints - 1); i > 0; --i)
      Backward::run(mo.model.joints[i], typename Backward::ArgsType(mo.model, d.data));
    d.data.M.diagonal() += mo.model.armature;
    take_mass(d, q);
    d.st_.bias = d.st_.mass; // the same pass: ov, oa in the world frame
    return true;
  }

  bool mass_matrix(const Model & mo, Data & d, const VecX & q)
  {
    // the CRBA pass of the last call still stands when q is bitwise the same and no
    // other kinematics ran since (the start of a step after a correction that took
    // no Newton step): M, its factor and data.oMi, data.J are those of q
    if (d.mass_stands(q))
      return false;
    if (mo.plant)
    {
      plant_mass(mo, d, q, false);
      d.data.M = d.plant_.M;
    }
    else
      pinocchio::crba(mo.model, d.data, q, pinocchio::Convention::WORLD);
    take_mass(d, q);
    return true;
  }

  const MatX & dense_M(const Model & mo, Data & d)
  {
    if (d.st_.dense == d.st_.mass)
      return d.M;
    // M has no entry between two kinematic trees: where each tree's columns are
    // consecutive (Model::tree_cols) only the trees' diagonal blocks are copied (the
    // rest of M stays 0.0 from the set-up)
    if (mo.tree_cols.empty())
    {
      d.M.triangularView<Eigen::Upper>() = d.data.M;
      d.M.triangularView<Eigen::StrictlyLower>() = d.data.M.transpose();
    }
    else
      for (const auto & [c0, w] : mo.tree_cols)
      {
        const auto B = d.data.M.block(c0, c0, w, w);
        d.M.block(c0, c0, w, w).triangularView<Eigen::Upper>() = B;
        d.M.block(c0, c0, w, w).triangularView<Eigen::StrictlyLower>() = B.transpose();
      }
    d.st_.dense = d.st_.mass;
    return d.M;
  }

  void mass_factor(const Model & mo, Data & d)
  {
    if (d.st_.factor == d.st_.mass && d.st_.mass != 0)
      return;
    pinocchio::cholesky::decompose(mo.model, d.data);
    d.sqrt_dinv_ = d.data.Dinv.cwiseSqrt(); // D^-1/2 (metric_gram)
    d.st_.factor = d.st_.mass;
  }

  // G = V1^T M^-1 V1 = Y^T D^-1 Y with Y = U^-1 V1 (M = U D U^T, Pinocchio's sparse
  // factor: one triangular solve per column instead of two), factored into llt_
  void metric_gram(const Model & mo, Data & d, const RowSpace & rs)
  {
    d.st_.gram_rows = rs.stamp;
    d.st_.gram_mass = d.st_.factor;
    if (rs.nblocks > 0)
    {
      // V1 and M are block diagonal (a block's columns are whole kinematic trees, and
      // U(cols, cols) of M = U D U^T is the factor of M(cols, cols)): G is too, one
      // G_b = Y_b^T D_b^-1 Y_b, Y_b = U(cols, cols)^-1 V1_b per block
      if (d.Yb_.size() < size_t(rs.nblocks))
      {
        d.Yb_.resize(size_t(rs.nblocks));
        d.Gb_.resize(size_t(rs.nblocks));
        d.llt_b_.resize(size_t(rs.nblocks));
      }
      for (int b = 0; b < rs.nblocks; ++b)
      {
        const RowBlock & blk = rs.blocks[size_t(b)];
        const int nb = int(blk.cols.size()), r = blk.rs.rank;
        if (r == 0 || blk.full) // a full block's projections need no G (RowBlock::full)
          continue;
        const auto & cols = blk.cols;
        MatX & Y = d.Yb_[size_t(b)];
        Y = blk.rs.V1;
        // back substitution with the unit upper triangle U(cols, cols), column-oriented
        // (axpy over U's columns; a block of one tree, or of trees side by side, has
        // consecutive columns and U(cols, cols) is a block of U), then the rows scaled
        // by D^-1/2
        const int c0 = cols.front();
        const bool block = detail::consecutive(cols);
        for (int c = 0; c < r; ++c)
        {
          double * y = Y.data() + size_t(c) * nb;
          for (int k = nb - 1; k > 0; --k)
          {
            const double yk = y[k];
            if (block)
            {
              const double * u = d.data.U.data() + size_t(c0 + k) * d.data.U.rows() + c0;
              for (int i = 0; i < k; ++i)
                y[i] -= yk * u[i];
            }
            else
              for (int i = 0; i < k; ++i)
                y[i] -= yk * d.data.U(cols[size_t(i)], cols[size_t(k)]);
          }
          for (int i = 0; i < nb; ++i)
            y[i] *= d.sqrt_dinv_(block ? c0 + i : cols[size_t(i)]);
        }
        MatX & G = d.Gb_[size_t(b)]; // one per block: no reallocation between sizes
        G.noalias() = Y.transpose().lazyProduct(Y);
        d.llt_b_[size_t(b)].compute(G);
      }
      return;
    }
    const MatX & V1 = rs.V1;
    d.Ya_ = V1;
    const int n = int(V1.rows());
    for (int c = 0; c < int(V1.cols()); ++c) // D^-1/2 U^-1 V1, column by column
    {
      double * y = d.Ya_.data() + size_t(c) * size_t(n);
      detail::tree_uiv(d.data, y);
      for (int i = 0; i < n; ++i)
        y[i] *= d.sqrt_dinv_(i);
    }
    if (V1.cols() <= 8) // a few rows: the plain product (rankUpdate's blocking costs more)
      d.Ga_.noalias() = d.Ya_.transpose().lazyProduct(d.Ya_);
    else
    {
      d.Ga_.setZero(V1.cols(), V1.cols());
      d.Ga_.selfadjointView<Eigen::Lower>().rankUpdate(d.Ya_.transpose());
    }
    d.llt_.compute(d.Ga_);
  }

  void gram_solve(const Data & d, const RowSpace & rs, VecX & y)
  {
    if (rs.nblocks == 0)
    {
      d.llt_.solveInPlace(y);
      return;
    }
    for (int b = 0; b < rs.nblocks; ++b)
    {
      const RowBlock & blk = rs.blocks[size_t(b)];
      auto seg = y.segment(blk.off, blk.rs.rank);
      if (blk.full)
        seg.setZero();
      else if (blk.rs.rank > 0)
        d.llt_b_[size_t(b)].solveInPlace(seg);
    }
  }

  void kinematics_state(const Model & mo, Data & d, const VecX & q, bool with_mass)
  {
    if (mo.plant) // the frames at zero velocity, M of q too where asked and not standing
    {
      const bool stands = d.mass_stands(q), want = with_mass && !stands;
      (*mo.plant)(q, d.v0_, false, d.plant_names_, &d.frames, want, false, d.plant_);
      if (want)
      {
        d.data.M = d.plant_.M;
        take_mass(d, q);
      }
      else if (!stands)
        d.st_.kin = d.st_.next();
      return;
    }
    if (with_mass || d.mass_stands(q))
      // the CRBA pass places the joints as the kinematics pass does (data.oMi, data.J)
      // and leaves M of q (nothing to do where it stands)
      mass_matrix(mo, d, q);
    else
    {
      // data.oMi, data.J move to q (the mass pass no longer stands); data.M, its
      // factor and M stay those of the mass pass
      d.st_.kin = d.st_.next();
      pinocchio::computeJointJacobians(mo.model, d.data, q);
    }
    frame_terms(mo, d, mo.frame_slots, d.frames, nullptr, true);
  }
} // namespace pfaff
