// Cross-file C++ summaries (tests/cxx/run.sh cxx-15): classes declared here, their methods defined in
// src/storage.cpp and src/stats.cpp, called each step from loops in src/agent.cpp and src/fit.cpp.
#pragma once
#include <torch/torch.h>
#include <vector>

namespace agent {

// keeps what it is given: every step's tensors
class EpisodeStorage {
 public:
  void record(const torch::Tensor& value, const torch::Tensor& log_prob, float reward);
  void reset();
  int64_t size() const;

 private:
  std::vector<torch::Tensor> values_;
  std::vector<torch::Tensor> log_probs_;
  std::vector<float> rewards_;
};

// keeps only detached copies, or starts again on every call
class SafeStorage {
 public:
  void record(const torch::Tensor& value);
  void latest(const torch::Tensor& value);

 private:
  std::vector<torch::Tensor> kept_;
  std::vector<torch::Tensor> last_;
};

}  // namespace agent
