// What the bindings hold: a System is one Model (model/core.hpp, read-only, changed
// only through a ModelBuilder: model/builder.hpp), one Data made from it, a Stepper (the
// state a step moves, the Recorder of the samples, the step counter) and a held law (a
// controller's force elements sampled and held: outside the plant). Composition, as
// pinocchio's Model and Data: each part is handed to the free functions that read or
// fill it (run: start_terms, accel, forces, step, record).
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "model/builder.hpp"
#include "sim/record.hpp"

namespace pfaff
{
  /// A controller whose law is force elements sampled and held (zero-order hold): at
  /// each sample (sample_due, tables.hpp) tau = their Q at the state, then next +=
  /// period. Outside the plant: the Model knows nothing of it.
  struct HeldLaw
  {
    ForceSet elements; // the law's elements (System::add_held_force)
    ForceTerms terms;  // their terms at the last sample
    bool on = false;
    double next = 0.0, period = 0.0;

    /// sample the law from next_control on, every control_dt (on where it has elements)
    void set(double next_control, double control_dt)
    {
      next = next_control;
      period = control_dt;
      on = !elements.empty();
    }
    /// at a sample due at t (steps of dt): tau = the elements' Q at (q, v), the frames of
    /// d at (q, v) with velocity; next moves one period on. False: no sample due
    bool sample(const Model & mo, Data & d, const VecX & q, const VecX & v, double t,
                double dt, VecX & tau);
    /// tau = the elements' Q at (q, v) at time t (d's frames at (q, v), with velocity),
    /// whatever the clock: a sample another clock decides (a limited run's)
    void evaluate(const Model & mo, Data & d, const VecX & q, const VecX & v, double t,
                  VecX & tau);
  };

  /// The step loop: the state it moves with its accounts (StepState), the Recorder its
  /// samples go to and the count of steps taken
  struct Stepper
  {
    StepState state;
    /// the record buffers of run (record.hpp): the samples, one row per recorded state
    Recorder recorder;
    int steps = 0;

    /// states k0 .. k1-1 of a run of n_steps from t0 (each: the start terms, the held
    /// law's sample, the record, the step); stops after n_steps
    Status run(const Model & mo, Data & d, HeldLaw & law, int k0, int k1, int n_steps,
               double t0);

  private:
    /// run's loop: k its state, in_step inside its step (where a KKTSingular came from)
    Status run_steps(const Model & mo, Data & d, HeldLaw & law, int k0, int k1, int n_steps,
                     double t0, int & k, bool & in_step);
  };

  class System
  {
  public:
    explicit System(const std::string & model_data, bool binary = false);
    /// a copy with a Model of its own (a clone's set-up calls leave this one's alone)
    System(const System & other);
    System & operator=(const System & other);
    System(System &&) = default;
    System & operator=(System &&) = default;

    const Model & mo() const { return *model_; }
    Data & d() { return data_; }
    const Data & d() const { return data_; }
    StepState & state() { return stepper_.state; }
    const StepState & state() const { return stepper_.state; }
    Stepper & stepper() { return stepper_; }
    const Stepper & stepper() const { return stepper_; }
    Recorder & recorder() { return stepper_.recorder; }
    /// the accounts and counters zeroed: work, correction energy, force work, Newton
    /// iterations and failures, the samples recorded, the steps
    void reset_counters()
    {
      StepState & x = stepper_.state;
      x.work = x.corr = x.force_work = 0.0;
      x.newton_it = x.newton_failures = stepper_.recorder.recorded = stepper_.steps = 0;
    }
    const Recorder & recorder() const { return stepper_.recorder; }
    HeldLaw & held() { return law_; }
    const HeldLaw & held() const { return law_; }

    int nq() const { return mo().nq(); }
    int nv() const { return mo().nv(); }
    int rows() const { return mo().rows(); }
    int holonomic_rows() const { return mo().holonomic_rows(); }
    int stages() const { return mo().stages(); }
    const Options & options() const { return mo().opt; }

    // -- set-up: each call through a ModelBuilder, the Data then fitted to the Model ------
    /// f(ModelBuilder &) changes the Model (a refused call leaves it as it was); with
    /// fit the Data is sized to it anew (Data::fit: a new stamp). Returns what f returns
    template <class F>
    auto change_model(F && f, bool fit = true)
    {
      ModelBuilder b(std::move(model_));
      struct Back // the Model comes back however f ends
      {
        System & s;
        ModelBuilder & b;
        ~Back() { s.model_ = b.build(); }
      } back{*this, b};
      if constexpr (std::is_void_v<decltype(f(b))>)
      {
        f(b);
        if (fit)
          data_.fit(b.model());
      }
      else
      {
        auto r = f(b);
        if (fit)
          data_.fit(b.model());
        return r;
      }
    }
    int add_frame(const std::string & name);
    int observe(const std::string & name);
    void add(const Spec & spec);
    int add_contact(const Contour & contour, int s_obj, int s_tip, double r);
    void add_force(const ForceSpec & spec);
    void set_tableau(const MatX & a, const VecX & b);
    /// an adaptive step instead (nq == nv): SciPy's pair (a, b, c, e, e3, order); the
    /// Data's terms stand (the pair sizes nothing until a step)
    void set_adaptive(const MatX & a, const VecX & b, const VecX & c, const VecX & e,
                      const VecX & e3, int order);
    /// a mechanism given in closed form (Model::plant), the Data fitted to it
    void set_plant(std::shared_ptr<const PlantLaw> plant);
    /// the largest condition number of the KKT matrix the runs met (kkt.cpp)
    double kkt_cond_max() const { return data_.kkt_cond_max_; }
    /// the options of every later call (the Data's terms stand: options size nothing)
    void set_options(const Options & o);
    /// the actuators' controls (ForceSet::set_ctrl)
    void set_ctrl(const VecX & u);
    /// the activations at the time t0 from which the ctrl is held (ForceSet::set_act)
    void set_act(const VecX & act, double t0);
    /// a force element of the held law (checked against the Model as add_force's)
    void add_held_force(const ForceSpec & spec);
    void set_held(double next_control, double control_dt) { law_.set(next_control, control_dt); }

