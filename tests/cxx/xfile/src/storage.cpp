#include "storage.h"

namespace agent {

void EpisodeStorage::record(const torch::Tensor& value, const torch::Tensor& log_prob, float reward) {
  values_.push_back(value);
  log_probs_.emplace_back(log_prob);
  rewards_.push_back(reward);
}

void EpisodeStorage::reset() {
  values_.clear();
  log_probs_.clear();
  rewards_.clear();
}

int64_t EpisodeStorage::size() const { return static_cast<int64_t>(rewards_.size()); }

void SafeStorage::record(const torch::Tensor& value) { kept_.push_back(value.detach()); }

void SafeStorage::latest(const torch::Tensor& value) {
  last_.clear();
  last_.push_back(value);
}

}  // namespace agent
