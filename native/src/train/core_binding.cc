// N-API bindings of the compute core: class GeneratorCore plus learningRate() and computeInfo().
// The TypeScript side is src/model/native-core.ts, which documents every method; the shapes and
// the parameter order are those of src/model/generator.ts.
//
// Every argument is checked here before any computation: wrong types give a TypeError; wrong
// lengths, non-finite numbers (NaN / Infinity weights, latents, targets), zero rows, bad
// cardinalities or block spans give a RangeError naming the argument (and for arrays the first bad
// index); missing targets or a disposed object give an Error; memory exhaustion gives an Error.
// Nothing reaches the C++ core unchecked, so bad input never crashes the process.
//
// Calls are synchronous (they run on the calling JavaScript thread, a piscina worker in the engine,
// plus the process-wide compute pool, thread_pool.h), except trainStepAsync and evalLossAsync.
//
// Asynchronous calls (issue 11, DESIGN §4 "training one model never stalls requests for another"):
// a training step of the large model takes tens of milliseconds and a validation pass over 4096
// latents about 150 ms on 2 cores; run synchronously they block the worker's JavaScript thread, so
// a generate or a delete of ANOTHER model pinned to that worker waits behind them.
// trainStepAsync / evalLossAsync check their arguments on the JavaScript thread (throwing as the
// synchronous methods do), copy the latents (so a caller may reuse, mutate or transfer its array
// at once; the copy is n x E floats, 64 KiB for a default batch), then run the core's TrainStep /
// EvalLoss on a thread of their own (background.h: not libuv's pool, which LMDB's writes need)
// and settle a Promise with the loss. The compute pool is safe to call from several threads at
// once, so a generation on the JavaScript thread and a step on a background thread share the
// cores.
//
// One core, one call at a time: while an asynchronous call is in flight every other method of
// that same core throws Error("GeneratorCore is busy: trainStepAsync is in flight ...") instead
// of racing with it (the TypeScript wrapper, src/model/native-core.ts, queues its calls so it
// never sees that error). dispose() during an in-flight call is deferred: the core is marked
// disposed at once (later calls throw "disposed") and its memory is freed when the call ends,
// after which the promise still settles with the call's result. The core is shared (shared_ptr)
// between the JavaScript object and the in-flight call, so even a garbage-collected object never
// frees memory a background thread still uses.

#include "core_binding.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../gpu/gpu_loader.h"
#include "../napi_checks.h"
#include "background.h"
#include "cpu.h"
#include "gemm.h"
#include "generator_core.h"
#include "thread_pool.h"

namespace synthd {
namespace train {

namespace {

using napi_checks::IsIntegerIn;
using napi_checks::IsTypedArrayOf;
using napi_checks::JsString;
using napi_checks::ReadTemperature;
using napi_checks::ReadTopP;
using napi_checks::TopP;
using napi_checks::ThrowLogits;
using napi_checks::ThrowRange;
using napi_checks::ThrowType;

// At most 2^30 parameters (4 GiB of weights; each of Adam's moments as much again).
constexpr int64_t kMaxParams = int64_t{1} << 30;

double ReadInteger(Napi::Env env, const Napi::Value& v, const char* name, double lo, double hi) {
  if (!v.IsNumber()) ThrowType(env, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(d, lo, hi)) {
    ThrowRange(env, std::string(name) + " must be an integer in [" + JsString(env, lo) + ", " + JsString(env, hi) +
                        "], got " + JsString(env, d));
  }
  return d;
}

double ReadFinite(Napi::Env env, const Napi::Value& v, const char* name) {
  if (!v.IsNumber()) ThrowType(env, std::string(name) + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d)) ThrowRange(env, std::string(name) + " must be finite, got " + JsString(env, d));
  return d;
}

Napi::Float32Array ReadF32(Napi::Env env, const Napi::Value& v, const std::string& name, size_t expected,
                           const std::string& expected_what) {
  if (!IsTypedArrayOf(v, napi_float32_array)) ThrowType(env, name + " must be a Float32Array");
  Napi::Float32Array a = v.As<Napi::Float32Array>();
  if (a.ElementLength() != expected) {
    ThrowRange(env, name + " has " + std::to_string(a.ElementLength()) + " values, expected " + expected_what +
                        " = " + std::to_string(expected));
  }
  return a;
}

// First index i with !finite(x[i]) (or x[i] < 0 when nonneg), else n.
size_t FirstBad(const float* x, size_t n, bool nonneg) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || (nonneg && x[i] < 0.0f)) return i;
  }
  return n;
}

// n: rows, a positive integer (zero rows is an error).
int64_t ReadRows(Napi::Env env, const Napi::Value& v) {
  if (!v.IsNumber()) ThrowType(env, "n must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!IsIntegerIn(d, 1.0, 1073741824.0)) {
    ThrowRange(env, "n must be a positive integer (rows) no larger than 2^30, got " + JsString(env, d));
  }
  return static_cast<int64_t>(d);
}

// lr: the learning rate of a step, finite and >= 0.
double ReadLearningRate(Napi::Env env, const Napi::Value& v) {
  if (!v.IsNumber()) ThrowType(env, "lr must be a number");
  const double lr = v.As<Napi::Number>().DoubleValue();
  if (!(std::isfinite(lr) && lr >= 0)) ThrowRange(env, "lr must be finite and >= 0, got " + JsString(env, lr));
  return lr;
}