    // -- per-state terms ----------------------------------------------------
    /// M, h (computeAllTerms) and the frames with drift at (q, v); energies if asked.
    void dynamics_state(const VecX & q, const VecX & v, bool extras);
    /// stacked A, drift, Phi from the frames last computed (drift only with velocity).
    void evaluate(const VecX & q, const VecX & v, bool with_drift);
    /// acceleration at (q, v, tau) as an RK4 stage takes it (certified QR, else SVD).
    void acceleration(const VecX & q, const VecX & v, const VecX & tau, VecX & a);
    /// one-call solve (tests): a, F, lambda, rank at (q, v, tau).
    void solve(
      const VecX & q, const VecX & v, const VecX & tau, VecX & a, VecX & F, VecX & lam, int & rank);

    // -- the step loop ------------------------------------------------------
    /// a state from outside: a pass of its own (the start terms of the last state no
    /// longer stand) and a new epoch (nor does the last correction's factor of A)
    void set_state(const VecX & q, const VecX & v)
    {
      stepper_.state.q_ = q;
      stepper_.state.v_ = v;
      data_.st_.epoch = data_.st_.next();
    }
    void set_tau(const VecX & tau) { stepper_.state.tau_ = tau; }
    /// the per-state workspace built anew from the Model alone (as
    /// pinocchio::Data(model)); the state, the accounts and the record buffers stay
    void rebuild_data() { data_ = Data(mo()); }
    /// the state brought onto the constraint manifold (simulate.project_state): the
    /// step's correction with max_iter Newton-Raphson iterations, then the workspace
    /// rebuilt at the projected state, so that a run from it computes what it would on
    /// a fresh System set to it. Status: max |Phi| where Newton stopped, its iterations
    Status project_state(int max_iter);
    /// q (and v) after one step of length x from (q0, v0) at t0 with the state's torque,
    /// the start brought onto the manifold (project_state(max_iter)), on a copy of the
    /// accounts; false where the start or the step fails, or where the step gains energy:
    /// its balance (the energy less the work of the torque, of the force elements and of
    /// the corrections) up by more than gain times its kinetic energy (its start's or its
    /// end's, the larger) and 1e-9 J
    bool trial_step(const VecX & q0, const VecX & v0, double t0, double x, int max_iter,
                    double gain, VecX & q, VecX * v);
    /// states k0 .. k1-1 (each: terms, record into the recorder, step); stops after
    /// n_steps
    Status run(int k0, int k1, int n_steps, double t0)
    {
      return stepper_.run(*model_, data_, law_, k0, k1, n_steps, t0);
    }

    /// a controller's record at the current state: what PinocchioMechanism.compute puts
    /// in a Snapshot and the projection the step takes (bound to Python as
    /// pfaff._core.Sample, each field a view of the struct's arrays; read by
    /// pfaff.simulate.core_engine._record)
    struct Sample
    {
      VecX q, v;
      RowMat M;         // nv x nv
      VecX h;           // C v + g - Q (the force elements')
      RowMat A;         // m x nv
      VecX drift, phi;  // m, m_h
      RowMat V1, W;     // the row-space factors of A: A^+ = V1 W^T (nv x r, m x r)
      RowMat N;         // an orthonormal basis of N(A) (nv x (nv - r))
      RowMat P;         // P = I - V1 V1^T
      VecX Cv;          // C v = -A^+ drift
      VecX F, lam;      // with_sensors: the readings of the held torque (else empty)
      RowMat frames;    // the observed frames, one row each: p, R row by row, J (6 x nv)
                        // row by row, drift (6)
      VecX g;           // gravity's generalized force
      int rank = 0;
      double sigma_min = 0.0, kinetic = 0.0, potential = 0.0; // 0.5 v^T M v, gravity's
    };
    void sample(bool with_sensors, Sample & out);

  private:
    bool well_conditioned_rows(const VecX & tau, VecX & a); // acceleration's short path

    std::unique_ptr<const Model> model_;
    Data data_;
    Stepper stepper_;
    HeldLaw law_;
  };
} // namespace pfaff
