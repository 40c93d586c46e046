// The partials of RNEA at (q, v, a) in q and v for the derivatives of the projection
// dynamics (rnea_partials.hpp): Pinocchio's computeRNEADerivatives
// (rnea-derivatives.hxx, pin 4.1.0), its forward step taken from Pinocchio's own
// template, its backward step the same sums without the two products the derivatives
// never read: dtau/da (M, which the dynamics' mass pass already gave) and tau itself.
// The partials in q and v come out of the same expressions in the same order (the
// witness: the derivatives' parity with the NumPy reference, whose partials are
// Pinocchio's Python computeRNEADerivatives, unchanged at 1.8e-10 on the bench's files).
#include "algorithms/rnea_partials.hpp"

#include "pinocchio/algorithm/rnea-derivatives.hpp"

namespace pfaff
{
  namespace
  {
    using Cols = Eigen::Block<MatX, Eigen::Dynamic, Eigen::Dynamic, true>;

    /// ComputeRNEADerivativesForwardStep on the placements, Jacobian, velocities and
    /// inertias the dynamics' fused mass pass (mass_and_bias: Pinocchio's
    /// ContactAndImpulseDynamicsForwardStep, world frame) left at the same (q, v): no
    /// joint calc, no placement again. Its bias acceleration oa0 (at a = 0) gives the
    /// acceleration at a by oa_i = oa0_i + J_i a_i + (oa_parent - oa0_parent), as
    /// oMi.act(v_i x vJ) = ov_parent x ov_i; the rest is Pinocchio's forward step's
    struct SharedForward
    : public pinocchio::fusion::JointUnaryVisitorBase<SharedForward>
    {
      using Model = pinocchio::Model;
      using Data = pinocchio::Data;
      typedef boost::fusion::vector<const Model &, Data &, const Data &, const VecX &> ArgsType;

      template<typename JointModel>
      static void algo(
        const pinocchio::JointModelBase<JointModel> & jmodel, const Model & model, Data & data,
        const Data & pass, const VecX & a)
      {
        using Motion = pinocchio::Motion;
        using Matrix6x = Data::Matrix6x;
        using ColsBlock =
          typename pinocchio::SizeDepType<JointModel::NV>::template ColsReturn<Matrix6x>::Type;
        namespace motionSet = pinocchio::motionSet;
        const pinocchio::JointIndex i = jmodel.id();
        const pinocchio::JointIndex parent = model.parents[i];
        data.liMi[i] = pass.liMi[i];
        data.oMi[i] = pass.oMi[i];
        const Motion & ov = data.ov[i] = pass.ov[i];
        ColsBlock J_cols = jmodel.jointCols(data.J);
        J_cols = jmodel.jointCols(pass.J);
        Motion & oa = data.oa[i];
        oa = pass.oa[i];
        oa.toVector().noalias() += J_cols * jmodel.jointVelocitySelector(a);
        if (parent > 0)
          oa += data.oa[parent] - pass.oa[parent];
        data.oa_gf[i] = oa - model.gravity;
        data.v[i] = data.oMi[i].actInv(ov); // the LOCAL acceleration partials read it
        data.oYcrb[i] = data.oinertias[i] = pass.oinertias[i];
        data.oh[i] = pass.oh[i]; // oinertias ov (the fused pass keeps each joint's)
        data.of[i] = data.oYcrb[i] * data.oa_gf[i] + ov.cross(data.oh[i]);

        ColsBlock dJ_cols = jmodel.jointCols(data.dJ);
        ColsBlock dVdq_cols = jmodel.jointCols(data.dVdq);
        ColsBlock dAdq_cols = jmodel.jointCols(data.dAdq);
        ColsBlock dAdv_cols = jmodel.jointCols(data.dAdv);
        motionSet::motionAction(ov, J_cols, dJ_cols);
        motionSet::motionAction(data.oa_gf[parent], J_cols, dAdq_cols);
        dAdv_cols = dJ_cols;
        if (parent > 0)
        {
          motionSet::motionAction(data.ov[parent], J_cols, dVdq_cols);
          motionSet::motionAction<pinocchio::ADDTO>(data.ov[parent], dVdq_cols, dAdq_cols);
          dAdv_cols.noalias() += dVdq_cols;
        }
        else
          dVdq_cols.setZero();
        data.doYcrb[i] = data.oYcrb[i].variation(ov);
        using Step = pinocchio::impl::ComputeRNEADerivativesForwardStep<
          double, 0, pinocchio::JointCollectionDefaultTpl, VecX, VecX, VecX>;
        Step::addForceCrossMatrix(data.oh[i], data.doYcrb[i]);
      }
    };