// A core and its use by asynchronous calls. Fields are read and written on the JavaScript thread
// only; a background thread uses `core` while `busy` is set, and nothing frees it meanwhile.
struct CoreSlot {
  std::unique_ptr<GeneratorCore> core;
  // Name of the asynchronous method in flight, or null.
  const char* busy = nullptr;
  // dispose() was called (the memory is freed once `busy` clears).
  bool disposed = false;
};

// One asynchronous TrainStep (train = true) or EvalLoss on a Background thread (background.h).
// Start() runs on the JavaScript thread: it marks the core busy, makes the promise and a
// thread-safe function (which keeps the thread's event loop alive until the job reports back) and
// posts the job. Run() computes on the background thread, then hands the job to CallJs on the
// JavaScript thread, which frees the core for other calls (or frees its memory after a dispose)
// and settles the promise. When the JavaScript environment is gone by then (a worker thread
// terminated mid-step), the job is deleted where it is; the shared CoreSlot keeps the core's memory
// valid until that moment, so the step never computes on freed memory.
//
// Teardown: Node deletes a thread-safe function when its environment is torn down, even while a
// thread still holds it (node_api.cc, ThreadSafeFunction::Finalize). So the background thread
// calls and releases it only under Link::mu while Link::alive, and the function's finalizer
// clears `alive` under the same mutex before Node deletes it.
class CoreJob {
  // Whether the thread-safe function still exists; shared by the job and the function's finalizer.
  struct Link {
    std::mutex mu;
    bool alive = true;  // guarded by mu
  };

 public:
  // Starts the job; returns its promise. Throws Napi::Error when it cannot be started.
  static Napi::Value Start(Napi::Env env, std::shared_ptr<CoreSlot> slot, const char* what, FloatBuffer z, int64_t n,
                           bool train, double lr) {
    std::unique_ptr<CoreJob> job(new CoreJob(std::move(slot), what, std::move(z), n, train, lr));
    napi_value name = Napi::String::New(env, what);
    auto* holder = new std::shared_ptr<Link>(job->link_);
    napi_status st = napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, holder, &CoreJob::Finalize,
                                                     nullptr, &CoreJob::CallJs, &job->tsfn_);
    if (st != napi_ok) {
      delete holder;
      throw Napi::Error::New(env, std::string(what) + ": cannot create the completion callback");
    }
    napi_value promise = nullptr;
    st = napi_create_promise(env, &job->deferred_, &promise);
    if (st != napi_ok) {
      napi_release_threadsafe_function(job->tsfn_, napi_tsfn_abort);
      throw Napi::Error::New(env, std::string(what) + ": cannot create the promise");
    }
    CoreJob* raw = job.get();
    try {
      Background::Instance().Post([raw] { raw->Run(); });
    } catch (const std::exception&) {
      // No thread to run it: settle now with an error (the core stays free).
      const std::string msg = std::string(what) + ": cannot start a compute thread";
      napi_value err = Napi::Error::New(env, msg).Value();
      napi_reject_deferred(env, job->deferred_, err);
      napi_release_threadsafe_function(job->tsfn_, napi_tsfn_abort);
      return Napi::Value(env, promise);
    }
    raw->slot_->busy = what;
    job.release();  // owned by the posted job from here on
    return Napi::Value(env, promise);
  }

 private:
  CoreJob(std::shared_ptr<CoreSlot> slot, const char* what, FloatBuffer z, int64_t n, bool train, double lr)
      : slot_(std::move(slot)), core_(slot_->core.get()), what_(what), z_(std::move(z)), n_(n), train_(train), lr_(lr) {}

  // On the background thread. Touches only the core (kept alive by slot_) and this job's fields.
  void Run() {
    try {
      result_ = train_ ? core_->TrainStep(z_.data(), n_, lr_) : core_->EvalLoss(z_.data(), n_);
    } catch (const std::bad_alloc&) {
      error_ = std::string(what_) + ": out of memory";
    } catch (const std::exception& e) {
      error_ = std::string(what_) + ": " + e.what();
    } catch (...) {
      error_ = std::string(what_) + ": failed";
    }
    // CallJs may delete this job as soon as the call is queued: copy what is used after it.
    const std::shared_ptr<Link> link = link_;
    const napi_threadsafe_function tsfn = tsfn_;
    std::lock_guard<std::mutex> lock(link->mu);
    if (!link->alive) {
      delete this;  // the environment is gone: nothing to settle
      return;
    }
    if (napi_call_threadsafe_function(tsfn, this, napi_tsfn_nonblocking) != napi_ok) delete this;  // closing
    napi_release_threadsafe_function(tsfn, napi_tsfn_release);
  }

  // The thread-safe function's finalizer (JavaScript thread, also at teardown).
  static void Finalize(napi_env /*env*/, void* data, void* /*hint*/) {
    auto* holder = static_cast<std::shared_ptr<Link>*>(data);
    {
      std::lock_guard<std::mutex> lock((*holder)->mu);
      (*holder)->alive = false;
    }
    delete holder;
  }

  // On the JavaScript thread (env null: the environment is being torn down; nothing to settle).
  static void CallJs(napi_env env, napi_value /*js_cb*/, void* /*context*/, void* data) {
    std::unique_ptr<CoreJob> job(static_cast<CoreJob*>(data));
    if (env == nullptr) return;
    CoreSlot& slot = *job->slot_;
    slot.busy = nullptr;
    if (slot.disposed) slot.core.reset();
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    napi_value value = nullptr;
    if (job->error_.empty()) {
      if (napi_create_double(env, job->result_, &value) == napi_ok) napi_resolve_deferred(env, job->deferred_, value);
    } else {
      napi_value msg = nullptr;
      if (napi_create_string_utf8(env, job->error_.c_str(), job->error_.size(), &msg) == napi_ok &&
          napi_create_error(env, nullptr, msg, &value) == napi_ok) {
        napi_reject_deferred(env, job->deferred_, value);
      }
    }
    napi_close_handle_scope(env, scope);
  }

  std::shared_ptr<CoreSlot> slot_;
  GeneratorCore* core_;
  const char* what_;
  FloatBuffer z_;
  int64_t n_;
  bool train_;
  double lr_;
  double result_ = 0.0;
  std::string error_;
  std::shared_ptr<Link> link_ = std::make_shared<Link>();
  napi_threadsafe_function tsfn_ = nullptr;
  napi_deferred deferred_ = nullptr;
};

