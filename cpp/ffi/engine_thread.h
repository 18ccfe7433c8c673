// The one thread on which the CPU handler runs every solve and setup.
//
// An OpenMP thread team belongs to the thread that starts it, and XLA runs a
// program's custom calls on whichever thread executes the program: the
// caller's, or one of its worker threads, differently from one program to
// the next (a jitted gradient's forward and adjoint solves can land on two
// threads). A team per calling thread leaves libgomp with more threads than
// cores, so it stops spinning and every later parallel region pays a futex
// sleep and wake-up (a jitted 10^4 CG solve took 0.7 ms before and 2.3 ms
// after, for the rest of the process); letting only the first caller use
// the team instead left the other threads' solves on one core (a gradient's
// adjoint ran 2x slower on two cores). Handing every call to one engine
// thread keeps one team and gives every solve all of it.
#pragma once
#include <pthread.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace jaxamg::ffi_handlers {

class EngineThread {
 public:
  // Runs `task` on the engine thread and returns when it has finished.
  // Calls from several threads run one after another. `task` must not
  // throw (the handlers turn errors into ffi::Error themselves).
  static void run(const std::function<void()>& task) { instance().run_task(task); }

 private:
  EngineThread() {
    std::thread worker([this] { loop(); });
    id_ = worker.get_id();
    worker.detach();  // lives until the process exits; never joined
  }

  // Created on first use and never destroyed (its thread may still wait on
  // it while the process exits). A forked child has no engine thread, so
  // fork drops the instance and the child makes its own.
  static EngineThread& instance() {
    static const bool registered = [] {
      pthread_atfork(nullptr, nullptr, [] { current() = nullptr; });
      return true;
    }();
    (void)registered;
    static std::mutex create;
    std::lock_guard<std::mutex> lock(create);
    if (!current()) current() = new EngineThread;
    return *current();
  }
  static EngineThread*& current() {
    static EngineThread* p = nullptr;
    return p;
  }

  void run_task(const std::function<void()>& task) {
    if (std::this_thread::get_id() == id_) {
      task();
      return;
    }
    std::lock_guard<std::mutex> one_at_a_time(call_);
    std::unique_lock<std::mutex> lock(m_);
    task_ = &task;
    done_ = false;
    wake_.notify_one();
    finished_.wait(lock, [this] { return done_; });
  }

  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      wake_.wait(lock, [this] { return task_ != nullptr; });
      const std::function<void()>* task = task_;
      lock.unlock();
      try {
        (*task)();
      } catch (...) {
        // Not expected (see run); the caller must still be released.
      }
      lock.lock();
      task_ = nullptr;
      done_ = true;
      finished_.notify_one();
    }
  }

  std::mutex call_, m_;
  std::condition_variable wake_, finished_;
  const std::function<void()>* task_ = nullptr;
  bool done_ = false;
  std::thread::id id_;
};

}  // namespace jaxamg::ffi_handlers
