#include <torch/torch.h>
#include "storage.h"

struct ActorImpl : torch::nn::Module {
  ActorImpl() { head = register_module("head", torch::nn::Linear(8, 4)); }
  torch::Tensor forward(torch::Tensor obs) { return head(obs); }
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Actor);

// an environment step loop without NoGradGuard: the storage keeps every step's graph
void collect(Actor actor, agent::EpisodeStorage& storage, int steps) {
  torch::Tensor obs = torch::randn({8});
  for (int t = 0; t < steps; ++t) {
    torch::Tensor logits = actor->forward(obs);
    torch::Tensor logp = torch::log_softmax(logits, -1);
    storage.record(logits, logp, 1.0f);  // expect: GL102
    obs = torch::randn({8});
  }
}

// the same loop under NoGradGuard: nothing it stores carries a graph
void collect_guarded(Actor actor, agent::EpisodeStorage& storage, int steps) {
  torch::NoGradGuard no_grad;
  torch::Tensor obs = torch::randn({8});
  for (int t = 0; t < steps; ++t) {
    torch::Tensor logits = actor->forward(obs);
    storage.record(logits, torch::log_softmax(logits, -1), 1.0f);  // ok: NoGradGuard
    obs = torch::randn({8});
  }
}

// a storage that detaches what it keeps, or keeps only the latest value
void collect_safe(Actor actor, agent::SafeStorage& safe, int steps) {
  torch::Tensor obs = torch::randn({8});
  for (int t = 0; t < steps; ++t) {
    torch::Tensor logits = actor->forward(obs);
    safe.record(logits);  // ok: SafeStorage::record stores value.detach()
    safe.latest(logits);  // ok: SafeStorage::latest starts its vector again
    obs = logits.detach();
  }
}