class GeneratorCoreWrap : public Napi::ObjectWrap<GeneratorCoreWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "GeneratorCore",
                       {
                           InstanceMethod<&GeneratorCoreWrap::ParamCount>("paramCount"),
                           InstanceMethod<&GeneratorCoreWrap::ParamNames>("paramNames"),
                           InstanceMethod<&GeneratorCoreWrap::SetParams>("setParams"),
                           InstanceMethod<&GeneratorCoreWrap::GetParams>("getParams"),
                           InstanceMethod<&GeneratorCoreWrap::SetAdamState>("setAdamState"),
                           InstanceMethod<&GeneratorCoreWrap::GetAdamState>("getAdamState"),
                           InstanceMethod<&GeneratorCoreWrap::SetTargets>("setTargets"),
                           InstanceMethod<&GeneratorCoreWrap::SetEntropyPenalty>("setEntropyPenalty"),
                           InstanceMethod<&GeneratorCoreWrap::LossAndGrads>("lossAndGrads"),
                           InstanceMethod<&GeneratorCoreWrap::TrainStep>("trainStep"),
                           InstanceMethod<&GeneratorCoreWrap::TrainStepAsync>("trainStepAsync"),
                           InstanceMethod<&GeneratorCoreWrap::EvalLoss>("evalLoss"),
                           InstanceMethod<&GeneratorCoreWrap::EvalLossAsync>("evalLossAsync"),
                           InstanceMethod<&GeneratorCoreWrap::Busy>("busy"),
                           InstanceMethod<&GeneratorCoreWrap::Logits>("logits"),
                           InstanceMethod<&GeneratorCoreWrap::Generate>("generate"),
                           InstanceMethod<&GeneratorCoreWrap::Trim>("trim"),
                           InstanceMethod<&GeneratorCoreWrap::Device>("device"),
                           InstanceMethod<&GeneratorCoreWrap::Dispose>("dispose"),
                       });
  }

  // new GeneratorCore(embeddingDim, hidden, blocks, cardinalities, options?: {device?: "cpu" | "gpu",
  // tf32?: boolean}); device "gpu" throws Error with the reason when no CUDA GPU can be used.
  explicit GeneratorCoreWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<GeneratorCoreWrap>(info) {
    Napi::Env env = info.Env();
    Guard(env, "GeneratorCore", [&] {
      CoreSpec s;
      s.E = static_cast<int64_t>(ReadInteger(env, info[0], "embeddingDim", 1, 65536));
      s.H = static_cast<int64_t>(ReadInteger(env, info[1], "hidden", 1, 65536));
      s.L = static_cast<int64_t>(ReadInteger(env, info[2], "blocks", 0, 256));
      s.card = napi_checks::ReadCardinalities(env, info[3]);
      if (s.card.empty()) ThrowRange(env, "cardinalities must name at least one feature");
      s.F = static_cast<int64_t>(s.card.size());
      s.off.assign(1, 0);
      for (int32_t k : s.card) {
        if (s.off.back() > kMaxParams) ThrowRange(env, "cardinalities sum to too many codes");
        s.off.push_back(s.off.back() + k);
      }
      s.D = s.off.back();
      ParamIndex idx;
      if (!MakeParamIndex(s, kMaxParams, &idx)) {
        ThrowRange(env, "the generator would have more than 2^30 parameters");
      }
      std::string device = "cpu";
      bool tf32 = false;
      if (info.Length() > 4 && !info[4].IsUndefined()) {
        if (!info[4].IsObject()) ThrowType(env, "options must be an object {device?, tf32?}");
        Napi::Object o = info[4].As<Napi::Object>();
        Napi::Value d = o.Get("device");
        if (!d.IsUndefined()) {
          if (!d.IsString()) ThrowType(env, "options.device must be \"cpu\" or \"gpu\"");
          device = d.As<Napi::String>().Utf8Value();
          if (device != "cpu" && device != "gpu") {
            ThrowRange(env, "options.device must be \"cpu\" or \"gpu\", got \"" + device + "\"");
          }
        }
        Napi::Value t = o.Get("tf32");
        if (!t.IsUndefined()) {
          if (!t.IsBoolean()) ThrowType(env, "options.tf32 must be a boolean");
          tf32 = t.As<Napi::Boolean>().Value();
        }
      }
      std::unique_ptr<GeneratorCore> core(new GeneratorCore(std::move(s), std::move(idx)));
      if (device == "gpu") {
        try {
          core->UseGpu(tf32);
        } catch (const std::runtime_error& e) {
          throw Napi::Error::New(env, std::string("GeneratorCore: device \"gpu\" is unavailable: ") + e.what());
        }
      }
      slot_->core = std::move(core);
    });
  }

 private:
  // Shared with an in-flight CoreJob (see the file comment).
  std::shared_ptr<CoreSlot> slot_ = std::make_shared<CoreSlot>();

  // Runs fn, turning C++ exceptions into JavaScript errors prefixed with the method name.
  template <typename Fn>
  static auto Guard(Napi::Env env, const char* what, const Fn& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const Napi::Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw Napi::Error::New(env, std::string(what) + ": out of memory");
    } catch (const std::exception& e) {
      throw Napi::Error::New(env, std::string(what) + ": " + e.what());
    }
  }

  // The core, for a call that uses it now. Throws Error when disposed (also while a disposed
  // core's last asynchronous call finishes) or while an asynchronous call is in flight.
  GeneratorCore& Core(Napi::Env env) {
    if (slot_->disposed || !slot_->core) throw Napi::Error::New(env, "GeneratorCore is disposed");
    if (slot_->busy != nullptr) {
      throw Napi::Error::New(env, std::string("GeneratorCore is busy: ") + slot_->busy +
                                      " is in flight (await its promise before calling another method)");
    }
    return *slot_->core;
  }

  // Name of the parameter holding flat index i, with the index inside it.
  std::string ParamAt(size_t i) {
    for (const auto& [name, size] : slot_->core->index().names) {
      if (i < static_cast<size_t>(size)) return name + "[" + std::to_string(i) + "]";
      i -= static_cast<size_t>(size);
    }
    return "?";
  }

  // Checks a flat parameter-sized array (finite; nonneg for Adam's v).
  Napi::Float32Array ReadParamArray(Napi::Env env, const Napi::Value& v, const std::string& name, bool nonneg) {
    GeneratorCore& c = Core(env);
    Napi::Float32Array a =
        ReadF32(env, v, name, static_cast<size_t>(c.param_count()), "paramCount()");
    const size_t bad = FirstBad(a.Data(), a.ElementLength(), nonneg);
    if (bad != a.ElementLength()) {
      ThrowRange(env, name + "[" + std::to_string(bad) + "] = " + JsString(env, a[bad]) +
                          (nonneg ? " must be finite and >= 0 (" : " is not finite (") + ParamAt(bad) + ")");
    }
    return a;
  }

  // Latents: Float32Array of n * embeddingDim finite values.
  // check = false: the values are checked later, on the GPU (generation of many rows).
  const float* ReadLatents(Napi::Env env, const Napi::Value& v, int64_t n, bool check = true) {
    GeneratorCore& c = Core(env);
    int64_t want = 0;
    if (__builtin_mul_overflow(n, c.spec().E, &want)) ThrowRange(env, "n * embeddingDim overflows");
    Napi::Float32Array z = ReadF32(env, v, "z", static_cast<size_t>(want), "n * embeddingDim");
    const size_t bad = check ? FirstBad(z.Data(), z.ElementLength(), false) : z.ElementLength();
    if (bad != z.ElementLength()) ThrowBadLatent(env, z.Data(), bad);
    return z.Data();
  }

  void ThrowBadLatent(Napi::Env env, const float* z, size_t bad) {
    ThrowRange(env, "z[" + std::to_string(bad) + "] = " + JsString(env, z[bad]) + " is not finite (row " +
                        std::to_string(bad / static_cast<size_t>(Core(env).spec().E)) + ")");
  }

  // A bad input reported by the GPU (GeneratorCore::GenerateGpu): the same errors as the host checks.
  void ThrowBadInput(Napi::Env env, int64_t bad, const float* z, int64_t n, const double* u) {
    const int64_t nE = n * Core(env).spec().E;
    if (bad < nE) ThrowBadLatent(env, z, static_cast<size_t>(bad));
    const size_t i = static_cast<size_t>(bad - nE);
    ThrowRange(env, "uniforms[" + std::to_string(i) + "] = " + JsString(env, u[i]) + " is outside [0, 1)");
  }

  void RequireTargets(Napi::Env env) {
    if (!Core(env).has_targets()) throw Napi::Error::New(env, "targets are not set (call setTargets first)");
  }

  Napi::Value ParamCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(Core(info.Env()).param_count()));
  }

  // paramNames(): [name, size][] in the flat order.
  Napi::Value ParamNames(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto& names = Core(env).index().names;
    Napi::Array out = Napi::Array::New(env, names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      Napi::Array pair = Napi::Array::New(env, 2);
      pair.Set(0u, Napi::String::New(env, names[i].first));
      pair.Set(1u, Napi::Number::New(env, static_cast<double>(names[i].second)));
      out.Set(static_cast<uint32_t>(i), pair);
    }
    return out;
  }

  // setParams(flat: Float32Array)
  Napi::Value SetParams(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Napi::Float32Array a = ReadParamArray(env, info[0], "params", false);
    GeneratorCore& c = Core(env);
    std::copy(a.Data(), a.Data() + a.ElementLength(), c.params());
    c.ParamsChanged();
    return env.Undefined();
  }

  // An optional output array argument: a Float32Array of paramCount() values, or undefined (then
  // a fresh one). Reusing one saves the allocation (and its page faults: tens of MB per copy for
  // the large model, on the engine worker's JavaScript thread).
  Napi::Float32Array OutArray(Napi::Env env, const Napi::CallbackInfo& info, size_t i, const char* name) {
    const size_t P = static_cast<size_t>(Core(env).param_count());
    if (info.Length() > i && !info[i].IsUndefined()) return ReadF32(env, info[i], name, P, "paramCount()");
    return Napi::Float32Array::New(env, P);
  }

  // getParams(out?): the parameters, copied into out (returned) or a fresh array
  Napi::Value GetParams(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    GeneratorCore& c = Core(env);
    return Guard(env, "getParams", [&] {
      Napi::Float32Array out = OutArray(env, info, 0, "out");
      std::copy(c.params(), c.params() + c.param_count(), out.Data());
      return out;
    });
  }

  // setAdamState(t, m, v)
  Napi::Value SetAdamState(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const double t = ReadInteger(env, info[0], "t", 0, napi_checks::kMaxSafeInteger);
    Napi::Float32Array m = ReadParamArray(env, info[1], "m", false);
    Napi::Float32Array v = ReadParamArray(env, info[2], "v", true);
    GeneratorCore& c = Core(env);
    std::copy(m.Data(), m.Data() + m.ElementLength(), c.adam_m());
    std::copy(v.Data(), v.Data() + v.ElementLength(), c.adam_v());
    c.set_adam_t(static_cast<int64_t>(t));
    return env.Undefined();
  }

  // getAdamState(m?, v?): { t, m, v }, the moments copied into m and v when given
  Napi::Value GetAdamState(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    GeneratorCore& c = Core(env);
    return Guard(env, "getAdamState", [&] {
      const size_t P = static_cast<size_t>(c.param_count());
      Napi::Float32Array m = OutArray(env, info, 0, "m");
      Napi::Float32Array v = OutArray(env, info, 1, "v");
      if (m.Data() < v.Data() + P && v.Data() < m.Data() + P) ThrowRange(env, "m and v must not overlap");
      std::copy(c.adam_m(), c.adam_m() + P, m.Data());
      std::copy(c.adam_v(), c.adam_v() + P, v.Data());
      Napi::Object out = Napi::Object::New(env);
      out.Set("t", Napi::Number::New(env, static_cast<double>(c.adam_t())));
      out.Set("m", m);
      out.Set("v", v);
      return out;
    });
  }

  // setEntropyPenalty(alpha: number >= 0): the weight of the entropy penalty (generator_core.h).
  Napi::Value SetEntropyPenalty(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    GeneratorCore& c = Core(env);
    const double alpha = ReadFinite(env, info[0], "alpha");
    if (alpha < 0) ThrowRange(env, "alpha must be >= 0, got " + JsString(env, alpha));
    c.SetEntropyPenalty(alpha);
    return env.Undefined();
  }

  // setTargets(oneWay: Float32Array(D), blocks: {f, c0, c1, target}[], count, negEntropy, mode?): the mode used
  Napi::Value SetTargets(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    GeneratorCore& c = Core(env);
    const CoreSpec& s = c.spec();
    Napi::Float32Array q1 = ReadF32(env, info[0], "oneWay", static_cast<size_t>(s.D), "D (sum of cardinalities)");
    size_t bad = FirstBad(q1.Data(), q1.ElementLength(), true);
    if (bad != q1.ElementLength()) {
      ThrowRange(env, "oneWay[" + std::to_string(bad) + "] = " + JsString(env, q1[bad]) + " must be finite and >= 0");
    }
    if (!info[1].IsArray()) ThrowType(env, "blocks must be an array");
    Napi::Array arr = info[1].As<Napi::Array>();
    std::vector<PairBlockTarget> blocks;
    blocks.reserve(arr.Length());
    // Feature index of an offset, or -1 when it is not a feature boundary.
    const auto feature_at = [&](int64_t col) -> int64_t {
      for (int64_t g = 0; g <= s.F; ++g)
        if (s.off[static_cast<size_t>(g)] == col) return g;
      return -1;
    };
    for (uint32_t i = 0; i < arr.Length(); ++i) {
      const std::string at = "blocks[" + std::to_string(i) + "]";
      Napi::Value bv = arr.Get(i);
      if (!bv.IsObject()) ThrowType(env, at + " must be an object {f, c0, c1, target}");
      Napi::Object b = bv.As<Napi::Object>();
      PairBlockTarget t;
      t.f = static_cast<int32_t>(ReadInteger(env, b.Get("f"), (at + ".f").c_str(), 0, static_cast<double>(s.F - 1)));
      t.c0 = static_cast<int64_t>(ReadInteger(env, b.Get("c0"), (at + ".c0").c_str(), 0, static_cast<double>(s.D)));
      t.c1 = static_cast<int64_t>(ReadInteger(env, b.Get("c1"), (at + ".c1").c_str(), 0, static_cast<double>(s.D)));
      const int64_t g0 = feature_at(t.c0);
      const int64_t g1 = feature_at(t.c1);
      if (g0 < 0 || g1 < 0 || g0 <= t.f || g1 <= g0) {
        ThrowRange(env, at + ": [c0, c1) = [" + std::to_string(t.c0) + ", " + std::to_string(t.c1) +
                            ") must span whole features after feature f = " + std::to_string(t.f));
      }
      const size_t kf = static_cast<size_t>(s.card[static_cast<size_t>(t.f)]);
      const size_t size = kf * static_cast<size_t>(t.c1 - t.c0);
      Napi::Float32Array q = ReadF32(env, b.Get("target"), at + ".target", size, "K_f * (c1 - c0)");
      bad = FirstBad(q.Data(), q.ElementLength(), true);
      if (bad != q.ElementLength()) {
        ThrowRange(env, at + ".target[" + std::to_string(bad) + "] = " + JsString(env, q[bad]) +
                            " must be finite and >= 0");
      }
      Guard(env, "setTargets", [&] {
        t.target.Resize(size);
        std::copy(q.Data(), q.Data() + size, t.target.data());
      });
      blocks.push_back(std::move(t));
    }
    if (!info[2].IsNumber()) ThrowType(env, "count must be a number");
    const double count = info[2].As<Napi::Number>().DoubleValue();
    if (!(std::isfinite(count) && count > 0)) ThrowRange(env, "count must be finite and > 0, got " + JsString(env, count));
    const double neg_entropy = ReadFinite(env, info[3], "negEntropy");
    GeneratorCore::PairMode mode = GeneratorCore::PairMode::kAuto;
    if (info.Length() > 4 && !info[4].IsUndefined()) {
      if (!info[4].IsString()) ThrowType(env, "mode must be \"auto\", \"dense\" or \"blocks\"");
      const std::string m = info[4].As<Napi::String>().Utf8Value();
      if (m == "dense") mode = GeneratorCore::PairMode::kDense;
      else if (m == "blocks") mode = GeneratorCore::PairMode::kBlocks;
      else if (m != "auto") ThrowRange(env, "mode must be \"auto\", \"dense\" or \"blocks\", got \"" + m + "\"");
    }
    return Guard(env, "setTargets", [&] {
      FloatBuffer one(static_cast<size_t>(s.D));
      std::copy(q1.Data(), q1.Data() + s.D, one.data());
      c.SetTargets(std::move(one), std::move(blocks), count, neg_entropy, mode);
      return Napi::String::New(env, c.pair_mode() == GeneratorCore::PairMode::kDense ? "dense" : "blocks");
    });
  }

  // lossAndGrads(z, n): { loss, grads }
  Napi::Value LossAndGrads(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const float* z = ReadLatents(env, info[0], n);
    RequireTargets(env);
    GeneratorCore& c = Core(env);
    return Guard(env, "lossAndGrads", [&] {
      Napi::Float32Array g = Napi::Float32Array::New(env, static_cast<size_t>(c.param_count()));
      const double loss = c.LossAndGrad(z, n, g.Data());
      Napi::Object out = Napi::Object::New(env);
      out.Set("loss", Napi::Number::New(env, loss));
      out.Set("grads", g);
      return out;
    });
  }

  // trainStep(z, n, lr): loss (NaN when not finite; then nothing was updated)
  Napi::Value TrainStep(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const float* z = ReadLatents(env, info[0], n);
    const double lr = ReadLearningRate(env, info[2]);
    RequireTargets(env);
    GeneratorCore& c = Core(env);
    return Guard(env, "trainStep", [&] { return Napi::Number::New(env, c.TrainStep(z, n, lr)); });
  }

  // Checks (z, n[, lr]) as trainStep / evalLoss do, copies z and starts a CoreJob.
  Napi::Value StartJob(const Napi::CallbackInfo& info, const char* what, bool train) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const float* z = ReadLatents(env, info[0], n);
    const double lr = train ? ReadLearningRate(env, info[2]) : 0.0;
    RequireTargets(env);
    const int64_t E = Core(env).spec().E;
    return Guard(env, what, [&]() -> Napi::Value {
      FloatBuffer copy(static_cast<size_t>(n * E));
      std::copy(z, z + n * E, copy.data());
      return CoreJob::Start(env, slot_, what, std::move(copy), n, train, lr);
    });
  }

  // trainStepAsync(z, n, lr): Promise<loss>, trainStep on a background thread (see the file comment)
  Napi::Value TrainStepAsync(const Napi::CallbackInfo& info) { return StartJob(info, "trainStepAsync", true); }

  // evalLossAsync(z, n): Promise<loss>, evalLoss on a background thread
  Napi::Value EvalLossAsync(const Napi::CallbackInfo& info) { return StartJob(info, "evalLossAsync", false); }

  // busy(): the asynchronous method in flight, or null (also after dispose)
  Napi::Value Busy(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (slot_->busy == nullptr) return env.Null();
    return Napi::String::New(env, slot_->busy);
  }

  // evalLoss(z, n): loss over all n rows
  Napi::Value EvalLoss(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const float* z = ReadLatents(env, info[0], n);
    RequireTargets(env);
    GeneratorCore& c = Core(env);
    return Guard(env, "evalLoss", [&] { return Napi::Number::New(env, c.EvalLoss(z, n)); });
  }

  // logits(z, n): Float32Array (n x D)
  Napi::Value Logits(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const bool gpu = Core(env).on_gpu();
    const float* z = ReadLatents(env, info[0], n, !gpu);
    GeneratorCore& c = Core(env);
    int64_t bad = -1;
    Napi::Value result = Guard(env, "logits", [&]() -> Napi::Value {
      int64_t size = 0;
      if (__builtin_mul_overflow(n, c.spec().D, &size)) throw std::bad_alloc();
      Napi::Float32Array out = Napi::Float32Array::New(env, static_cast<size_t>(size));
      if (gpu) {
        c.GenerateGpu(z, n, nullptr, 1.0, false, 1.0, nullptr, out.Data(), &bad);
      } else {
        c.Logits(z, n, out.Data());
      }
      return out;
    });
    if (bad >= 0) ThrowBadInput(env, bad, z, n, nullptr);
    return result;
  }

  // generate(z, n, uniforms: Float64Array(n x F), temperature, topP, logitsOut?: Float32Array(n x D),
  //          extraUniforms?: Float64Array(k x n x F), codesOut?: Int32Array((1 + k) x F x n)):
  // Int32Array (F x n, column-major); logitsOut, when given, receives the logits of the same pass.
  // With extraUniforms (k >= 1 sets, CPU only), each latent gives k more rows from the same
  // distributions (GeneratorCore::Generate): the result is (1 + k) x F x n, set j's codes after
  // those of set j - 1. codesOut, when given, receives the codes and is returned (no new array:
  // a caller generating in chunks reuses one, issue 25), else a new array is.
  Napi::Value Generate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const int64_t n = ReadRows(env, info[1]);
    const bool gpu = Core(env).on_gpu();
    const float* z = ReadLatents(env, info[0], n, !gpu);
    GeneratorCore& c = Core(env);
    const CoreSpec& s = c.spec();
    if (!IsTypedArrayOf(info[2], napi_float64_array)) ThrowType(env, "uniforms must be a Float64Array");
    Napi::Float64Array u = info[2].As<Napi::Float64Array>();
    int64_t nF = 0;
    if (__builtin_mul_overflow(n, s.F, &nF) || u.ElementLength() != static_cast<size_t>(nF)) {
      ThrowRange(env, "uniforms has " + std::to_string(u.ElementLength()) + " values, expected n*F = " +
                          JsString(env, static_cast<double>(n) * static_cast<double>(s.F)));
    }
    for (size_t i = 0; !gpu && i < u.ElementLength(); ++i) {
      if (!(u[i] >= 0.0 && u[i] < 1.0)) {
        ThrowRange(env, "uniforms[" + std::to_string(i) + "] = " + JsString(env, u[i]) + " is outside [0, 1)");
      }
    }
    const double temperature = ReadTemperature(env, info[3]);
    const TopP topP = ReadTopP(env, info[4]);
    const double top_p = topP.value;
    const bool has_top_p = topP.given;
    float* logits_out = nullptr;
    if (info.Length() > 5 && !info[5].IsUndefined()) {
      if (!IsTypedArrayOf(info[5], napi_float32_array)) ThrowType(env, "logitsOut must be a Float32Array");
      Napi::Float32Array lo = info[5].As<Napi::Float32Array>();
      int64_t nD = 0;
      if (__builtin_mul_overflow(n, s.D, &nD) || lo.ElementLength() != static_cast<size_t>(nD)) {
        ThrowRange(env, "logitsOut has " + std::to_string(lo.ElementLength()) + " values, expected n*D = " +
                            JsString(env, static_cast<double>(n) * static_cast<double>(s.D)));
      }
      logits_out = lo.Data();
    }
    size_t extra = 0;
    const double* extra_u = nullptr;
    if (info.Length() > 6 && !info[6].IsUndefined()) {
      if (!IsTypedArrayOf(info[6], napi_float64_array)) ThrowType(env, "extraUniforms must be a Float64Array");
      if (gpu) ThrowRange(env, "extraUniforms: several rows per latent are not implemented on the GPU");
      Napi::Float64Array eu = info[6].As<Napi::Float64Array>();
      const size_t len = eu.ElementLength();
      if (len == 0 || len % static_cast<size_t>(nF) != 0) {
        ThrowRange(env, "extraUniforms has " + std::to_string(len) + " values, not a positive multiple of n*F = " +
                            std::to_string(nF));
      }
      for (size_t i = 0; i < len; ++i) {
        if (!(eu[i] >= 0.0 && eu[i] < 1.0)) {
          ThrowRange(env, "extraUniforms[" + std::to_string(i) + "] = " + JsString(env, eu[i]) + " is outside [0, 1)");
        }
      }
      extra = len / static_cast<size_t>(nF);
      extra_u = eu.Data();
    }
    const size_t n_codes = static_cast<size_t>(nF) * (1 + extra);
    Napi::Int32Array given;
    if (info.Length() > 7 && !info[7].IsUndefined()) {
      if (!IsTypedArrayOf(info[7], napi_int32_array)) ThrowType(env, "codesOut must be an Int32Array");
      given = info[7].As<Napi::Int32Array>();
      if (given.ElementLength() != n_codes) {
        ThrowRange(env, "codesOut has " + std::to_string(given.ElementLength()) + " values, expected (1 + k)*n*F = " +
                            std::to_string(n_codes));
      }
    }
    return Guard(env, "generate", [&]() -> Napi::Value {
      Napi::Int32Array out = given.IsEmpty() ? Napi::Int32Array::New(env, n_codes) : given;
      int64_t bad = -1;
      const SampleError err =
          gpu ? c.GenerateGpu(z, n, u.Data(), temperature, has_top_p && top_p < 1.0, top_p, out.Data(), logits_out,
                              &bad)
              : c.Generate(z, n, u.Data(), temperature, has_top_p && top_p < 1.0, top_p, out.Data(), logits_out, extra,
                           extra_u);
      if (bad >= 0) ThrowBadInput(env, bad, z, n, u.Data());
      if (err.failed()) {
        const size_t D = static_cast<size_t>(s.D);
        const std::string where = "logits[" + std::to_string(err.index) + "] (row " + std::to_string(err.index / D) + ")";
        if (err.kind == SampleError::Kind::kNonFinite) {
          ThrowLogits(env, "generate: " + where + " = " + JsString(env, err.value) + " is not finite");
        }
        ThrowLogits(env, "generate: " + where + " / temperature overflows (logit " + JsString(env, err.value) +
                             ", temperature " + JsString(env, temperature) + ")");
      }
      return out;
    });
  }

  // trim(): frees the training / generation buffers and Adam's moments (kept: weights, targets).
  Napi::Value Trim(const Napi::CallbackInfo& info) {
    Core(info.Env()).ReleaseWorkspace();
    return info.Env().Undefined();
  }

  // device(): "cpu", or the GPU's name (e.g. "NVIDIA H200") when the core runs there
  Napi::Value Device(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), Core(info.Env()).device_name());
  }

  // dispose(): frees the weights and buffers now, or when the asynchronous call in flight ends
  // (later calls throw either way). Idempotent.
  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    slot_->disposed = true;
    if (slot_->busy == nullptr) slot_->core.reset();
    return info.Env().Undefined();
  }
};