    /// ComputeRNEADerivativesBackwardStep less the rows of dtau/da and of tau
    struct Backward
    : public pinocchio::fusion::JointUnaryVisitorBase<Backward>
    {
      using Model = pinocchio::Model;
      using Data = pinocchio::Data;
      typedef boost::fusion::vector<const Model &, Data &, Cols &, Cols &> ArgsType;

      template<typename JointModel>
      static void algo(
        const pinocchio::JointModelBase<JointModel> & jmodel, const Model & model, Data & data,
        Cols & dq, Cols & dv)
      {
        using Matrix6x = Data::Matrix6x;
        using ColsBlock =
          typename pinocchio::SizeDepType<JointModel::NV>::template ColsReturn<Matrix6x>::Type;
        namespace motionSet = pinocchio::motionSet;
        const pinocchio::JointIndex i = jmodel.id();
        const pinocchio::JointIndex parent = model.parents[i];
        Matrix6x & dYtJ = data.Fcrb[0];
        ColsBlock J_cols = jmodel.jointCols(data.J);
        ColsBlock dVdq_cols = jmodel.jointCols(data.dVdq);
        ColsBlock dAdq_cols = jmodel.jointCols(data.dAdq);
        ColsBlock dAdv_cols = jmodel.jointCols(data.dAdv);
        ColsBlock dFdq_cols = jmodel.jointCols(data.dFdq);
        ColsBlock dFdv_cols = jmodel.jointCols(data.dFdv);
        ColsBlock dFda_cols = jmodel.jointCols(data.dFda);
        ColsBlock dYtJ_cols = jmodel.jointCols(dYtJ);

        const Eigen::Index nv_subtree = data.nvSubtree[i];
        const Eigen::Index nv = jmodel.nv();
        const Eigen::Index idx_v = jmodel.idx_v();
        const Eigen::Index idx_v_plus = idx_v + nv;
        const Eigen::Index nv_subtree_plus = nv_subtree - nv;

        // the joint's columns of the composite inertia's action (dtau/da's factor: the
        // products below read it; dtau/da itself is M)
        motionSet::inertiaAction(data.oYcrb[i], J_cols, dFda_cols);

        // dtau/dq
        if (parent > 0)
        {
          dFdq_cols.noalias() = data.doYcrb[i] * dVdq_cols;
          motionSet::inertiaAction<pinocchio::ADDTO>(data.oYcrb[i], dAdq_cols, dFdq_cols);
        }
        else
          motionSet::inertiaAction(data.oYcrb[i], dAdq_cols, dFdq_cols);

        dYtJ_cols.transpose().noalias() = J_cols.transpose() * data.doYcrb[i];
        // (depth 6: coefficient by coefficient, where Eigen would call its matrix-vector
        // or blocked kernels per joint)
        dq.block(idx_v_plus, idx_v, nv_subtree_plus, nv) =
          data.dFda.middleCols(idx_v_plus, nv_subtree_plus).transpose().lazyProduct(dAdq_cols)
          + dYtJ.middleCols(idx_v_plus, nv_subtree_plus).transpose().lazyProduct(dVdq_cols);
        dq.block(idx_v, idx_v, nv, nv_subtree) =
          J_cols.transpose().lazyProduct(data.dFdq.middleCols(idx_v, nv_subtree));

        motionSet::act<pinocchio::ADDTO>(J_cols, data.of[i], dFdq_cols);

        // dtau/dv
        dFdv_cols.noalias() = data.doYcrb[i] * J_cols;
        motionSet::inertiaAction<pinocchio::ADDTO>(data.oYcrb[i], dAdv_cols, dFdv_cols);

        dv.block(idx_v_plus, idx_v, nv_subtree_plus, nv) =
          data.dFda.middleCols(idx_v_plus, nv_subtree_plus).transpose().lazyProduct(dAdv_cols)
          + dYtJ.middleCols(idx_v_plus, nv_subtree_plus).transpose().lazyProduct(J_cols);
        dv.block(idx_v, idx_v, nv, nv_subtree) =
          J_cols.transpose().lazyProduct(data.dFdv.middleCols(idx_v, nv_subtree));

        if (parent > 0)
        {
          data.oYcrb[parent] += data.oYcrb[i];
          data.doYcrb[parent] += data.doYcrb[i];
          data.of[parent] += data.of[i];
        }
      }
    };
  } // namespace

  void rnea_partials(
    const pinocchio::Model & model, pinocchio::Data & data, const VecX & q, const VecX & v,
    const VecX & a, MatX & out, const pinocchio::Data * pass)
  {
    const int nv = model.nv;
    Cols dq = out.leftCols(nv), dv = out.rightCols(nv);
    data.oa_gf[0] = -model.gravity;
    using Forward = pinocchio::impl::ComputeRNEADerivativesForwardStep<
      double, 0, pinocchio::JointCollectionDefaultTpl, VecX, VecX, VecX>;
    if (pass)
      for (pinocchio::JointIndex i = 1; i < pinocchio::JointIndex(model.njoints); ++i)
        SharedForward::run(model.joints[i], SharedForward::ArgsType(model, data, *pass, a));
    else
      for (pinocchio::JointIndex i = 1; i < pinocchio::JointIndex(model.njoints); ++i)
        Forward::run(model.joints[i], data.joints[i], Forward::ArgsType(model, data, q, v, a));
    for (pinocchio::JointIndex i = pinocchio::JointIndex(model.njoints - 1); i > 0; --i)
      Backward::run(model.joints[i], Backward::ArgsType(model, data, dq, dv));
    // dAdq without gravity again (the frames' acceleration partials read it)
    for (Eigen::Index k = 0; k < model.nv; ++k)
    {
      pinocchio::MotionRef<pinocchio::Data::Matrix6x::ColXpr> m_in(data.J.col(k));
      pinocchio::MotionRef<pinocchio::Data::Matrix6x::ColXpr> m_out(data.dAdq.col(k));
      m_out.linear() += model.gravity.linear().cross(m_in.angular());
    }
  }
} // namespace pfaff