// learningRate(peak, totalSteps, warmupSteps, floorFraction, step): number (schedule.ts)
Napi::Value LearningRateJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const double peak = ReadFinite(env, info[0], "peak");
  const double total = ReadFinite(env, info[1], "totalSteps");
  const double warmup = ReadFinite(env, info[2], "warmupSteps");
  const double floor_fraction = ReadFinite(env, info[3], "floorFraction");
  const double step = ReadFinite(env, info[4], "step");
  if (!(warmup > 0)) ThrowRange(env, "warmupSteps must be > 0, got " + JsString(env, warmup));
  return Napi::Number::New(env, LearningRate(peak, total, warmup, floor_fraction, step));
}

// computeInfo(): { isa, detectedIsa, kernel, threads }
Napi::Value ComputeInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const KernelInfo& k = ActiveKernel();
  Napi::Object out = Napi::Object::New(env);
  out.Set("isa", Napi::String::New(env, IsaName(k.isa)));
  out.Set("detectedIsa", Napi::String::New(env, IsaName(DetectIsa())));
  out.Set("kernel", Napi::String::New(env, std::to_string(k.mr) + "x" + std::to_string(k.nr)));
  out.Set("threads", Napi::Number::New(env, ThreadPool::Instance().Concurrency()));
  return out;
}

// gpuInfo(): { available, device?, devices, reason?, library }: whether the CUDA core loaded and a
// GPU answered (gpu_loader.h). Loads the library on the first call.
Napi::Value GpuInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const gpu::GpuStatus& st = gpu::LoadGpu();
  Napi::Object out = Napi::Object::New(env);
  out.Set("available", Napi::Boolean::New(env, st.api != nullptr));
  if (st.api != nullptr) out.Set("device", Napi::String::New(env, st.device));
  out.Set("devices", Napi::Number::New(env, st.devices));
  if (st.api == nullptr) out.Set("reason", Napi::String::New(env, st.reason));
  out.Set("library", Napi::String::New(env, st.library));
  return out;
}

}  // namespace

void RegisterCoreBindings(Napi::Env env, Napi::Object exports) {
  exports.Set("gpuInfo", Napi::Function::New(env, GpuInfo, "gpuInfo"));
  exports.Set("GeneratorCore", GeneratorCoreWrap::Define(env));
  exports.Set("learningRate", Napi::Function::New(env, LearningRateJs, "learningRate"));
  exports.Set("computeInfo", Napi::Function::New(env, ComputeInfo, "computeInfo"));
}

}  // namespace train
}  // namespace synthd
